-- A fraud score per card, kept by a stateful processor: each payment from
-- `card_payments` is scored from what the card did in the last 10 minutes
-- (how many payments, from how many countries, and whether this amount is
-- far above the card's recent ones), and the score goes to `card_scores`,
-- keyed by card. The processor keeps its state per card in rtsql's state
-- store, checkpointed with the flow; every state has a 10-minute TTL, so a
-- card that pays nothing for 10 minutes starts from a clean slate.
--
--   rtsqld --embedded-kafka &
--   rtsql -f examples/fraud_score.sql
CREATE SOURCE card_payments (
    card_id STRING,
    amount  DOUBLE,
    country STRING
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    subscribe = 'card_payments',
    startingOffsets = 'earliest',
    format = 'json'
);

CREATE SINK card_scores WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = 'embedded',
    topic = 'card_scores',
    format = 'json',
    key = 'card_id'
);

CREATE PROCESSOR fraud_score
RETURNS (payments BIGINT, countries INT, score INT, suspicious BOOLEAN)
LANGUAGE PYTHON AS $$
class FraudScore:
    TTL_MS = 10 * 60 * 1000

    def init(self, handle):
        self.threshold = int(handle.options.get("threshold", "50"))
        self.payments = handle.value_state("payments", ttl_ms=self.TTL_MS)
        self.countries = handle.map_state("countries", ttl_ms=self.TTL_MS)
        self.recent = handle.list_state("recent_amounts", ttl_ms=self.TTL_MS)

    def handle_input_rows(self, key, rows, timer_values):
        for row in rows:
            n = (self.payments.get() or 0) + 1
            self.payments.update(n)
            self.countries.put(row["country"], self.countries.get(row["country"], 0) + 1)
            before = self.recent.get()
            self.recent.put((before + [row["amount"]])[-5:])
            score = 10 * min(n - 1, 5) + 25 * (len(self.countries.keys()) - 1)
            if before and row["amount"] > 3 * sum(before) / len(before):
                score += 30
            yield (n, len(self.countries.keys()), score, score >= self.threshold)
$$;

CREATE FLOW score_cards INTO card_scores AS
SELECT card_id, payments, countries, score, suspicious
FROM TRANSFORM(card_payments PARTITION BY card_id
               USING PROCESSOR fraud_score WITH ('threshold' = '50'));
