CREATE SOURCE clicks (user_id STRING, amount DOUBLE)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'lc_clicks_x1', startingOffsets = 'earliest', format = 'json');
CREATE SINK out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      topic = 'lc_out_x1', format = 'json');
CREATE FLOW f INTO out AS SELECT user_id, amount * 10 AS amount10 FROM clicks WHERE amount > 0;
STOP FLOW f;
SHOW FLOWS;
START FLOW f;
SHOW FLOWS;
STOP FLOW f;
START FLOW f;
DROP FLOW f;
SHOW FLOWS;
DROP SINK out;
DROP SOURCE clicks;
