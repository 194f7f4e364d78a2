-- Nexmark q14: Calculation: a price conversion, a filter on it, a CASE on the hour of the
-- bid and the number of letters 'c' in extra. Flink calls a user-defined
-- function count_char(extra, 'c'); here it is the difference of two lengths.
-- Flink's text: flink/q14.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q14 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q14_out', format = 'json');

CREATE FLOW q14 INTO nexmark_q14 TRIGGER REALTIME AS
SELECT
    auction,
    bidder,
    0.908 * price as price,
    CASE
        WHEN HOUR(date_time) >= 8 AND HOUR(date_time) <= 18 THEN 'dayTime'
        WHEN HOUR(date_time) <= 6 OR HOUR(date_time) >= 20 THEN 'nightTime'
        ELSE 'otherTime'
    END AS bidTimeType,
    date_time,
    extra,
    length(extra) - length(replace(extra, 'c', '')) AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;
