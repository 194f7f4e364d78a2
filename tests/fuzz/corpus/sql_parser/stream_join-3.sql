EXPLAIN CREATE FLOW j_left INTO left_out WITH ('shuffle.partitions' = '2') AS
SELECT o.id, o.item, p.amount
FROM orders o LEFT JOIN payments p
  ON o.id = p.order_id AND p.ts BETWEEN o.ts AND o.ts + INTERVAL '1' MINUTE