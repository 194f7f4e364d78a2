CREATE SOURCE clicks (user_id STRING, url STRING, amount DOUBLE, ts TIMESTAMP,
    info STRUCT<country STRING, tags ARRAY<STRING>>)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'err_clicks_x1', format = 'json')