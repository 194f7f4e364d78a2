CREATE SOURCE clicks (
    user_id  STRING,
    url      STRING,
    amount   DOUBLE,
    ts       TIMESTAMP,
    WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'ddl_clicks_x1',
    startingOffsets = 'earliest',
    format = 'json'
);
SHOW SOURCES;
DESCRIBE clicks;
CREATE SOURCE IF NOT EXISTS clicks (a INT) WITH (connector = 'datagen');
DESC clicks;
CREATE SOURCE raw_in WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'ddl_raw_x1', format = 'raw', includeHeaders = 'true');
DESCRIBE raw_in;
CREATE SOURCE gen (id BIGINT, name STRING) WITH (connector = 'datagen', 'rows-per-second' = '1');
SHOW SOURCES;
CREATE SINK big WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'ddl_big_x1', format = 'json');
CREATE SINK keyed WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'ddl_keyed_x1', format = 'json', key = 'user_id');
CREATE SINK bytes WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'ddl_bytes_x1', format = 'raw');
SHOW SINKS;
DESCRIBE big;
CREATE TABLE codes (code STRING, label STRING);
INSERT INTO codes VALUES ('A', 'alpha'), ('B', 'beta');
SHOW TABLES;
CREATE TABLE typed (i INT, b BIGINT, d DOUBLE, s STRING, t TIMESTAMP, flag BOOLEAN);
INSERT INTO typed VALUES (1, 2, 3, 'x', '2024-05-01 10:00:00', true),
                         (abs(-5), 10000000000, 1.5, upper('y'), TIMESTAMP '2024-05-01 10:00:00', NULL),
                         (NULL, NULL, NULL, NULL, NULL, NULL);
SHOW TABLES;
DESCRIBE codes;
SHOW TABLES;
CREATE TABLE IF NOT EXISTS codes (a INT);
CREATE FLOW f INTO big AS
SELECT user_id, upper(url) AS url, amount * 2 AS doubled FROM clicks WHERE amount > 10;
SHOW FLOWS;
DESCRIBE f;
;
CREATE FLOW names INTO keyed AS
SELECT c.user_id, lower(c.url), amount + 1 AS plus FROM clicks c;
DESCRIBE names;
;
SHOW FLOWS;
CREATE FLOW IF NOT EXISTS f INTO big AS SELECT user_id FROM clicks;
DESCRIBE f;
;
CREATE FLOW rawf INTO bytes AS SELECT user_id AS key, url AS value FROM clicks;
DROP FLOW IF EXISTS nope;
DROP SOURCE IF EXISTS nope;
DROP SINK IF EXISTS nope;
DROP TABLE IF EXISTS nope;
DROP FLOW f;
DROP FLOW names;
DROP FLOW rawf;
SHOW FLOWS;
DROP SINK big;
DROP SINK keyed;
DROP SINK bytes;
DROP SOURCE clicks;
DROP SOURCE raw_in;
DROP TABLE codes;
SHOW SINKS;
SHOW SOURCES;
SHOW TABLES;
CREATE SINK clicks WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'ddl_again_x1', format = 'json');
DROP SINK clicks;
CREATE SOURCE clicks (user_id STRING, url STRING, amount DOUBLE, ts TIMESTAMP,
    info STRUCT<country STRING, tags ARRAY<STRING>>,
    WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
) WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'ddl_clicks2_x1', format = 'json');
CREATE SINK alerts WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'ddl_alerts_x1', format = 'json', key = 'user_id');
