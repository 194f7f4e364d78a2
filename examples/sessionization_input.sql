-- Feeds sessionization.sql: u1 clicks three times within two minutes, pauses
-- ten minutes, clicks again; u2 clicks once. A click of u9 an hour later moves
-- the watermark past those sessions, so they close: u1 gets two sessions
-- (3 clicks, then 1) and u2 one.
--
--   rtsql -f examples/sessionization.sql && rtsql -f examples/sessionization_input.sql
INSERT INTO clickstream VALUES
    ('u1', '/home', TIMESTAMP '2024-05-01 12:00:00'),
    ('u2', '/home', TIMESTAMP '2024-05-01 12:00:30'),
    ('u1', '/cart', TIMESTAMP '2024-05-01 12:01:00'),
    ('u1', '/pay',  TIMESTAMP '2024-05-01 12:02:00'),
    ('u1', '/home', TIMESTAMP '2024-05-01 12:12:00'),
    ('u9', '/home', TIMESTAMP '2024-05-01 13:00:00');
