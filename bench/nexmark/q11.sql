-- Nexmark q11: User sessions: the number of bids of each bidder per session (a new session
-- after 10 seconds without a bid). Flink's SESSION group window and its
-- SESSION_START/SESSION_END are rtsql's session_window and window.start/
-- window.end; both emit each session once, final, when the watermark passes
-- its end (EMIT ON WINDOW CLOSE).
-- Flink's text: flink/q11.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q11 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q11_out', format = 'json');

CREATE FLOW q11 INTO nexmark_q11 TRIGGER REALTIME AS
SELECT
    B.bidder,
    count(*) as bid_count,
    window.start as starttime,
    window.end as endtime
FROM bid B
GROUP BY B.bidder, session_window(B.date_time, INTERVAL '10' SECOND)
EMIT ON WINDOW CLOSE;
