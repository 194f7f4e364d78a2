CREATE SOURCE clicks (user_id STRING, amount DOUBLE)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'rs_clicks_x1', startingOffsets = 'earliest', format = 'json')