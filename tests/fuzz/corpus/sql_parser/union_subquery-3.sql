CREATE FLOW u INTO union_out AS
SELECT user_id AS who, amount, 'web' AS src FROM web WHERE amount > 0
UNION ALL
SELECT uid, amt, 'shop' FROM shop