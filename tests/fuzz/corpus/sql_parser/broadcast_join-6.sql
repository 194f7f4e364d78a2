CREATE FLOW j_inner INTO inner_out AS
SELECT p.pid, m.name, m.risk FROM pay p JOIN merchants m ON p.merchant_id = m.id