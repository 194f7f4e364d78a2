-- Nexmark q13: Bounded side input join: each bid enriched from a static table of 10,000
-- rows on auction mod 10000. Flink's lookup join (FOR SYSTEM_TIME AS OF
-- PROCTIME()) is rtsql's broadcast join with a file table (taken when the
-- flow is planned). ${SIDE_INPUT} is a csv file "key,value" the runner
-- writes.
-- Flink's text: flink/q13.sql; the differences: docs/nexmark.md.
CREATE TABLE side_input (key BIGINT, `value` STRING)
    WITH (connector = 'file', path = '${SIDE_INPUT}', format = 'csv', header = 'true');
CREATE SINK nexmark_q13 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q13_out', format = 'json');

CREATE FLOW q13 INTO nexmark_q13 TRIGGER REALTIME AS
SELECT
    B.auction,
    B.bidder,
    B.price,
    B.date_time,
    S.`value`
FROM bid B
JOIN side_input S
ON mod(B.auction, 10000) = S.key;
