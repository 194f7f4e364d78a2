-- Nexmark q12: Processing time windows: the number of bids of each bidder per 10-second
-- window. Flink windows on PROCTIME(); rtsql has no processing-time column,
-- so the window is on event time (date_time), which makes the result
-- reproducible (and checkable); EMIT ON WINDOW CLOSE as for Flink's TUMBLE.
-- Flink's text: flink/q12.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q12 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q12_out', format = 'json');

CREATE FLOW q12 INTO nexmark_q12 TRIGGER REALTIME AS
SELECT
    bidder,
    count(*) as bid_count,
    window.start AS starttime,
    window.end AS endtime
FROM bid
GROUP BY bidder, window(date_time, '10 seconds')
EMIT ON WINDOW CLOSE;
