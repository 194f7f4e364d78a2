-- Feeds iot_anomaly.sql: thresholds for d1 (50) and d2 (80) at 12:00; d1
-- reads 40 then 65, d2 reads 90, d3 (no threshold) reads 1000. Alerts: d1's
-- 65 and d2's 90.
--
--   rtsql -f examples/iot_anomaly.sql && rtsql -f examples/iot_anomaly_input.sql
INSERT INTO thresholds VALUES
    ('d1', 50.0, TIMESTAMP '2024-05-01 12:00:00'),
    ('d2', 80.0, TIMESTAMP '2024-05-01 12:00:00');
INSERT INTO readings VALUES
    ('d1',   40.0, TIMESTAMP '2024-05-01 12:00:10'),
    ('d1',   65.0, TIMESTAMP '2024-05-01 12:00:20'),
    ('d2',   90.0, TIMESTAMP '2024-05-01 12:00:30'),
    ('d3', 1000.0, TIMESTAMP '2024-05-01 12:00:40');
