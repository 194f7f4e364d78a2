-- Nexmark q6: Average selling price by seller: the average of the winning bids of each
-- seller's last 10 closed auctions. Flink's text does not run on Flink
-- ("the OVER WINDOW operator doesn't support to consume retractions") and
-- does not resolve as written (A is not visible where it is used, rownum is
-- filtered in the SELECT that defines it); this is the same query with the
-- row number filtered in an enclosing SELECT. ROW_NUMBER top-1 per auction,
-- then AVG OVER the seller's last 11 rows (10 PRECEDING and the current one),
-- over a retracting input (debezium-json). Q.id orders the winning bids of one
-- seller in one millisecond, which Flink's text leaves to chance, so that the
-- result is one (and DuckDB's the same).
-- Flink's text: flink/q6.sql; the differences: docs/nexmark.md.
CREATE SINK nexmark_q6 WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${PREFIX}q6_out', format = 'debezium-json');

CREATE FLOW q6 INTO nexmark_q6 TRIGGER REALTIME AS
SELECT
    Q.seller,
    AVG(Q.price) OVER
        (PARTITION BY Q.seller ORDER BY Q.date_time, Q.id
         ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)
        AS avg_price
FROM (
    SELECT * FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY J.id, J.seller ORDER BY J.price DESC) AS rownum
        FROM (SELECT A.id, A.seller, B.price, B.date_time
            FROM auction AS A,
                bid AS B
            WHERE A.id = B.auction
                and B.date_time between A.date_time and A.expires) J
    ) R
    WHERE rownum <= 1
) AS Q;
