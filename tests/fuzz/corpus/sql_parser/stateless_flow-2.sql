CREATE SINK big_clicks WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    topic = 'sf_big_x1',
    format = 'json'
)