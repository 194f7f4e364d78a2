SELECT user_id
FROM clicks
WHERE amount > > 1