-- Nexmark q22: Get URL directories: the first three directories of each bid's url.
-- Flink's SPLIT_INDEX(s, d, i) (0-based, NULL past the end) is Spark's
-- get(split(s, d), i), which means the same.
-- Flink's text: flink/q22.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q22 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q22_out', format = 'json');

CREATE FLOW q22 INTO nexmark_q22 TRIGGER REALTIME AS
SELECT
    auction, bidder, price, channel,
    get(split(url, '/'), 3) as dir1,
    get(split(url, '/'), 4) as dir2,
    get(split(url, '/'), 5) as dir3 FROM bid;
