CREATE SOURCE pay (pid INT, merchant_id INT, code STRING)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'bj_pay_x1', startingOffsets = 'earliest', format = 'json')