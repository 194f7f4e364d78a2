CREATE SINK alerts WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'pl_alerts_x1', format = 'json')