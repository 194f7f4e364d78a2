-- Nexmark q5, hot items (per-window counts, see ../q5.sql), engine-only: into a blackhole.
CREATE SINK q5_out WITH (connector = 'blackhole');
CREATE FLOW q5 INTO q5_out TRIGGER REALTIME AS
SELECT auction, count(*) AS num, window.start AS starttime, window.end AS endtime
FROM bid
GROUP BY window(date_time, '10 seconds', '2 seconds'), auction;
