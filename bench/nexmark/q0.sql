-- Nexmark q0, pass-through: every bid as it is. Measures the cost of reading,
-- decoding, encoding and writing.
CREATE SINK q0_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
                          topic = '${PREFIX}q0_out', format = 'json');
CREATE FLOW q0 INTO q0_out TRIGGER REALTIME AS
SELECT auction, bidder, price, date_time, extra FROM bid;
