CREATE FLOW counts INTO alerts WITH ('shuffle.partitions' = '20') AS
SELECT user_id, count(*) AS n FROM events GROUP BY user_id