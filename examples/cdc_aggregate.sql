-- A CDC stream into an aggregate: Debezium captures the changes of an
-- `orders` table (inserts, updates, deletes) into the topic `orders_cdc`;
-- the flow keeps, for each customer, the count and total amount of the
-- orders that are not cancelled, as the table holds them now. Each change
-- moves the customer's row: an update takes the old order row out of its
-- customer's group and puts the new one in (a status becoming 'cancelled'
-- takes it out only), a delete takes it out. The sink `customer_totals` is an
-- upsert topic keyed by customer: each change of a customer's row is written
-- under its key, and a customer left without orders is a tombstone, so a
-- compacted topic (or any reader keeping each key's last record) holds the
-- current totals.
--
-- Debezium keys each change by the table's primary key, so the changes of one
-- order stay in order on one partition; the source needs them so.
--
--   rtsqld --embedded-kafka &
--   rtsql -f examples/cdc_aggregate.sql
CREATE SOURCE orders (
    order_id    STRING,
    customer_id STRING,
    amount      DOUBLE,
    status      STRING
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'orders_cdc',
    startingOffsets = 'earliest',
    format = 'debezium-json'
);

CREATE SINK customer_totals WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    topic = 'customer_totals',
    format = 'json',
    mode = 'upsert'
);

CREATE FLOW orders_per_customer INTO customer_totals AS
SELECT customer_id,
       count(*)    AS open_orders,
       sum(amount) AS total
FROM orders
WHERE status <> 'cancelled'
GROUP BY customer_id;
