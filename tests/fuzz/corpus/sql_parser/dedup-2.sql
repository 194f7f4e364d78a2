CREATE SINK forever_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'dd_forever_x1', format = 'json')