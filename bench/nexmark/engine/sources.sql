-- The three Nexmark streams made inside rtsqld by the nexmark source, for the
-- engine-only runs of bench/nexmark/nexmark_engine.sh (the broker runs use
-- ../sources.sql). Placeholders: ${EVENTS} (events of the run, all kinds
-- together), ${PARTITIONS} (generator partitions of each source), ${DELAY}
-- (watermark delay). Every source makes the same event sequence and keeps the
-- events of its own table, so ids and times agree between them.
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
) WITH (connector = 'nexmark', 'nexmark.table' = 'person', events = '${EVENTS}',
        partitions = '${PARTITIONS}');

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
) WITH (connector = 'nexmark', 'nexmark.table' = 'auction', events = '${EVENTS}',
        partitions = '${PARTITIONS}');

CREATE SOURCE bid (
    auction   BIGINT,
    bidder    BIGINT,
    price     BIGINT,
    channel   STRING,
    url       STRING,
    date_time TIMESTAMP,
    extra     STRING,
    WATERMARK FOR date_time AS date_time - INTERVAL '${DELAY}' SECOND
) WITH (connector = 'nexmark', 'nexmark.table' = 'bid', events = '${EVENTS}',
        partitions = '${PARTITIONS}');
