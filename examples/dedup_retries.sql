-- Deduplication of retried events: a producer that retries after a timeout
-- may send the same event twice or more. Each event carries its own id; the
-- flow passes the first copy of each id from `order_events` to
-- `unique_order_events` and drops the others. An id is remembered until the
-- watermark passes its event time (a retry is never sent later than that), so
-- the state stays bounded.
--
--   rtsqld --embedded-kafka &
--   rtsql -f examples/dedup_retries.sql
CREATE SOURCE order_events (
    event_id STRING,
    order_id STRING,
    status   STRING,
    ts       TIMESTAMP,
    WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'order_events',
    startingOffsets = 'earliest',
    format = 'json'
);

CREATE SINK unique_order_events WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    topic = 'unique_order_events',
    format = 'json'
);

CREATE FLOW dedup_order_events INTO unique_order_events AS
SELECT DISTINCT ON (event_id) WITHIN WATERMARK event_id, order_id, status, ts
FROM order_events;
