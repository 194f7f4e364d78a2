-- Nexmark q2, selection: the bids on a set of auctions (every 123rd).
CREATE SINK q2_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
                          topic = '${PREFIX}q2_out', format = 'json');
CREATE FLOW q2 INTO q2_out TRIGGER REALTIME AS
SELECT auction, price FROM bid WHERE mod(auction, 123) = 0;
