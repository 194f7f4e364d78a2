CREATE SOURCE sales (
    user_id STRING,
    qty     INT,
    amount  DOUBLE
) WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
        subscribe = 'ag_sales_x1', startingOffsets = 'earliest', format = 'json');
CREATE SINK totals WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'ag_totals_x1', format = 'json');
EXPLAIN CREATE FLOW f INTO totals WITH ('shuffle.partitions' = '3') AS
SELECT user_id, count(*) AS n, count(amount) AS na, sum(qty) AS sq, sum(amount) AS sa,
       min(amount) AS mi, max(amount) AS ma, avg(amount) AS av
FROM sales GROUP BY user_id;
CREATE FLOW f INTO totals WITH ('shuffle.partitions' = '3') AS
SELECT user_id, count(*) AS n, count(amount) AS na, sum(qty) AS sq, sum(amount) AS sa,
       min(amount) AS mi, max(amount) AS ma, avg(amount) AS av
FROM sales GROUP BY user_id;
DROP FLOW f;
CREATE SOURCE s2 (k STRING, v INT) WITH (connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded', subscribe = 'ag_s2_x1',
    startingOffsets = 'earliest', format = 'json');
CREATE SINK having_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'ag_having_x1', format = 'json');
CREATE FLOW h INTO having_out WITH ('shuffle.partitions' = '2') AS
SELECT k, count(*) AS n, sum(v) AS total FROM s2 GROUP BY k HAVING sum(v) > 5 AND count(*) >= 2;
CREATE SINK multi_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'ag_multi_x1', format = 'json');
CREATE FLOW m INTO multi_out AS
SELECT k, v % 2 AS odd, count(*) AS n FROM s2 GROUP BY k, v % 2;
CREATE SINK all_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'ag_all_x1', format = 'json');
CREATE FLOW a INTO all_out AS SELECT count(*) AS n, sum(v) AS total, max(k) AS mk FROM s2;
