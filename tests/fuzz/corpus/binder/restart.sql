CREATE SOURCE clicks (user_id STRING, amount DOUBLE)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'rs_clicks_x1', startingOffsets = 'earliest', format = 'json');
CREATE SINK out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      topic = 'rs_out_x1', format = 'json');
CREATE SINK out2 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      topic = 'rs_out2_x1', format = 'json');
CREATE TABLE codes (code STRING, label STRING);
INSERT INTO codes VALUES ('A', 'alpha'), ('B', 'beta');
CREATE FLOW f INTO out AS SELECT user_id, amount + 1 AS plus FROM clicks WHERE amount > 0;
CREATE FLOW g INTO out2 AS SELECT user_id FROM clicks;
STOP FLOW g;
SHOW SOURCES;
SHOW SINKS;
SHOW TABLES;
SHOW FLOWS;
DESCRIBE f;
;
START FLOW g;
DROP FLOW g;
SHOW FLOWS;
