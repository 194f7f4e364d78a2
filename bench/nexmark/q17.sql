-- Nexmark q17: Auction statistics report: per auction and day, the bids at three price
-- levels and the price's min, max, average and sum. FILTER; one unbounded
-- aggregation (update mode). avg is a DOUBLE in rtsql (Flink's sink column is
-- a BIGINT).
-- Flink's text: flink/q17.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q17 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q17_out', format = 'json');

CREATE FLOW q17 INTO nexmark_q17 TRIGGER REALTIME AS
SELECT
     auction,
     DATE_FORMAT(date_time, 'yyyy-MM-dd') as `day`,
     count(*) AS total_bids,
     count(*) filter (where price < 10000) AS rank1_bids,
     count(*) filter (where price >= 10000 and price < 1000000) AS rank2_bids,
     count(*) filter (where price >= 1000000) AS rank3_bids,
     min(price) AS min_price,
     max(price) AS max_price,
     avg(price) AS avg_price,
     sum(price) AS sum_price
FROM bid
GROUP BY auction, DATE_FORMAT(date_time, 'yyyy-MM-dd');
