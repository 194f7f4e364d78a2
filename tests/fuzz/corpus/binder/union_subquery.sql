CREATE SOURCE web (user_id STRING, amount DOUBLE)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'us_web_x1', startingOffsets = 'earliest', format = 'json');
CREATE SOURCE shop (uid STRING, amt INT)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'us_shop_x1', startingOffsets = 'earliest', format = 'json');
CREATE SINK union_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'us_union_x1', format = 'json');
CREATE SINK union_agg_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'us_union_agg_x1', format = 'json');
CREATE SINK sub_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'us_sub_x1', format = 'json');
CREATE SINK over_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
    topic = 'us_over_x1', format = 'json');
CREATE FLOW u INTO union_out AS
SELECT user_id AS who, amount, 'web' AS src FROM web WHERE amount > 0
UNION ALL
SELECT uid, amt, 'shop' FROM shop;
EXPLAIN CREATE FLOW ua INTO union_agg_out WITH ('shuffle.partitions' = '2') AS
SELECT who, count(*) AS n, sum(x) AS total
FROM (SELECT user_id AS who, amount AS x FROM web UNION ALL SELECT uid, amt FROM shop) t
GROUP BY who;
CREATE FLOW ua INTO union_agg_out WITH ('shuffle.partitions' = '2') AS
SELECT who, count(*) AS n, sum(x) AS total
FROM (SELECT user_id AS who, amount AS x FROM web UNION ALL SELECT uid, amt FROM shop) t
GROUP BY who;
CREATE FLOW s INTO sub_out WITH ('shuffle.partitions' = '2') AS
SELECT k, count(*) AS n, max(a) AS top
FROM (SELECT upper(user_id) AS k, amount AS a FROM web WHERE amount > 1) GROUP BY k;
CREATE FLOW o INTO over_out WITH ('shuffle.partitions' = '2') AS
SELECT k, n * 10 AS n10 FROM (SELECT user_id AS k, count(*) AS n FROM web GROUP BY user_id) WHERE n >= 2;
