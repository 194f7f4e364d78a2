-- Nexmark q3: Local item suggestion: who sells in OR, ID or CA in category 10, and which
-- auctions. An unbounded inner join of two streams.
-- Flink's text: flink/q3.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q3 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q3_out', format = 'json');

CREATE FLOW q3 INTO nexmark_q3 TRIGGER REALTIME AS
SELECT
    P.name, P.city, P.state, A.id
FROM
    auction AS A INNER JOIN person AS P on A.seller = P.id
WHERE
    A.category = 10 and (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA');
