CREATE SOURCE ev (event_id STRING, user_id STRING, ts TIMESTAMP,
                  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'dd_ev_x1', startingOffsets = 'earliest', format = 'json');
CREATE SINK forever_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'dd_forever_x1', format = 'json');
CREATE SINK within_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'dd_within_x1', format = 'json');
CREATE SINK users_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'dd_users_x1', format = 'json');
CREATE FLOW forever INTO forever_out WITH ('shuffle.partitions' = '2') AS
SELECT DISTINCT ON (event_id) event_id, user_id FROM ev;
CREATE FLOW within INTO within_out WITH ('shuffle.partitions' = '2') AS
SELECT DISTINCT ON (event_id) WITHIN WATERMARK event_id, user_id FROM ev;
CREATE FLOW users INTO users_out WITH ('shuffle.partitions' = '2') AS
SELECT DISTINCT user_id FROM ev;
CREATE SINK star_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'dd_star_x1', format = 'json');
CREATE FLOW star INTO star_out AS SELECT DISTINCT ON (user_id) * FROM ev WHERE event_id IS NOT NULL;
