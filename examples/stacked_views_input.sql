-- Feeds stacked_views.sql: c1 spends 60 then 50 (a VIP at 110), c2 spends
-- 120 then gets 40 refunded (a VIP, then regular again at 80: its key in
-- vip_customers ends with a tombstone), c3 spends 20. spend_tiers ends with
-- 2 regular customers and 1 VIP.
--
--   rtsql -f examples/stacked_views.sql && rtsql -f examples/stacked_views_input.sql
INSERT INTO order_lines (order_id, customer_id, amount) VALUES
    ('o1', 'c1', 60.0),
    ('o2', 'c2', 120.0),
    ('o3', 'c3', 20.0),
    ('o4', 'c1', 50.0),
    ('o5', 'c2', -40.0);
