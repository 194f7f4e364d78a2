-- Enrichment with a static table: purchases on the topic `purchases` name a
-- merchant by id; the merchants' names, categories and risk scores are a CSV
-- file read into a table. Each purchase goes to `enriched_purchases` with its
-- merchant's details (NULL ones for a merchant the file does not list). The
-- file is the server's: give its path as the variable merchants_csv.
--
--   rtsqld --embedded-kafka &
--   rtsql -v merchants_csv=$PWD/examples/data/merchants.csv -f examples/enrichment.sql
CREATE TABLE merchants (
    merchant_id STRING,
    name        STRING,
    category    STRING,
    risk        DOUBLE
) WITH (
    connector = 'file',
    path = :'merchants_csv',
    format = 'csv',
    header = 'true'
);

CREATE SOURCE purchases (
    purchase_id STRING,
    merchant_id STRING,
    amount      DOUBLE,
    ts          TIMESTAMP
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'purchases',
    startingOffsets = 'earliest',
    format = 'json'
);

CREATE SINK enriched_purchases WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    topic = 'enriched_purchases',
    format = 'json'
);

CREATE FLOW enrich_purchases INTO enriched_purchases AS
SELECT p.purchase_id, p.amount, m.name AS merchant, m.category, m.risk
FROM purchases p LEFT JOIN merchants m ON p.merchant_id = m.merchant_id;
