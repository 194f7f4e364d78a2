CREATE SINK totals WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'ag_totals_x1', format = 'json')