-- Nexmark q20: Expand bid with auction: the bids joined with their auction, for auctions
-- of category 10. An unbounded inner join of two streams.
-- Flink's text: flink/q20.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q20 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q20_out', format = 'json');

CREATE FLOW q20 INTO nexmark_q20 TRIGGER REALTIME AS
SELECT
    auction, bidder, price, channel, url, B.date_time AS bid_dateTime, B.extra AS bid_extra,
    item_name, description, initial_bid, reserve, A.date_time AS auction_dateTime, expires,
    seller, category, A.extra AS auction_extra
FROM
    bid AS B INNER JOIN auction AS A on B.auction = A.id
WHERE A.category = 10;
