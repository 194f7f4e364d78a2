CREATE SOURCE clicks (
    user_id  STRING,
    url      STRING,
    amount   DOUBLE,
    ts       TIMESTAMP,
    WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'ddl_clicks_x1',
    startingOffsets = 'earliest',
    format = 'json'
)