EXPLAIN CREATE FLOW ua INTO union_agg_out WITH ('shuffle.partitions' = '2') AS
SELECT who, count(*) AS n, sum(x) AS total
FROM (SELECT user_id AS who, amount AS x FROM web UNION ALL SELECT uid, amt FROM shop) t
GROUP BY who