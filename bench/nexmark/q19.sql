-- Nexmark q19: Auction top-10 price: the 10 highest bids of each auction. ROW_NUMBER
-- top-N: the output retracts (debezium-json).
-- Flink's text: flink/q19.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q19 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q19_out', format = 'debezium-json');

CREATE FLOW q19 INTO nexmark_q19 TRIGGER REALTIME AS
SELECT * FROM
(SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number FROM bid) R
WHERE rank_number <= 10;
