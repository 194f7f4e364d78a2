-- Sessionization of a clickstream: a user's session is a run of clicks with
-- no pause of 5 minutes or more between two of them. Clicks arrive as JSON on
-- the topic `clickstream`; a session window per user groups them, and each
-- session writes one row to `user_sessions` (keyed by user): when it started
-- (its first click), its last click, when it ended (the last click plus the
-- gap) and how many clicks it had. A session is written once the watermark
-- has passed its end (`EMIT ON WINDOW CLOSE`): a click up to 30 seconds late
-- still extends or merges sessions, and what is written is final.
--
--   rtsqld --embedded-kafka &
--   rtsql -f examples/sessionization.sql
CREATE SOURCE clickstream (
    user_id STRING,
    url     STRING,
    ts      TIMESTAMP,
    WATERMARK FOR ts AS ts - INTERVAL '30' SECOND
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'clickstream',
    startingOffsets = 'earliest',
    format = 'json'
);

CREATE SINK user_sessions WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    topic = 'user_sessions',
    format = 'json',
    key = 'user_id'
);

CREATE FLOW sessionize_clicks INTO user_sessions AS
SELECT user_id,
       window.start AS session_start,
       max(ts)      AS last_click,
       window.end   AS session_end,
       count(*)     AS clicks
FROM clickstream
GROUP BY session_window(ts, INTERVAL '5' MINUTE), user_id
EMIT ON WINDOW CLOSE;
