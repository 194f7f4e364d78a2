CREATE SINK inner_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'bj_inner_x1', format = 'json')