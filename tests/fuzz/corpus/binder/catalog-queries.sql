SELECT user_id, count(*) AS n, sum(amount) FROM clicks GROUP BY user_id, window(ts, INTERVAL '1' MINUTE);
CREATE FLOW f1 INTO alerts TRIGGER REALTIME AS
  SELECT c.user_id, u.name, c.amount * 2 AS doubled, info.country, tags[1]
  FROM clicks c JOIN users u ON c.user_id = u.id AND u.ts BETWEEN c.ts - INTERVAL '1' MINUTE AND c.ts
  WHERE c.amount > 10 AND c.url LIKE '%checkout%';
EXPLAIN SELECT CAST(value AS STRING) AS v, upper(CAST(key AS STRING)) FROM rawin;
CREATE FLOW f2 INTO rawout AS SELECT CAST(user_id AS BINARY) AS value FROM clicks;
INSERT INTO countries VALUES ('fr', 'France'), ('de', 'Germany');
SELECT c.user_id, k.name FROM clicks c JOIN countries k ON c.info.country = k.code;
SELECT DISTINCT ON (user_id) user_id, ts FROM clicks ORDER BY ts;
SELECT session_window(ts, INTERVAL '30' SECOND) AS w, count(*) FROM clicks GROUP BY 1;
SELECT CASE WHEN n > 1 THEN 'a' ELSE 'b' END, coalesce(big, 0), ok IS TRUE FROM clicks
UNION ALL SELECT name, 1, true FROM users;
