-- Nexmark q11, user sessions: the number of bids of each bidder per session
-- (a new session after 10 seconds without a bid). EMIT ON WINDOW CLOSE gives
-- each session once, final, when the watermark passes its end.
CREATE SINK q11_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
                          topic = '${PREFIX}q11_out', format = 'json');
CREATE FLOW q11 INTO q11_out TRIGGER REALTIME AS
SELECT bidder, count(*) AS bid_count, window.start AS starttime, window.end AS endtime
FROM bid
GROUP BY bidder, session_window(date_time, '10 seconds')
EMIT ON WINDOW CLOSE;
