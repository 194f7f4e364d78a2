CREATE SOURCE events (event_id STRING, user_id STRING, ts TIMESTAMP,
                      WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'pl_events_x1', startingOffsets = 'earliest',
      maxPartitions = '8', format = 'json');
CREATE SINK alerts WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'pl_alerts_x1', format = 'json');
EXPLAIN CREATE FLOW plain INTO alerts AS SELECT user_id, event_id FROM events WHERE user_id <> 'x';
EXPLAIN CREATE FLOW counts INTO alerts WITH ('shuffle.partitions' = '20') AS
SELECT user_id, count(*) AS n FROM events GROUP BY user_id;
EXPLAIN CREATE FLOW counts INTO alerts WITH ('shuffle.partitions' = '20') AS
SELECT user_id, count(*) AS n FROM (SELECT DISTINCT ON (event_id) * FROM events) GROUP BY user_id;
SET 'shuffle.partitions' = '5';
EXPLAIN CREATE FLOW c5 INTO alerts AS SELECT user_id, count(*) AS n FROM events GROUP BY user_id;
EXPLAIN CREATE FLOW total INTO alerts WITH ('shuffle.partitions' = '20') AS SELECT count(*) AS n FROM events;
SHOW slots;
CREATE FLOW counts INTO alerts WITH ('shuffle.partitions' = '20') AS
SELECT user_id, count(*) AS n FROM events GROUP BY user_id;
SHOW slots;
SHOW FLOWS;
SHOW slots;
STOP FLOW counts;
SHOW slots;
CREATE FLOW plain INTO alerts AS SELECT user_id, event_id FROM events WHERE user_id = 'nobody';
SHOW slots;
SHOW FLOWS;
DROP FLOW plain;
START FLOW counts;
SHOW slots;
DROP FLOW counts;
SHOW slots;
