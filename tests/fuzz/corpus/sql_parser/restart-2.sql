CREATE SINK out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      topic = 'rs_out_x1', format = 'json')