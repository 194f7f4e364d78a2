CREATE SOURCE web (user_id STRING, amount DOUBLE)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'us_web_x1', startingOffsets = 'earliest', format = 'json')