-- Feeds dedup_retries.sql: e1 is sent three times and e2 twice (retries);
-- unique_order_events gets e1, e2 and e3 once each.
--
--   rtsql -f examples/dedup_retries.sql && rtsql -f examples/dedup_retries_input.sql
INSERT INTO order_events VALUES
    ('e1', 'o1', 'created', TIMESTAMP '2024-05-01 12:00:00'),
    ('e1', 'o1', 'created', TIMESTAMP '2024-05-01 12:00:00'),
    ('e2', 'o1', 'paid',    TIMESTAMP '2024-05-01 12:00:10'),
    ('e1', 'o1', 'created', TIMESTAMP '2024-05-01 12:00:00'),
    ('e3', 'o2', 'created', TIMESTAMP '2024-05-01 12:00:20'),
    ('e2', 'o1', 'paid',    TIMESTAMP '2024-05-01 12:00:10');
