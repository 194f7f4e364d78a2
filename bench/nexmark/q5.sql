-- Nexmark q5, hot items: the number of bids per auction in sliding windows of
-- 10 seconds every 2 seconds. The reference query then keeps, per window, the
-- auctions whose count is the window's maximum, by joining this aggregation
-- with its own per-window max; rtsql does not aggregate or join an
-- aggregation's result yet, so the flow stops at the per-window counts (in
-- update mode: the last row of each (window, auction) is the final count), and
-- the hot items are the rows with the largest num of their window. The sink
-- is keyed by auction so that a key's updates stay in order on any partition.
CREATE SINK q5_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
                          topic = '${PREFIX}q5_out', format = 'json', key = 'auction');
CREATE FLOW q5 INTO q5_out TRIGGER REALTIME AS
SELECT auction, count(*) AS num, window.start AS starttime, window.end AS endtime
FROM bid
GROUP BY window(date_time, '10 seconds', '2 seconds'), auction;
