"""The scripts under examples/ deployed as they are, with `rtsql -f`, on one
rtsqld with its embedded broker: each is fed seeded records and its output is
checked against the answer computed here in Python from the same records
(never from what rtsql wrote): the fraud velocity alerts, the deduplicated
events, the purchases enriched from the merchants CSV file, and each minute's
top three sales."""

import csv
import random
import time
from collections import Counter, defaultdict
from datetime import datetime, timedelta

import pytest
from confluent_kafka import Consumer, TopicPartition

from changelog import apply_debezium
from conftest import SOURCE_DIR, Kafka, unique

EXAMPLES = SOURCE_DIR / "examples"
MERCHANTS_CSV = EXAMPLES / "data" / "merchants.csv"
BASE = datetime(2024, 5, 1, 12, 0, 0)
EPOCH = datetime(1970, 1, 1)  # timestamps are UTC, without a zone
SCRIPTS = ["fraud_velocity.sql", "dedup_retries.sql", "enrichment.sql", "top_n_per_window.sql"]


def stamp(t):
    return t.strftime("%Y-%m-%d %H:%M:%S")


def parse_time(text):
    """A timestamp as the JSON sink writes it ('2024-05-01 12:00:20', with or
    without a 'T', fractional seconds or a 'Z')."""
    return datetime.fromisoformat(text.replace("T", " ").rstrip("Z")).replace(tzinfo=None)


def records_in(kafka, topic):
    """How many records TOPIC holds now (the sum of its partitions' end offsets)."""
    c = Consumer({"bootstrap.servers": kafka.bootstrap, "group.id": unique("count")})
    try:
        parts = c.list_topics(topic, timeout=10).topics[topic].partitions
        return sum(c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts)
    finally:
        c.close()


@pytest.fixture(scope="module")
def deployed(server):
    """Every example deployed with rtsql -f, from the source tree's root."""
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    kafka.partitions = {topic: kafka.create_topic(topic)
                        for topic in ("payments", "order_events", "purchases", "sales")}
    for script in SCRIPTS:
        server.rtsql("-v", f"merchants_csv={MERCHANTS_CSV}", "-f", str(EXAMPLES / script),
                     cwd=str(SOURCE_DIR))
    flows = {row[0]: row[2] for row in server.query("SHOW FLOWS")}
    for flow in ("card_velocity", "dedup_order_events", "enrich_purchases", "top_sales_per_minute"):
        assert flows.get(flow) == "running", flows
    return kafka


def test_fraud_velocity_alerts(server, deployed):
    rng = random.Random(7)
    payments = []
    # Six cards over three minutes: two use their card in bursts.
    for card, per_minute in (("c1", 2), ("c2", 3), ("c3", 9), ("c4", 1), ("c5", 6), ("c6", 4)):
        for _ in range(per_minute * 3):
            t = BASE + timedelta(seconds=rng.randrange(0, 180))
            payments.append({"card_id": card, "merchant": f"m{rng.randrange(1, 6)}",
                             "amount": round(rng.uniform(1, 200), 2), "ts": t})
    payments.sort(key=lambda p: p["ts"])
    # Payments ten minutes on, one in every partition of the topic (the
    # watermark is the smallest over the partitions), move the watermark past
    # every window above: the first round raises it, the second, read after
    # it, carries it to the windows. Each has a card of its own, below the
    # threshold, and their windows stay open.
    partitions = deployed.partitions["payments"]
    flush = [[{"card_id": f"flush{part}", "merchant": "m1", "amount": 1.0,
               "ts": BASE + timedelta(minutes=10, seconds=s)} for part in range(partitions)]
             for s in (0, 1)]
    watermark = flush[0][0]["ts"] - timedelta(seconds=5)

    # Sliding windows of 60 s every 20 s, aligned to the epoch like Spark's.
    counts, totals = Counter(), defaultdict(float)
    for p in payments + flush[0] + flush[1]:
        epoch = int((p["ts"] - EPOCH).total_seconds())
        last_start = epoch - epoch % 20
        for start in range(last_start, epoch - 60, -20):
            key = (p["card_id"], EPOCH + timedelta(seconds=start))
            counts[key] += 1
            totals[key] += p["amount"]
    expected = {(card, start, n, round(totals[(card, start)], 6))
                for (card, start), n in counts.items()
                if n >= 5 and start + timedelta(seconds=60) <= watermark}
    assert expected, "the seed gives no alert: the test would check nothing"

    deployed.produce("payments", [{**p, "ts": stamp(p["ts"])} for p in payments])
    for part, p in enumerate(flush[0]):
        deployed.produce("payments", [{**p, "ts": stamp(p["ts"])}], partition=part)
    server.wait_progress(
        "card_velocity", lambda p: p.get("numInputRows") == len(payments) + partitions, timeout=30)
    for part, p in enumerate(flush[1]):
        deployed.produce("payments", [{**p, "ts": stamp(p["ts"])}], partition=part)
    got = deployed.consume_json("velocity_alerts", n=len(expected), timeout=30)
    alerts = set()
    for a in got:
        start, end = parse_time(a["window_start"]), parse_time(a["window_end"])
        assert end - start == timedelta(seconds=60), a
        alerts.add((a["card_id"], start, a["payments"], round(a["total"], 6)))
    assert len(got) == len(alerts), f"an alert was written twice: {got}"
    assert alerts == expected


def test_dedup_of_retried_events(server, deployed):
    rng = random.Random(11)
    events, sent = [], []
    for i in range(40):
        e = {"event_id": f"e{i}", "order_id": f"o{i % 9}",
             "status": rng.choice(["created", "paid", "shipped"]),
             "ts": stamp(BASE + timedelta(seconds=i))}
        events.append(e)
        sent.append(e)
        # Up to two retries, some right away, some a few events later.
        for _ in range(rng.randrange(0, 3)):
            sent.insert(len(sent) - rng.randrange(0, min(3, len(sent))), e)
    assert len(sent) > len(events)
    deployed.produce("order_events", sent)
    server.wait_progress("dedup_order_events", lambda p: p.get("numInputRows") == len(sent)
                         and p.get("sink", {}).get("numOutputRows") == len(events), timeout=30)
    got = deployed.consume_json("unique_order_events", n=len(events), timeout=30)
    rows = Counter((g["event_id"], g["order_id"], g["status"], parse_time(g["ts"])) for g in got)
    expected = Counter((e["event_id"], e["order_id"], e["status"], parse_time(e["ts"]))
                       for e in events)
    assert rows == expected


def test_enrichment_with_the_merchants_file(server, deployed):
    with open(MERCHANTS_CSV, newline="") as f:
        merchants = {r["merchant_id"]: r for r in csv.DictReader(f)}
    rng = random.Random(5)
    purchases = [{"purchase_id": f"p{i}", "merchant_id": f"m{rng.randrange(1, 8)}",
                  "amount": round(rng.uniform(1, 500), 2), "ts": stamp(BASE + timedelta(seconds=i))}
                 for i in range(30)]
    assert any(p["merchant_id"] not in merchants for p in purchases)
    expected = Counter()
    for p in purchases:
        m = merchants.get(p["merchant_id"])
        expected[(p["purchase_id"], p["amount"], m and m["name"], m and m["category"],
                  m and float(m["risk"]))] += 1
    deployed.produce("purchases", purchases)
    got = deployed.consume_json("enriched_purchases", n=len(purchases), timeout=30)
    rows = Counter((g["purchase_id"], g["amount"], g["merchant"], g["category"], g["risk"])
                   for g in got)
    assert rows == expected


def test_top_three_sales_per_minute(server, deployed):
    rng = random.Random(3)
    amounts = rng.sample(range(100, 100000), 45)  # distinct: no ties to rank
    sales = [{"sale_id": f"s{i}", "store": f"store{rng.randrange(1, 4)}", "amount": amounts[i] / 100,
              "ts": BASE + timedelta(seconds=rng.randrange(0, 180))} for i in range(45)]
    by_minute = defaultdict(list)
    for s in sales:
        by_minute[s["ts"].replace(second=0)].append(s)
    expected = Counter()
    for minute, rows in by_minute.items():
        for rank, s in enumerate(sorted(rows, key=lambda s: -s["amount"])[:3], 1):
            expected[(minute, s["sale_id"], s["store"], s["amount"], rank)] += 1

    deployed.produce("sales", [{**s, "ts": stamp(s["ts"])} for s in sales])
    server.wait_progress("top_sales_per_minute",
                         lambda p: p.get("numInputRows") == len(sales), timeout=30)
    # Every change the sink wrote so far, applied, until they leave the answer.
    deadline = time.monotonic() + 30
    while True:
        got = deployed.consume_json("top_sales", n=records_in(deployed, "top_sales"), timeout=10)
        table = Counter()
        for row, n in apply_debezium(got).items():
            r = dict(row)
            table[(parse_time(r["minute"]), r["sale_id"], r["store"], r["amount"], r["rn"])] += n
        if table == expected or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert table == expected
