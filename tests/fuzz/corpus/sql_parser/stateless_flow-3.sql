CREATE FLOW big_spenders INTO big_clicks
    TRIGGER REALTIME CHECKPOINT INTERVAL '10 seconds'
AS
SELECT user_id, upper(url) AS url, amount * 2 AS doubled
FROM clicks
WHERE amount > 10