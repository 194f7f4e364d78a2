CREATE SOURCE sales (
    user_id STRING,
    qty     INT,
    amount  DOUBLE
) WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
        subscribe = 'ag_sales_x1', startingOffsets = 'earliest', format = 'json')