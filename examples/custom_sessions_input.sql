-- Feeds custom_sessions.sql: u1 allows 60 s of inactivity and clicks at
-- 12:00:00, 12:00:30, then 12:05:00 (ending the first session: 2 clicks);
-- u2 allows 600 s and clicks at 12:00 and 12:05 (one open session, nothing
-- written yet), then 13:00 (ending it: 2 clicks).
--
--   rtsql -f examples/custom_sessions.sql && rtsql -f examples/custom_sessions_input.sql
INSERT INTO app_clicks VALUES
    ('u1', TIMESTAMP '2024-05-01 12:00:00', 60),
    ('u2', TIMESTAMP '2024-05-01 12:00:00', 600),
    ('u1', TIMESTAMP '2024-05-01 12:00:30', 60),
    ('u2', TIMESTAMP '2024-05-01 12:05:00', 600),
    ('u1', TIMESTAMP '2024-05-01 12:05:00', 60),
    ('u2', TIMESTAMP '2024-05-01 13:00:00', 600);
