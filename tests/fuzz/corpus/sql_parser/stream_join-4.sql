CREATE FLOW j_inner INTO inner_out WITH ('shuffle.partitions' = '2') AS
SELECT o.id, o.item, p.amount
FROM orders o JOIN payments p
  ON o.id = p.order_id AND p.ts BETWEEN o.ts AND o.ts + INTERVAL '1' MINUTE