-- Nexmark q7, highest bid, engine-only: the first of the two flows of ../q7.sql,
-- each 10-second window's maximum price, into a blackhole. The second flow
-- joins the bids with these maxima read back from a Kafka topic, which an
-- engine-only run does not have, so this q7 is the aggregation half of it.
CREATE SINK q7_out WITH (connector = 'blackhole');
CREATE FLOW q7 INTO q7_out TRIGGER REALTIME AS
SELECT max(price) AS maxprice, window.end AS wend
FROM bid
GROUP BY window(date_time, '10 seconds')
EMIT ON WINDOW CLOSE;
