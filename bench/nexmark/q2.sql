-- Nexmark q2: Selection: the bids on every 123rd auction.
-- Flink's text: flink/q2.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q2 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q2_out', format = 'json');

CREATE FLOW q2 INTO nexmark_q2 TRIGGER REALTIME AS
SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0;
