-- Nexmark q1: Currency conversion: each bid's price from dollars to euros (a DOUBLE in
-- rtsql, a DECIMAL(23, 3) in Flink).
-- Flink's text: flink/q1.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q1 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q1_out', format = 'json');

CREATE FLOW q1 INTO nexmark_q1 TRIGGER REALTIME AS
SELECT
    auction,
    bidder,
    0.908 * price as price, -- convert dollar to euro
    date_time,
    extra
FROM bid;
