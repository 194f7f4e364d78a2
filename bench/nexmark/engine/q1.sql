-- Nexmark q1, currency conversion, engine-only: the flow of ../q1.sql into a blackhole.
CREATE SINK q1_out WITH (connector = 'blackhole');
CREATE FLOW q1 INTO q1_out TRIGGER REALTIME AS
SELECT auction, bidder, 0.908 * price AS price, date_time, extra FROM bid;
