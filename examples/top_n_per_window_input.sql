-- Feeds top_n_per_window.sql: five sales in minute 12:00 (the fourth pushes
-- s2 out of the top three, the fifth is too small to enter) and one in 12:01.
-- A consumer applying top_sales' changes holds s4, s3, s1 for 12:00 and s6
-- for 12:01.
--
--   rtsql -f examples/top_n_per_window.sql && rtsql -f examples/top_n_per_window_input.sql
INSERT INTO sales VALUES
    ('s1', 'north', 30.0, TIMESTAMP '2024-05-01 12:00:05'),
    ('s2', 'south', 10.0, TIMESTAMP '2024-05-01 12:00:10'),
    ('s3', 'north', 50.0, TIMESTAMP '2024-05-01 12:00:20'),
    ('s4', 'east',  70.0, TIMESTAMP '2024-05-01 12:00:30'),
    ('s5', 'west',   5.0, TIMESTAMP '2024-05-01 12:00:40'),
    ('s6', 'south', 20.0, TIMESTAMP '2024-05-01 12:01:10');
