-- Nexmark q0: Pass through: every bid as it is (reading, decoding, encoding, writing).
-- Flink's text: flink/q0.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q0 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q0_out', format = 'json');

CREATE FLOW q0 INTO nexmark_q0 TRIGGER REALTIME AS
SELECT auction, bidder, price, date_time, extra FROM bid;
