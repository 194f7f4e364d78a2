-- Nexmark q18: Find last bid: the last bid of each bidder on each auction. ROW_NUMBER
-- top-1 (deduplication keeping the last row): the output retracts
-- (debezium-json).
-- Flink's text: flink/q18.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q18 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q18_out', format = 'debezium-json');

CREATE FLOW q18 INTO nexmark_q18 TRIGGER REALTIME AS
SELECT auction, bidder, price, channel, url, date_time, extra
 FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY date_time DESC) AS rank_number
       FROM bid) R
 WHERE rank_number <= 1;
