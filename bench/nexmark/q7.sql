-- Nexmark q7: Highest bid: the bids with the highest price of their 10-second window.
-- Flink's TUMBLE window table function is rtsql's window(date_time, '10
-- seconds') with EMIT ON WINDOW CLOSE. A join of the bids with an
-- aggregation's result (debezium-json: it takes whatever changes the join
-- emits).
-- Flink's text: flink/q7.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q7 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q7_out', format = 'debezium-json');

CREATE FLOW q7 INTO nexmark_q7 TRIGGER REALTIME AS
SELECT B.auction, B.price, B.bidder, B.date_time, B.extra
from bid B
JOIN (
  SELECT MAX(price) AS maxprice, window.end as date_time
  FROM bid
  GROUP BY window(date_time, '10 seconds')
  EMIT ON WINDOW CLOSE
) B1
ON B.price = B1.maxprice
WHERE B.date_time BETWEEN B1.date_time  - INTERVAL '10' SECOND AND B1.date_time;
