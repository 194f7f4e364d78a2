-- Nexmark q21: Add channel id: a channel_id column from the channel's name or the url's
-- channel_id parameter (CASE, lower, REGEXP_EXTRACT). Flink's REGEXP_EXTRACT
-- gives NULL when nothing matches, rtsql's (Spark's) ''; every generated bid
-- has a known channel or a channel_id parameter, so the rows are the same.
-- Flink's text: flink/q21.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q21 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q21_out', format = 'json');

CREATE FLOW q21 INTO nexmark_q21 TRIGGER REALTIME AS
SELECT
    auction, bidder, price, channel,
    CASE
        WHEN lower(channel) = 'apple' THEN '0'
        WHEN lower(channel) = 'google' THEN '1'
        WHEN lower(channel) = 'facebook' THEN '2'
        WHEN lower(channel) = 'baidu' THEN '3'
        ELSE REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2)
        END
    AS channel_id FROM bid
    where REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2) is not null or
          lower(channel) in ('apple', 'google', 'facebook', 'baidu');
