CREATE SOURCE clicks (
    user_id  STRING,
    url      STRING,
    amount   DOUBLE,
    ts       TIMESTAMP,
    WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'sf_clicks_x1',
    startingOffsets = 'earliest',
    format = 'json'
);
CREATE SINK big_clicks WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    topic = 'sf_big_x1',
    format = 'json'
);
CREATE FLOW big_spenders INTO big_clicks
    TRIGGER REALTIME CHECKPOINT INTERVAL '10 seconds'
AS
SELECT user_id, upper(url) AS url, amount * 2 AS doubled
FROM clicks
WHERE amount > 10;
SHOW FLOWS;
CREATE SINK everything WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'sf_all_x1', format = 'json');
CREATE FLOW copy_all INTO everything AS
SELECT c.*, _partition AS p, _offset AS o FROM clicks c WHERE c.user_id IN ('alice', 'ivy');
CREATE SOURCE orders (
    id    BIGINT,
    info  STRUCT<country STRING, tags ARRAY<STRING>>,
    items ARRAY<STRUCT<sku STRING, qty INT>>,
    paid  BOOLEAN
) WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
        subscribe = 'sf_orders_x1', startingOffsets = 'earliest', format = 'json');
CREATE SINK order_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'sf_orders_out_x1', format = 'json');
CREATE FLOW shaped INTO order_out AS
SELECT o.id, o.country, o.first_tag, size(o.items) AS n,
       CASE WHEN o.paid THEN 'paid' ELSE 'open' END AS state,
       coalesce(o.items[0].sku, 'none') AS sku
FROM (SELECT id, info.country, info.tags[0] AS first_tag, items, paid
      FROM orders WHERE id BETWEEN 1 AND 100) o
WHERE o.country LIKE 'F%' OR o.country IS NULL;
DROP FLOW copy_all;
DROP FLOW shaped;
SHOW FLOWS;
