EXPLAIN CREATE FLOW j_left INTO left_out AS
SELECT /*+ BROADCAST(m) */ p.pid, m.name
FROM pay p LEFT JOIN merchants m ON p.merchant_id = m.id AND m.risk > 0.5