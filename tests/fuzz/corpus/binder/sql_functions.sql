CREATE FUNCTION net_price(price DOUBLE, pct INT) RETURNS DOUBLE AS price - price * pct / 100;
CREATE FUNCTION label(name STRING, price DOUBLE, tier BIGINT) RETURNS STRING
AS concat(upper(name), ':', CAST(net_price(price, 10) AS STRING), ':', CAST(tier * 2 AS STRING));
CREATE FUNCTION IF NOT EXISTS net_price(price DOUBLE) RETURNS DOUBLE AS price;
CREATE OR REPLACE FUNCTION zip_of(s STRUCT<country STRING, zip INT>) RETURNS BIGINT AS s.zip;
SELECT net_price(80, 25), label('ab', 200, 3), net_price(NULL, 10);
SELECT user_id, net_price(amount + 1, 50) AS net, label(url, amount, n) AS l, zip_of(info) FROM clicks
WHERE net_price(amount, 20) > 10;
CREATE FLOW p INTO alerts AS SELECT user_id, sum(net_price(amount, n)) AS total FROM clicks GROUP BY user_id;
SELECT net_price(amount) FROM clicks;
SELECT label(url, amount, amount) FROM clicks;
CREATE FUNCTION bad(a INT) RETURNS INT AS bad(a - 1);
CREATE FUNCTION bad(a INT) RETURNS INT AS sum(a);
DROP FUNCTION net_price;
DROP FUNCTION label;
DROP FUNCTION IF EXISTS label;
