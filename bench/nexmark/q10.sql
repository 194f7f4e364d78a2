-- Nexmark q10: log to file system: every bid with its day and minute, to
-- files. Flink writes csv files partitioned by day and minute (dt, hm) into a
-- directory, committing a partition a minute after its time; rtsql's file sink
-- appends JSON lines to one file (${OUTPUT_DIR}/q10.jsonl), so the
-- partitioning columns are columns of each line.
-- Flink's text: flink/q10.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q10 WITH (connector = 'file', path = '${OUTPUT_DIR}/q10.jsonl', format = 'json');

CREATE FLOW q10 INTO nexmark_q10 TRIGGER REALTIME AS
SELECT auction, bidder, price, date_time, extra, DATE_FORMAT(date_time, 'yyyy-MM-dd') AS dt, DATE_FORMAT(date_time, 'HH:mm') AS hm
FROM bid;
