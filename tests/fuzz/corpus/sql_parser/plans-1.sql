CREATE SOURCE events (event_id STRING, user_id STRING, ts TIMESTAMP,
                      WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'pl_events_x1', startingOffsets = 'earliest',
      maxPartitions = '8', format = 'json')