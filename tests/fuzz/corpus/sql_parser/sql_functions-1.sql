CREATE OR REPLACE FUNCTION label(name STRING, price DOUBLE, tier BIGINT) RETURNS STRING
AS concat(upper(name), ':', CAST(net_price(price, 10) AS STRING), ':', CAST(tier * 2 AS STRING))
