-- Nexmark q14, calculation, engine-only: the flow of ../q14.sql into a blackhole.
CREATE SINK q14_out WITH (connector = 'blackhole');
CREATE FLOW q14 INTO q14_out TRIGGER REALTIME AS
SELECT auction, bidder, 0.908 * price AS price,
       CASE WHEN hour(date_time) >= 8 AND hour(date_time) <= 18 THEN 'dayTime'
            WHEN hour(date_time) <= 6 OR hour(date_time) >= 20 THEN 'nightTime'
            ELSE 'otherTime' END AS bidTimeType,
       date_time, extra,
       length(extra) - length(replace(extra, 'c', '')) AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;
