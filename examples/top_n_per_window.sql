-- Top-N per window: the three biggest sales of each minute. Sales arrive on
-- the topic `sales`; each minute (the sale's event time truncated to the
-- minute) keeps its three largest amounts, ranked. A sale that enters a
-- minute's top three pushes the third one out, so the output is a changelog:
-- the debezium-json sink `top_sales` writes each insert, rank change and
-- delete, and a consumer that applies them holds each minute's top three.
--
--   rtsqld --embedded-kafka &
--   rtsql -f examples/top_n_per_window.sql
CREATE SOURCE sales (
    sale_id STRING,
    store   STRING,
    amount  DOUBLE,
    ts      TIMESTAMP
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'sales',
    startingOffsets = 'earliest',
    format = 'json'
);

CREATE SINK top_sales WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    topic = 'top_sales',
    format = 'debezium-json'
);

CREATE FLOW top_sales_per_minute INTO top_sales AS
SELECT minute, sale_id, store, amount, rn
FROM (
    SELECT minute, sale_id, store, amount,
           ROW_NUMBER() OVER (PARTITION BY minute ORDER BY amount DESC) AS rn
    FROM (SELECT date_trunc('minute', ts) AS minute, sale_id, store, amount FROM sales)
)
WHERE rn <= 3;
