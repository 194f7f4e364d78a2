-- Feeds fraud_score.sql: card c1 pays three times in France, then a large
-- amount from Brazil (a new country and over three times its average: score
-- 85, suspicious); card c2 pays once (score 0).
--
--   rtsql -f examples/fraud_score.sql && rtsql -f examples/fraud_score_input.sql
INSERT INTO card_payments VALUES
    ('c1', 20.0, 'FR'),
    ('c1', 25.0, 'FR'),
    ('c2', 15.0, 'DE'),
    ('c1', 30.0, 'FR'),
    ('c1', 500.0, 'BR');
