CREATE FLOW forever INTO forever_out WITH ('shuffle.partitions' = '2') AS
SELECT DISTINCT ON (event_id) event_id, user_id FROM ev