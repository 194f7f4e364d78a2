-- Nexmark q7, highest bid: the bids with the highest price of their 10-second
-- tumbling window. The reference query joins the bids with the per-window
-- maximum, an aggregation; rtsql does not join an aggregation's result inside
-- one flow, so q7 is two flows: q7_max writes each window's maximum, final
-- (EMIT ON WINDOW CLOSE), to a topic, and q7 joins the bids with that topic
-- read back as a source, on the price and the window's time range (inclusive
-- ends, as the reference's BETWEEN).
--
-- The join reads its own copy of the bid stream, bid_all, and the maxima with a
-- watermark delay of ${JOIN_DELAY} seconds, which bench/nexmark.sh sets to more
-- than the run's event-time span: replaying a log, the two inputs are read at
-- unrelated speeds, and a row that arrives after the other side's watermark
-- has passed its time range is dropped as late; with that delay nothing is
-- late and the result does not depend on read speed.
CREATE SINK q7_max_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
                             topic = '${PREFIX}q7_max_out', format = 'json');
CREATE FLOW q7_max INTO q7_max_out TRIGGER REALTIME AS
SELECT max(price) AS maxprice, window.end AS wend
FROM bid
GROUP BY window(date_time, '10 seconds')
EMIT ON WINDOW CLOSE;
CREATE SOURCE q7_max_src (
    maxprice BIGINT,
    wend     TIMESTAMP,
    WATERMARK FOR wend AS wend - INTERVAL '${JOIN_DELAY}' SECOND
) WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
        subscribe = '${PREFIX}q7_max_out', startingOffsets = 'earliest', format = 'json');
CREATE SOURCE bid_all (
    auction   BIGINT,
    bidder    BIGINT,
    price     BIGINT,
    channel   STRING,
    url       STRING,
    date_time TIMESTAMP,
    extra     STRING,
    WATERMARK FOR date_time AS date_time - INTERVAL '${JOIN_DELAY}' SECOND
) WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
        subscribe = '${PREFIX}bid', startingOffsets = 'earliest', format = 'json');
CREATE SINK q7_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
                          topic = '${PREFIX}q7_out', format = 'json');
CREATE FLOW q7 INTO q7_out TRIGGER REALTIME AS
SELECT b.auction, b.price, b.bidder, b.date_time, b.extra
FROM bid_all b JOIN q7_max_src m
  ON b.price = m.maxprice
 AND m.wend BETWEEN b.date_time AND b.date_time + INTERVAL '10' SECOND;
