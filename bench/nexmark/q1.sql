-- Nexmark q1, currency conversion: bid prices from dollars to euros.
CREATE SINK q1_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
                          topic = '${PREFIX}q1_out', format = 'json');
CREATE FLOW q1 INTO q1_out TRIGGER REALTIME AS
SELECT auction, bidder, 0.908 * price AS price, date_time, extra FROM bid;
