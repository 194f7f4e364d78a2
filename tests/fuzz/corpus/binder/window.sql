CREATE SOURCE tw (user_id STRING, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'win_tw_x1', startingOffsets = 'earliest', format = 'json');
CREATE SINK tw_final WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'win_tw_final_x1', format = 'json');
CREATE SINK tw_updates WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'win_tw_updates_x1', format = 'json');
CREATE FLOW t_final INTO tw_final WITH ('shuffle.partitions' = '2') AS
SELECT window.start, window.end, user_id, count(*) AS n
FROM tw GROUP BY window(ts, '10 seconds'), user_id EMIT ON WINDOW CLOSE;
CREATE FLOW t_upd INTO tw_updates WITH ('shuffle.partitions' = '2') AS
SELECT window.start, window.end, user_id, count(*) AS n
FROM tw GROUP BY window(ts, INTERVAL '10' SECOND), user_id;
DROP FLOW t_final;
DROP FLOW t_upd;
CREATE SOURCE sw (user_id STRING, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'win_sw_x1', startingOffsets = 'earliest', format = 'json');
CREATE SINK sw_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'win_sw_out_x1', format = 'json');
CREATE SINK sw_final WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'win_sw_final_x1', format = 'json');
CREATE FLOW s_upd INTO sw_out WITH ('shuffle.partitions' = '2') AS
SELECT window.start, window.end, user_id, count(*) AS n
FROM sw GROUP BY window(ts, '10 seconds', '5 seconds'), user_id;
CREATE FLOW s_final INTO sw_final WITH ('shuffle.partitions' = '2') AS
SELECT window.start, window.end, user_id, count(*) AS n
FROM sw GROUP BY window(ts, '10 seconds', '5 seconds'), user_id EMIT ON WINDOW CLOSE;
DROP FLOW s_upd;
DROP FLOW s_final;
CREATE SOURCE ssn (user_id STRING, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '30' SECOND)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'win_ss_x1', startingOffsets = 'earliest', format = 'json');
CREATE SINK ss_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'win_ss_out_x1', format = 'json');
CREATE SINK ss_final WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'win_ss_final_x1', format = 'json');
CREATE FLOW ss_upd INTO ss_out WITH ('shuffle.partitions' = '2') AS
SELECT window.start, window.end, user_id, count(*) AS n
FROM ssn GROUP BY session_window(ts, '10 seconds'), user_id;
CREATE FLOW ss_fin INTO ss_final WITH ('shuffle.partitions' = '2') AS
SELECT window.start, window.end, user_id, count(*) AS n
FROM ssn GROUP BY session_window(ts, INTERVAL '10' SECOND), user_id EMIT ON WINDOW CLOSE;
