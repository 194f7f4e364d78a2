-- IoT anomaly: sensors send readings on the topic `readings`; a calibration
-- service sends each device's upper threshold on the topic `thresholds` at the
-- start of every minute, valid for that minute. A reading above the threshold
-- in force for its device when it was taken (the one sent in the minute up to
-- the reading) writes an alert to `sensor_alerts`, keyed by device.
--
-- The two streams are joined on the device within a time bound (an interval
-- join): a threshold meets the readings of the minute after it, so each side's
-- rows are kept only until the watermark passes that minute, and a reading
-- whose threshold arrives later than it still finds it.
--
--   rtsqld --embedded-kafka &
--   rtsql -f examples/iot_anomaly.sql
CREATE SOURCE readings (
    device_id STRING,
    value     DOUBLE,
    ts        TIMESTAMP,
    WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'readings',
    startingOffsets = 'earliest',
    format = 'json'
);

CREATE SOURCE thresholds (
    device_id STRING,
    max_value DOUBLE,
    ts        TIMESTAMP,
    WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'thresholds',
    startingOffsets = 'earliest',
    format = 'json'
);

CREATE SINK sensor_alerts WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    topic = 'sensor_alerts',
    format = 'json',
    key = 'device_id'
);

CREATE FLOW detect_anomalies INTO sensor_alerts AS
SELECT r.device_id,
       r.ts        AS reading_ts,
       r.value,
       t.max_value AS threshold,
       t.ts        AS threshold_ts
FROM readings r JOIN thresholds t
  ON r.device_id = t.device_id
 AND t.ts <= r.ts AND t.ts > r.ts - INTERVAL '1' MINUTE
WHERE r.value > t.max_value;
