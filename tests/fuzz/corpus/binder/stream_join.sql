CREATE SOURCE orders (id BIGINT, item STRING, ts TIMESTAMP,
                      WATERMARK FOR ts AS ts - INTERVAL '2' MINUTE)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'sj_orders_x1', startingOffsets = 'earliest', format = 'json');
CREATE SOURCE payments (order_id BIGINT, amount DOUBLE, ts TIMESTAMP,
                        WATERMARK FOR ts AS ts - INTERVAL '2' MINUTE)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'sj_payments_x1', startingOffsets = 'earliest', format = 'json');
CREATE SINK inner_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'sj_inner_x1', format = 'json');
CREATE SINK left_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'sj_left_x1', format = 'json');
EXPLAIN CREATE FLOW j_left INTO left_out WITH ('shuffle.partitions' = '2') AS
SELECT o.id, o.item, p.amount
FROM orders o LEFT JOIN payments p
  ON o.id = p.order_id AND p.ts BETWEEN o.ts AND o.ts + INTERVAL '1' MINUTE;
CREATE FLOW j_inner INTO inner_out WITH ('shuffle.partitions' = '2') AS
SELECT o.id, o.item, p.amount
FROM orders o JOIN payments p
  ON o.id = p.order_id AND p.ts BETWEEN o.ts AND o.ts + INTERVAL '1' MINUTE;
CREATE FLOW j_left INTO left_out WITH ('shuffle.partitions' = '2') AS
SELECT o.id, o.item, p.amount
FROM orders o LEFT JOIN payments p
  ON o.id = p.order_id AND p.ts BETWEEN o.ts AND o.ts + INTERVAL '1' MINUTE;
