CREATE SINK big WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'ddl_big_x1', format = 'json')