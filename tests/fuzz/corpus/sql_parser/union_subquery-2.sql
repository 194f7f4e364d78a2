CREATE SINK union_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'us_union_x1', format = 'json')