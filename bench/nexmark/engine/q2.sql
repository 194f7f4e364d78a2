-- Nexmark q2, selection, engine-only: the flow of ../q2.sql into a blackhole.
CREATE SINK q2_out WITH (connector = 'blackhole');
CREATE FLOW q2 INTO q2_out TRIGGER REALTIME AS
SELECT auction, price FROM bid WHERE mod(auction, 123) = 0;
