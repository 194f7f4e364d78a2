CREATE SOURCE clicks (user_id STRING, url STRING, amount DOUBLE, ts TIMESTAMP,
    info STRUCT<country STRING, tags ARRAY<STRING>>)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'err_clicks_x1', format = 'json');
CREATE SINK out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      topic = 'err_out_x1', format = 'json');
CREATE SOURCE events (user_id STRING, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'err_events_x1', format = 'json');
DROP SOURCE events;
CREATE SINK fout WITH (connector = 'file', path = '/tmp/rtsql_errors_x1.jsonl');
DROP SINK fout;
CREATE TABLE codes (code STRING, label STRING);
SELECT 1 + 1;
SHOW FLOWS;
SHOW SOURCES;
