CREATE SOURCE csv_in (user_id STRING, amount DOUBLE, n BIGINT)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'fmt_csv_x1', startingOffsets = 'earliest', format = 'csv')