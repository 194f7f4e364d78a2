-- Nexmark q0, pass-through, engine-only: the flow of ../q0.sql into a blackhole.
CREATE SINK q0_out WITH (connector = 'blackhole');
CREATE FLOW q0 INTO q0_out TRIGGER REALTIME AS
SELECT auction, bidder, price, date_time, extra FROM bid;
