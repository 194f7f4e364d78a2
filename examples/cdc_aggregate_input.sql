-- Feeds cdc_aggregate.sql with an orders table's changes, keyed by order id
-- as Debezium keys them. INSERT INTO a debezium-json source writes creates
-- ("op": "c"); the updates and the delete are written as Debezium's
-- envelopes through a raw source on the same topic. Customer A ends with one
-- open order of 25 (o1 cancelled, o2 raised to 25); customer B's only order
-- is deleted, so B's key gets a tombstone.
--
--   rtsql -f examples/cdc_aggregate.sql && rtsql -f examples/cdc_aggregate_input.sql
INSERT INTO orders (order_id, customer_id, amount, status, _key) VALUES
    ('o1', 'A', 10.0, 'open', CAST('o1' AS BINARY)),
    ('o2', 'A', 20.0, 'open', CAST('o2' AS BINARY)),
    ('o3', 'B',  5.0, 'open', CAST('o3' AS BINARY));

CREATE SOURCE IF NOT EXISTS orders_cdc_raw WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'orders_cdc',
    format = 'raw'
);
INSERT INTO orders_cdc_raw (key, value) VALUES
    (CAST('o2' AS BINARY), CAST('{"before":{"order_id":"o2","customer_id":"A","amount":20.0,"status":"open"},"after":{"order_id":"o2","customer_id":"A","amount":25.0,"status":"open"},"op":"u"}' AS BINARY)),
    (CAST('o3' AS BINARY), CAST('{"before":{"order_id":"o3","customer_id":"B","amount":5.0,"status":"open"},"after":null,"op":"d"}' AS BINARY)),
    (CAST('o1' AS BINARY), CAST('{"before":{"order_id":"o1","customer_id":"A","amount":10.0,"status":"open"},"after":{"order_id":"o1","customer_id":"A","amount":10.0,"status":"cancelled"},"op":"u"}' AS BINARY));
