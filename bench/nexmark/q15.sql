-- Nexmark q15: Bidding statistics report: per day, the bids, distinct bidders and distinct
-- auctions at three price levels. count(DISTINCT) and FILTER; one
-- unbounded aggregation, so the sink gets the new row of each day (update
-- mode).
-- Flink's text: flink/q15.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q15 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q15_out', format = 'json');

CREATE FLOW q15 INTO nexmark_q15 TRIGGER REALTIME AS
SELECT
     DATE_FORMAT(date_time, 'yyyy-MM-dd') as `day`,
     count(*) AS total_bids,
     count(*) filter (where price < 10000) AS rank1_bids,
     count(*) filter (where price >= 10000 and price < 1000000) AS rank2_bids,
     count(*) filter (where price >= 1000000) AS rank3_bids,
     count(distinct bidder) AS total_bidders,
     count(distinct bidder) filter (where price < 10000) AS rank1_bidders,
     count(distinct bidder) filter (where price >= 10000 and price < 1000000) AS rank2_bidders,
     count(distinct bidder) filter (where price >= 1000000) AS rank3_bidders,
     count(distinct auction) AS total_auctions,
     count(distinct auction) filter (where price < 10000) AS rank1_auctions,
     count(distinct auction) filter (where price >= 10000 and price < 1000000) AS rank2_auctions,
     count(distinct auction) filter (where price >= 1000000) AS rank3_auctions
FROM bid
GROUP BY DATE_FORMAT(date_time, 'yyyy-MM-dd');
