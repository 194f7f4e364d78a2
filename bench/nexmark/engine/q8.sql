-- Nexmark q8, monitor new users, engine-only: the flow of ../q8.sql into a
-- blackhole. Its sources are person_all and auction_all with a watermark delay
-- of ${JOIN_DELAY} seconds, more than the run's event-time span: the two
-- sources run at unrelated speeds (the person source passes over 49 of 50
-- events, the auction source 47), and a row that arrives after the other
-- side's watermark has passed its time range would be dropped as late.
CREATE SOURCE person_all (
    id BIGINT, name STRING, email_address STRING, credit_card STRING, city STRING,
    state STRING, date_time TIMESTAMP, extra STRING,
    WATERMARK FOR date_time AS date_time - INTERVAL '${JOIN_DELAY}' SECOND
) WITH (connector = 'nexmark', 'nexmark.table' = 'person', events = '${EVENTS}',
        partitions = '${PARTITIONS}');
CREATE SOURCE auction_all (
    id BIGINT, item_name STRING, description STRING, initial_bid BIGINT, reserve BIGINT,
    date_time TIMESTAMP, expires TIMESTAMP, seller BIGINT, category BIGINT, extra STRING,
    WATERMARK FOR date_time AS date_time - INTERVAL '${JOIN_DELAY}' SECOND
) WITH (connector = 'nexmark', 'nexmark.table' = 'auction', events = '${EVENTS}',
        partitions = '${PARTITIONS}');
CREATE SINK q8_out WITH (connector = 'blackhole');
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
