CREATE FLOW t_final INTO tw_final WITH ('shuffle.partitions' = '2') AS
SELECT window.start, window.end, user_id, count(*) AS n
FROM tw GROUP BY window(ts, '10 seconds'), user_id EMIT ON WINDOW CLOSE