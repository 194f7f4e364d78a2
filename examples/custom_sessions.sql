-- Sessions with a custom inactivity timeout: each user's clicks from
-- `app_clicks` form sessions, and a session ends after a pause longer than
-- that user's own timeout, which each click carries (`timeout_s`: a kiosk
-- user times out sooner than a desktop one). A stateful processor keeps the
-- open session per user; when a click comes after a pause over the timeout,
-- it writes the session that ended to `app_sessions` (user, start, last
-- click, clicks) and opens a new one. A session is written when the user's
-- next click shows it ended.
--
--   rtsqld --embedded-kafka &
--   rtsql -f examples/custom_sessions.sql
CREATE SOURCE app_clicks (
    user_id   STRING,
    ts        TIMESTAMP,
    timeout_s INT
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'app_clicks',
    startingOffsets = 'earliest',
    format = 'json'
);

CREATE SINK app_sessions WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    topic = 'app_sessions',
    format = 'json',
    key = 'user_id'
);

CREATE PROCESSOR inactivity_sessions
RETURNS (session_start TIMESTAMP, last_click TIMESTAMP, clicks BIGINT)
LANGUAGE PYTHON AS $$
class InactivitySessions:
    def init(self, handle):
        # The open session: [start, last click, clicks].
        self.session = handle.value_state("session")

    def handle_input_rows(self, key, rows, timer_values):
        for row in rows:
            ts, timeout = row["ts"], row["timeout_s"]
            s = self.session.get()
            if s is not None and (ts - s[1]).total_seconds() > timeout:
                yield (s[0], s[1], s[2])
                s = None
            if s is None:
                s = [ts, ts, 0]
            s[1] = max(s[1], ts)
            s[2] += 1
            self.session.update(s)
$$;

CREATE FLOW sessionize_app INTO app_sessions AS
SELECT * FROM TRANSFORM(app_clicks PARTITION BY user_id USING PROCESSOR inactivity_sessions);
