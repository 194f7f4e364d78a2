-- Nexmark q8, monitor new users: the persons who opened an auction in the
-- 10-second tumbling window in which they registered. The reference query
-- joins two windowed aggregations (persons per window, sellers per window);
-- here a stream-stream join of person and auction with the same meaning: the
-- same id, the same window (equal window numbers), which also bounds the join
-- in time (the auction within 10 seconds of the registration). A person has
-- one registration, so a DISTINCT per (id, window) gives the reference's one
-- row per person and window.
--
-- The join reads person and auction through its own sources with a watermark
-- delay of ${JOIN_DELAY} seconds, more than the run's event-time span (set by
-- bench/nexmark.sh): replaying a log, the two topics are read at unrelated
-- speeds, and a row that arrives after the other side's watermark has passed
-- its time range is dropped as late; with that delay nothing is late and the
-- result does not depend on read speed.
CREATE SOURCE person_all (
    id BIGINT, name STRING, email_address STRING, credit_card STRING, city STRING,
    state STRING, date_time TIMESTAMP, extra STRING,
    WATERMARK FOR date_time AS date_time - INTERVAL '${JOIN_DELAY}' SECOND
) WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
        subscribe = '${PREFIX}person', startingOffsets = 'earliest', format = 'json');
CREATE SOURCE auction_all (
    id BIGINT, item_name STRING, description STRING, initial_bid BIGINT, reserve BIGINT,
    date_time TIMESTAMP, expires TIMESTAMP, seller BIGINT, category BIGINT, extra STRING,
    WATERMARK FOR date_time AS date_time - INTERVAL '${JOIN_DELAY}' SECOND
) WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
        subscribe = '${PREFIX}auction', startingOffsets = 'earliest', format = 'json');
CREATE SINK q8_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
                          topic = '${PREFIX}q8_out', format = 'json');
CREATE FLOW q8 INTO q8_out TRIGGER REALTIME AS
SELECT DISTINCT id, name, starttime FROM (
    SELECT p.id AS id, p.name AS name,
           timestamp_millis(floor(unix_millis(p.date_time) / 10000) * 10000) AS starttime
    FROM person_all p JOIN auction_all a
      ON p.id = a.seller
     AND floor(unix_millis(p.date_time) / 10000) = floor(unix_millis(a.date_time) / 10000)
     AND a.date_time BETWEEN p.date_time - INTERVAL '10' SECOND
                         AND p.date_time + INTERVAL '10' SECOND
) j;
