CREATE SOURCE ev (event_id STRING, user_id STRING, ts TIMESTAMP,
                  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'dd_ev_x1', startingOffsets = 'earliest', format = 'json')