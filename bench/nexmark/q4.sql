-- Nexmark q4: Average price for a category: the average of the winning bid prices of the
-- auctions of each category. An unbounded join, an aggregation, and an
-- aggregation of its result: the output retracts (debezium-json).
-- Flink's text: flink/q4.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q4 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q4_out', format = 'debezium-json');

CREATE FLOW q4 INTO nexmark_q4 TRIGGER REALTIME AS
SELECT
    Q.category,
    AVG(Q.final)
FROM (
    SELECT MAX(B.price) AS final, A.category
    FROM auction A, bid B
    WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires
    GROUP BY A.id, A.category
) Q
GROUP BY Q.category;
