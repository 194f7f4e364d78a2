-- Nexmark q16: Channel statistics report: q15 per channel and day, with the last minute
-- seen (update mode).
-- Flink's text: flink/q16.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q16 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q16_out', format = 'json');

CREATE FLOW q16 INTO nexmark_q16 TRIGGER REALTIME AS
SELECT
    channel,
    DATE_FORMAT(date_time, 'yyyy-MM-dd') as `day`,
    max(DATE_FORMAT(date_time, 'HH:mm')) as `minute`,
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
GROUP BY channel, DATE_FORMAT(date_time, 'yyyy-MM-dd');
