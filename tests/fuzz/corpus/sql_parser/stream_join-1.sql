CREATE SOURCE orders (id BIGINT, item STRING, ts TIMESTAMP,
                      WATERMARK FOR ts AS ts - INTERVAL '2' MINUTE)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'sj_orders_x1', startingOffsets = 'earliest', format = 'json')