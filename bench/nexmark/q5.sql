-- Nexmark q5: Hot items: the auctions with the most bids in each sliding window of 10
-- seconds every 2 seconds. Flink's HOP window table function is rtsql's
-- window(date_time, '10 seconds', '2 seconds') with EMIT ON WINDOW CLOSE (a
-- window table function's aggregation emits each window once, final). The
-- maximum per window is a plain aggregation of those rows: the join's output
-- retracts (debezium-json).
-- Flink's text: flink/q5.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q5 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q5_out', format = 'debezium-json');

CREATE FLOW q5 INTO nexmark_q5 TRIGGER REALTIME AS
SELECT AuctionBids.auction, AuctionBids.num
 FROM (
   SELECT
     auction,
     count(*) AS num,
     window.start AS starttime,
     window.end AS endtime
     FROM bid
     GROUP BY auction, window(date_time, '10 seconds', '2 seconds')
     EMIT ON WINDOW CLOSE
 ) AS AuctionBids
 JOIN (
   SELECT
     max(CountBids.num) AS maxn,
     CountBids.starttime,
     CountBids.endtime
   FROM (
     SELECT
       count(*) AS num,
       window.start AS starttime,
       window.end AS endtime
     FROM bid
     GROUP BY auction, window(date_time, '10 seconds', '2 seconds')
     EMIT ON WINDOW CLOSE
     ) AS CountBids
   GROUP BY CountBids.starttime, CountBids.endtime
 ) AS MaxBids
 ON AuctionBids.starttime = MaxBids.starttime AND
    AuctionBids.endtime = MaxBids.endtime AND
    AuctionBids.num >= MaxBids.maxn;
