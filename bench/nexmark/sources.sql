-- The three Nexmark streams, created once per run by bench/nexmark/nexmark.sh before the
-- queries. Placeholders: ${BOOTSTRAP} (the SQL spelling of the broker: 'embedded'
-- or host:port), ${PREFIX} (topic name prefix), ${DELAY} (watermark delay).
-- The generator writes events in event-time order, so the delay only has to
-- cover the skew between partitions.
CREATE SOURCE person (
    id            BIGINT,
    name          STRING,
    email_address STRING,
    credit_card   STRING,
    city          STRING,
    state         STRING,
    date_time     TIMESTAMP,
    extra         STRING,
    WATERMARK FOR date_time AS date_time - INTERVAL '${DELAY}' SECOND
) WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
        subscribe = '${PREFIX}person', startingOffsets = 'earliest', format = 'json');

CREATE SOURCE auction (
    id          BIGINT,
    item_name   STRING,
    description STRING,
    initial_bid BIGINT,
    reserve     BIGINT,
    date_time   TIMESTAMP,
    expires     TIMESTAMP,
    seller      BIGINT,
    category    BIGINT,
    extra       STRING,
    WATERMARK FOR date_time AS date_time - INTERVAL '${DELAY}' SECOND
) WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
        subscribe = '${PREFIX}auction', startingOffsets = 'earliest', format = 'json');

CREATE SOURCE bid (
    auction   BIGINT,
    bidder    BIGINT,
    price     BIGINT,
    channel   STRING,
    url       STRING,
    date_time TIMESTAMP,
    extra     STRING,
    WATERMARK FOR date_time AS date_time - INTERVAL '${DELAY}' SECOND
) WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
        subscribe = '${PREFIX}bid', startingOffsets = 'earliest', format = 'json');
