-- Nexmark q8: Monitor new users: the persons who opened an auction in the 10-second window
-- in which they registered. Two windowed aggregations (TUMBLE table functions
-- in Flink, window(date_time, '10 seconds') with EMIT ON WINDOW CLOSE here)
-- and a join of their results (debezium-json).
-- Flink's text: flink/q8.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q8 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q8_out', format = 'debezium-json');

CREATE FLOW q8 INTO nexmark_q8 TRIGGER REALTIME AS
SELECT P.id, P.name, P.starttime
FROM (
  SELECT id, name,
        window.start AS starttime,
        window.end AS endtime
  FROM person
  GROUP BY id, name, window(date_time, '10 seconds')
  EMIT ON WINDOW CLOSE
) P
JOIN (
  SELECT seller,
        window.start AS starttime,
        window.end AS endtime
  FROM auction
  GROUP BY seller, window(date_time, '10 seconds')
  EMIT ON WINDOW CLOSE
) A
ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime;
