-- Nexmark q13, bounded side input join: each bid joined with a static table of
-- 10,000 rows on auction mod 10000 (a broadcast hash join). ${SIDE_INPUT} is a
-- csv file "key,value" written by bench/nexmark.sh.
CREATE TABLE side_input (key BIGINT, value STRING)
    WITH (connector = 'file', path = '${SIDE_INPUT}', format = 'csv', header = 'true');
CREATE SINK q13_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
                          topic = '${PREFIX}q13_out', format = 'json');
CREATE FLOW q13 INTO q13_out TRIGGER REALTIME AS
SELECT /*+ BROADCAST(s) */ b.auction, b.bidder, b.price, b.date_time, s.value
FROM bid b JOIN side_input s ON mod(b.auction, 10000) = s.key;
