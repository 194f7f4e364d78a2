-- Nexmark q13, bounded side input join, engine-only: the flow of ../q13.sql
-- into a blackhole. ${SIDE_INPUT} is the csv file "key,value" of 10,000 rows.
CREATE TABLE side_input (key BIGINT, value STRING)
    WITH (connector = 'file', path = '${SIDE_INPUT}', format = 'csv', header = 'true');
CREATE SINK q13_out WITH (connector = 'blackhole');
CREATE FLOW q13 INTO q13_out TRIGGER REALTIME AS
SELECT /*+ BROADCAST(s) */ b.auction, b.bidder, b.price, b.date_time, s.value
FROM bid b JOIN side_input s ON mod(b.auction, 10000) = s.key;
