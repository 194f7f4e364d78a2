-- Feeds fraud_velocity.sql: card c1 pays 6 times within 50 seconds, card c2
-- twice; a last payment a few minutes later moves the watermark past those
-- windows, so they close and their alerts are written.
--
--   rtsql -f examples/fraud_velocity.sql && rtsql -f examples/fraud_velocity_input.sql
INSERT INTO payments VALUES
    ('c1', 'm1', 10.0, TIMESTAMP '2024-05-01 12:00:05'),
    ('c1', 'm2', 20.0, TIMESTAMP '2024-05-01 12:00:15'),
    ('c2', 'm1', 99.0, TIMESTAMP '2024-05-01 12:00:18'),
    ('c1', 'm1', 30.0, TIMESTAMP '2024-05-01 12:00:25'),
    ('c1', 'm3', 40.0, TIMESTAMP '2024-05-01 12:00:35'),
    ('c1', 'm1', 50.0, TIMESTAMP '2024-05-01 12:00:45'),
    ('c2', 'm4',  5.0, TIMESTAMP '2024-05-01 12:00:50'),
    ('c1', 'm2', 60.0, TIMESTAMP '2024-05-01 12:00:55'),
    ('c9', 'm1',  1.0, TIMESTAMP '2024-05-01 12:05:00');
