-- Fraud velocity check: a card used 5 times or more within one minute is
-- suspicious. Payments arrive as JSON on the topic `payments`; every minute-long
-- window, sliding every 20 seconds, counts each card's payments, and a window
-- where a card reaches the threshold writes one alert to `velocity_alerts`
-- (keyed by card) once the watermark has passed the window's end.
--
--   rtsqld --embedded-kafka &
--   rtsql -f examples/fraud_velocity.sql
CREATE SOURCE payments (
    card_id  STRING,
    merchant STRING,
    amount   DOUBLE,
    ts       TIMESTAMP,
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'payments',
    startingOffsets = 'earliest',
    format = 'json'
);

CREATE SINK velocity_alerts WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    topic = 'velocity_alerts',
    format = 'json',
    key = 'card_id'
);

CREATE FLOW card_velocity INTO velocity_alerts AS
SELECT card_id,
       window.start AS window_start,
       window.end   AS window_end,
       count(*)     AS payments,
       sum(amount)  AS total
FROM payments
GROUP BY window(ts, '1 minute', '20 seconds'), card_id
HAVING count(*) >= 5
EMIT ON WINDOW CLOSE;
