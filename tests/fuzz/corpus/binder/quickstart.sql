-- rtsql quick start: everything runs inside rtsqld (start it with --embedded-kafka).
--
-- 1. A generator stands in for an application that sends click events to Kafka:
--    a datagen source written by a flow into the topic `clicks`.
CREATE SOURCE click_generator (
    user_id STRING,
    url     STRING,
    amount  DOUBLE,
    ts      TIMESTAMP
) WITH (
    connector = 'datagen',
    'rows-per-second' = '20',
    'fields.user_id.values' = 'alice,bob,carol,dave',
    'fields.url.values' = '/home,/cart,/checkout,/search',
    'fields.amount.min' = '1',
    'fields.amount.max' = '100'
);

CREATE SINK clicks_topic WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    topic = 'clicks',
    format = 'json'
);

CREATE FLOW generate_clicks INTO clicks_topic TRIGGER REALTIME AS
SELECT * FROM click_generator;

-- 2. The real-time flow: read `clicks` from Kafka, keep the big ones, reshape
--    them and write them to the topic `big_clicks` as they arrive.
CREATE SOURCE clicks (
    user_id STRING,
    url     STRING,
    amount  DOUBLE,
    ts      TIMESTAMP,
    WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'clicks',
    startingOffsets = 'earliest',
    format = 'json'
);

CREATE SINK big_clicks WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    topic = 'big_clicks',
    format = 'json'
);

CREATE FLOW big_spenders INTO big_clicks
    TRIGGER REALTIME CHECKPOINT INTERVAL '10 seconds'
AS
SELECT user_id, upper(url) AS url, amount * 2 AS doubled
FROM clicks
WHERE amount > 10;
