-- Feeds enrichment.sql: three purchases, the last at a merchant the CSV file
-- does not list (its merchant columns come out NULL).
--
--   rtsql -v merchants_csv=$PWD/examples/data/merchants.csv -f examples/enrichment.sql
--   rtsql -f examples/enrichment_input.sql
INSERT INTO purchases VALUES
    ('p1', 'm1', 4.5,  TIMESTAMP '2024-05-01 12:00:00'),
    ('p2', 'm4', 250.0, TIMESTAMP '2024-05-01 12:00:01'),
    ('p3', 'zz', 12.0, TIMESTAMP '2024-05-01 12:00:02');
