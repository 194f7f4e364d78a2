CREATE FLOW f INTO totals WITH ('shuffle.partitions' = '3') AS
SELECT user_id, count(*) AS n, count(amount) AS na, sum(qty) AS sq, sum(amount) AS sa,
       min(amount) AS mi, max(amount) AS ma, avg(amount) AS av
FROM sales GROUP BY user_id