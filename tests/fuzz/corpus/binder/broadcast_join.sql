CREATE TABLE merchants (id BIGINT, name STRING, risk DOUBLE)
WITH (connector = 'file', path = '${srcdir}/data/merchants.csv', format = 'csv', header = 'true');
CREATE TABLE codes (code STRING, label STRING);
INSERT INTO codes VALUES ('A', 'alpha'), ('B', 'beta'), ('B', 'beta2'), (NULL, 'none');
CREATE SOURCE pay (pid INT, merchant_id INT, code STRING)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'bj_pay_x1', startingOffsets = 'earliest', format = 'json');
CREATE SINK inner_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'bj_inner_x1', format = 'json');
CREATE SINK left_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'bj_left_x1', format = 'json');
CREATE SINK codes_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'bj_codes_x1', format = 'json');
CREATE SINK right_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'bj_right_x1', format = 'json');
EXPLAIN CREATE FLOW j_left INTO left_out AS
SELECT /*+ BROADCAST(m) */ p.pid, m.name
FROM pay p LEFT JOIN merchants m ON p.merchant_id = m.id AND m.risk > 0.5;
CREATE FLOW j_inner INTO inner_out AS
SELECT p.pid, m.name, m.risk FROM pay p JOIN merchants m ON p.merchant_id = m.id;
CREATE FLOW j_left INTO left_out AS
SELECT /*+ BROADCAST(m) */ p.pid, m.name
FROM pay p LEFT JOIN merchants m ON p.merchant_id = m.id AND m.risk > 0.5;
CREATE FLOW j_codes INTO codes_out AS
SELECT /*+ BROADCAST(codes) */ p.pid, codes.label FROM pay p JOIN codes ON p.code = codes.code;
CREATE FLOW j_right INTO right_out AS
SELECT p.pid, c.label FROM codes c RIGHT JOIN pay p ON c.code = p.code;
INSERT INTO codes VALUES ('C', 'gamma');
CREATE SINK codes2_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'bj_codes2_x1', format = 'json');
CREATE FLOW j_codes2 INTO codes2_out AS
SELECT p.pid, c.label FROM pay p JOIN codes c ON p.code = c.code WHERE p.pid > 3;
