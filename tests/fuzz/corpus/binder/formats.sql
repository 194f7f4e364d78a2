CREATE SOURCE csv_in (user_id STRING, amount DOUBLE, n BIGINT)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'fmt_csv_x1', startingOffsets = 'earliest', format = 'csv');
CREATE SINK csv_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      topic = 'fmt_csv_out_x1', format = 'json');
CREATE FLOW csv_flow INTO csv_out AS SELECT user_id, amount + n AS total, n FROM csv_in;
CREATE SOURCE raw_in WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'fmt_raw_x1', startingOffsets = 'earliest', format = 'raw');
CREATE SINK raw_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      topic = 'fmt_raw_out_x1', format = 'raw');
CREATE FLOW raw_copy INTO raw_out AS SELECT key, value FROM raw_in;
CREATE SINK raw_rekeyed WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      topic = 'fmt_raw_rekeyed_x1', format = 'raw');
CREATE FLOW raw_rekey INTO raw_rekeyed AS
SELECT upper(CAST(value AS STRING)) AS key, concat('v=', CAST(value AS STRING)) AS value FROM raw_in;
CREATE SINK raw_meta WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      topic = 'fmt_raw_meta_x1', format = 'json');
CREATE FLOW raw_columns INTO raw_meta AS
SELECT CAST(key AS STRING) AS k, CAST(value AS STRING) AS v, topic, partition, offset, timestampType
FROM raw_in;
CREATE SOURCE purchases (user_id STRING, amount DOUBLE)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'fmt_purchases_x1', startingOffsets = 'earliest', format = 'json');
CREATE SINK keyed_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      topic = 'fmt_keyed_x1', format = 'json', key = 'user_id');
CREATE FLOW keyed_flow INTO keyed_out AS SELECT user_id, amount FROM purchases;
CREATE SINK unkeyed_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      topic = 'fmt_unkeyed_x1', format = 'json');
CREATE FLOW unkeyed_flow INTO unkeyed_out AS SELECT user_id FROM purchases WHERE amount > 2;
CREATE SOURCE lenient (user_id STRING, amount DOUBLE)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'fmt_lenient_x1', startingOffsets = 'earliest', format = 'json',
      'on.error' = 'skip');
CREATE SINK lenient_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      topic = 'fmt_lenient_out_x1', format = 'json');
CREATE FLOW lenient_flow INTO lenient_out AS SELECT user_id, amount FROM lenient;
CREATE SOURCE strict_in (user_id STRING, amount DOUBLE)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'fmt_strict_x1', startingOffsets = 'earliest', format = 'json');
CREATE SINK strict_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      topic = 'fmt_strict_out_x1', format = 'json');
CREATE FLOW strict_flow INTO strict_out AS SELECT user_id, amount FROM strict_in;
SHOW FLOWS;
