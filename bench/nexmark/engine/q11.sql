-- Nexmark q11, user sessions, engine-only: the flow of ../q11.sql into a blackhole.
CREATE SINK q11_out WITH (connector = 'blackhole');
CREATE FLOW q11 INTO q11_out TRIGGER REALTIME AS
SELECT bidder, count(*) AS bid_count, window.start AS starttime, window.end AS endtime
FROM bid
GROUP BY bidder, session_window(date_time, '10 seconds')
EMIT ON WINDOW CLOSE;
