CREATE SOURCE tw (user_id STRING, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'win_tw_x1', startingOffsets = 'earliest', format = 'json')