-- Nexmark q9: Winning bids: the highest bid (the earliest of equal ones) of each auction
-- among the bids in its lifetime. An unbounded join and ROW_NUMBER top-1:
-- the output retracts (debezium-json).
-- Flink's text: flink/q9.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q9 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q9_out', format = 'debezium-json');

CREATE FLOW q9 INTO nexmark_q9 TRIGGER REALTIME AS
SELECT
    id, item_name, description, initial_bid, reserve, date_time, expires, seller, category, extra,
    auction, bidder, price, bid_dateTime, bid_extra
FROM (
   SELECT A.*, B.auction, B.bidder, B.price, B.date_time AS bid_dateTime, B.extra AS bid_extra,
     ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, B.date_time ASC) AS rownum
   FROM auction A, bid B
   WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires
) W
WHERE rownum <= 1;
