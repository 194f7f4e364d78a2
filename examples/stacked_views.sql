-- Materialized views stacked on a materialized view: `customer_spend` keeps
-- each customer's orders and total from the `order_lines` stream; a view
-- over it, `spend_tiers`, counts the customers of each tier ('vip' from 100
-- on); and a flow over it writes the VIP customers to the upsert topic
-- `vip_customers`. Both read the view's changes: when a customer's total
-- grows, the old row leaves its tier and the new one enters the next, and a
-- customer who stops being a VIP (a refund) gets a tombstone.
--
--   rtsqld --embedded-kafka --data-dir /tmp/rtsql-data &
--   rtsql -f examples/stacked_views.sql
--   psql -h localhost -p 5432 -c 'SELECT * FROM spend_tiers ORDER BY tier'
CREATE SOURCE order_lines (
    order_id    STRING,
    customer_id STRING,
    amount      DOUBLE
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'order_lines',
    startingOffsets = 'earliest',
    format = 'json'
);

CREATE MATERIALIZED VIEW customer_spend AS
SELECT customer_id, count(*) AS orders, sum(amount) AS total
FROM order_lines
GROUP BY customer_id;

CREATE MATERIALIZED VIEW spend_tiers AS
SELECT CASE WHEN total >= 100 THEN 'vip' ELSE 'regular' END AS tier,
       count(*) AS customers
FROM customer_spend
GROUP BY CASE WHEN total >= 100 THEN 'vip' ELSE 'regular' END;

CREATE SINK vip_customers WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    topic = 'vip_customers',
    format = 'json',
    mode = 'upsert'
);

CREATE FLOW vips INTO vip_customers AS
SELECT customer_id, total FROM customer_spend WHERE total >= 100;
