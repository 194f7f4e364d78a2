CREATE SINK csv_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      topic = 'fmt_csv_out_x1', format = 'json')