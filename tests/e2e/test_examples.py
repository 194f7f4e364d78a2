"""The scripts under examples/ deployed as they are, with `rtsql -f`, on one
rtsqld with its embedded broker: each is fed seeded records and its output is
checked against the answer computed here in Python from the same records
(never from what rtsql wrote): the fraud velocity alerts, the deduplicated
events, the purchases enriched from the merchants CSV file, each minute's
top three sales, the users' click sessions, the per-customer totals of an
orders table's changes, the sensor readings over their thresholds, the fraud
scores per card and the sessions with a custom inactivity timeout of the
stateful processors. Then, on a server of its own, each example is fed only
by its `*_input.sql` (INSERT INTO its sources) and writes what its README
shows."""

import csv
import json
import random
import time
from collections import Counter, defaultdict
from datetime import datetime, timedelta

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from changelog import apply_debezium, apply_upsert
from conftest import SOURCE_DIR, Kafka, Server, unique

EXAMPLES = SOURCE_DIR / "examples"
MERCHANTS_CSV = EXAMPLES / "data" / "merchants.csv"
BASE = datetime(2024, 5, 1, 12, 0, 0)
EPOCH = datetime(1970, 1, 1)  # timestamps are UTC, without a zone
SCRIPTS = ["fraud_velocity.sql", "dedup_retries.sql", "enrichment.sql", "top_n_per_window.sql",
           "sessionization.sql", "cdc_aggregate.sql", "iot_anomaly.sql", "fraud_score.sql",
           "custom_sessions.sql"]


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


class ExamplesServer(Server):
    """An rtsqld with task slots for every example at once: together they hold
    more than the default 64 (each stage after a shuffle takes 8)."""

    def extra_args(self):
        return ["--slots", "128"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ExamplesServer(tmp_path_factory.mktemp("rtsqld_examples"))
    s.start()
    yield s
    code = s.stop()
    assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{s.log_tail()}"


@pytest.fixture(scope="module")
def deployed(server):
    """Every example deployed with rtsql -f, from the source tree's root."""
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    kafka.partitions = {topic: kafka.create_topic(topic)
                        for topic in ("payments", "order_events", "purchases", "sales",
                                      "clickstream", "orders_cdc", "readings", "thresholds",
                                      "card_payments", "app_clicks")}
    for script in SCRIPTS:
        server.rtsql("-v", f"merchants_csv={MERCHANTS_CSV}", "-f", str(EXAMPLES / script),
                     cwd=str(SOURCE_DIR))
    flows = {row[0]: row[2] for row in server.query("SHOW FLOWS")}
    for flow in ("card_velocity", "dedup_order_events", "enrich_purchases", "top_sales_per_minute",
                 "sessionize_clicks", "orders_per_customer", "detect_anomalies", "score_cards",
                 "sessionize_app"):
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


def test_sessions_of_a_clickstream(server, deployed):
    rng = random.Random(23)
    gap = timedelta(minutes=5)
    clicks = []
    # Each user clicks in bursts: clicks 5 to 90 s apart, bursts 7 to 20
    # minutes apart, so that no pause is near the 5-minute gap.
    for user in ("u1", "u2", "u3", "u4", "u5"):
        t = BASE + timedelta(seconds=rng.randrange(0, 600))
        for _ in range(rng.randrange(1, 4)):
            for _ in range(rng.randrange(1, 7)):
                clicks.append({"user_id": user, "url": rng.choice(["/home", "/cart", "/search"]),
                               "ts": t})
                t += timedelta(seconds=rng.randrange(5, 91))
            t += timedelta(minutes=rng.randrange(7, 21))
    clicks.sort(key=lambda c: c["ts"])
    # Clicks two hours on, as in the velocity check: one per partition, twice,
    # move the watermark past every session above; theirs stay open.
    partitions = deployed.partitions["clickstream"]
    flush = [[{"user_id": f"flush{part}", "url": "/home", "ts": BASE + timedelta(hours=2, seconds=s)}
              for part in range(partitions)] for s in (0, 1)]

    # A user's clicks sorted by time; a pause of the gap or more starts a new session.
    by_user = defaultdict(list)
    for c in clicks:
        by_user[c["user_id"]].append(c["ts"])
    expected = set()
    for user, times in by_user.items():
        times.sort()
        session = [times[0]]
        for t in times[1:] + [None]:
            if t is not None and t - session[-1] < gap:
                session.append(t)
                continue
            expected.add((user, session[0], session[-1], session[-1] + gap, len(session)))
            session = [t]
    assert len(expected) > len(by_user), "the seed gives one session per user"

    deployed.produce("clickstream", [{**c, "ts": stamp(c["ts"])} for c in clicks])
    for part, c in enumerate(flush[0]):
        deployed.produce("clickstream", [{**c, "ts": stamp(c["ts"])}], partition=part)
    server.wait_progress(
        "sessionize_clicks", lambda p: p.get("numInputRows") == len(clicks) + partitions, timeout=30)
    for part, c in enumerate(flush[1]):
        deployed.produce("clickstream", [{**c, "ts": stamp(c["ts"])}], partition=part)
    got = deployed.consume_json("user_sessions", n=len(expected), timeout=30, grace=0.3)
    sessions = {(s["user_id"], parse_time(s["session_start"]), parse_time(s["last_click"]),
                 parse_time(s["session_end"]), s["clicks"]) for s in got}
    assert len(got) == len(sessions), f"a session was written twice: {got}"
    assert sessions == expected


def produce_keyed(kafka, topic, records):
    """Sends (key, value) pairs in order, a value None as a tombstone."""
    p = Producer({"bootstrap.servers": kafka.bootstrap, "linger.ms": 5})
    errors = []
    for key, value in records:
        p.produce(topic, key=key, value=value if value is None else json.dumps(value),
                  on_delivery=lambda err, _msg: err is not None and errors.append(err))
    assert p.flush(30) == 0, f"records not delivered to {topic}"
    assert not errors, errors


def test_cdc_changes_into_per_customer_totals(server, deployed):
    rng = random.Random(31)
    table, changes = {}, []  # the orders table as it stands; Debezium's records of it

    def change(op, before, after):
        key = (before or after)["order_id"]
        changes.append((key, {"before": before, "after": after, "op": op,
                              "source": {"table": "orders"}, "ts_ms": 1714564800000 + len(changes)}))
        if op == "d":
            changes.append((key, None))  # Debezium's tombstone after a delete
        if after is None:
            del table[key]
        else:
            table[key] = after

    def insert(customer):
        order = {"order_id": f"o{len(changes)}", "customer_id": customer,
                 "amount": round(rng.uniform(5, 500), 2), "status": rng.choice(["new", "paid"])}
        change("c", None, order)

    # c9 has two orders, then none: one is cancelled, the other deleted.
    insert("c9")
    insert("c9")
    for _ in range(80):
        if len(table) < 4 or rng.random() < 0.45:
            insert(f"c{rng.randrange(1, 7)}")
            continue
        before = table[rng.choice(sorted(table))]
        if before["customer_id"] == "c9":
            continue
        if rng.random() < 0.3:
            change("d", before, None)
            continue
        after = dict(before)
        what = rng.choice(["amount", "status", "customer"])
        if what == "amount":
            after["amount"] = round(rng.uniform(5, 500), 2)
        elif what == "status":
            after["status"] = rng.choice(["paid", "shipped", "cancelled", "new"])
        else:
            after["customer_id"] = f"c{rng.randrange(1, 7)}"
        change("u", before, after)
    c9 = sorted(o for o in table if table[o]["customer_id"] == "c9")
    change("u", table[c9[0]], {**table[c9[0]], "status": "cancelled"})
    change("d", table[c9[1]], None)

    totals = defaultdict(lambda: [0, 0.0])
    for order in table.values():
        if order["status"] != "cancelled":
            totals[order["customer_id"]][0] += 1
            totals[order["customer_id"]][1] += order["amount"]
    expected = {c: (n, round(total, 6)) for c, (n, total) in totals.items()}
    ops = Counter(v["op"] for _, v in changes if v)
    assert ops["u"] >= 10 and ops["d"] >= 5 and len(expected) >= 4, ops

    produce_keyed(deployed, "orders_cdc", changes)
    # The upsert topic as a table (each key's last record; a tombstone removes
    # it), read until it holds the expected totals.
    deadline = time.monotonic() + 30
    while True:
        records = deployed.consume("customer_totals", n=records_in(deployed, "customer_totals"),
                                   timeout=10)
        got = {k: (r["customer_id"], r["open_orders"], round(r["total"], 6))
               for k, r in apply_upsert(records).items()}
        if got == {c: (c, n, t) for c, (n, t) in expected.items()} or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert got == {c: (c, n, t) for c, (n, t) in expected.items()}
    # c9 had a row, then a tombstone.
    assert [m.value() is None for m in records if m.key() == b"c9"][-1:] == [True]


def test_readings_over_their_device_threshold(server, deployed):
    rng = random.Random(41)
    base_level = {"d1": 20.0, "d2": 35.0, "d3": 50.0, "d4": 65.0}
    thresholds, readings = [], []
    for minute in range(4):
        start = BASE + timedelta(minutes=minute)
        for device, level in base_level.items():
            # d4's calibration skips minute 2: its readings then meet no threshold.
            if device != "d4" or minute != 2:
                thresholds.append({"device_id": device, "ts": start,
                                   "max_value": round(level + rng.uniform(2, 8), 2)})
            for second in sorted(rng.sample(range(60), 6)):
                readings.append({"device_id": device, "ts": start + timedelta(seconds=second),
                                 "value": round(level + rng.uniform(-10, 12), 2)})
    readings.sort(key=lambda r: r["ts"])

    # The threshold in force: the one its device was sent at the start of the
    # reading's minute.
    in_force = {(t["device_id"], t["ts"]): t for t in thresholds}
    expected = set()
    for r in readings:
        t = in_force.get((r["device_id"], r["ts"].replace(second=0)))
        if t is not None and r["value"] > t["max_value"]:
            expected.add((r["device_id"], r["ts"], r["value"], t["max_value"], t["ts"]))
    assert 5 <= len(expected) < len(readings) // 2, len(expected)
    assert any(r["device_id"] == "d4" and r["ts"].minute == 2
               and r["value"] > base_level["d4"] + 8 for r in readings)

    # The readings first: each waits in the join's state for its threshold.
    deployed.produce("readings", [{**r, "ts": stamp(r["ts"])} for r in readings])
    deployed.produce("thresholds", [{**t, "ts": stamp(t["ts"])} for t in thresholds])
    progress = server.wait_progress(
        "detect_anomalies", lambda p: p.get("numInputRows") == len(thresholds) + len(readings)
        and p.get("sink", {}).get("numOutputRows") == len(expected), timeout=30)
    assert progress.get("sink", {}).get("numOutputRows") == len(expected), progress
    got = deployed.consume_json("sensor_alerts", n=len(expected), timeout=30)
    alerts = {(a["device_id"], parse_time(a["reading_ts"]), a["value"], a["threshold"],
               parse_time(a["threshold_ts"])) for a in got}
    assert len(got) == len(alerts), f"an alert was written twice: {got}"
    assert alerts == expected


def test_fraud_scores_per_card(server, deployed):
    rng = random.Random(53)
    payments = []
    # Five cards: some pay often, some from several countries, some a large
    # amount after small ones. A card's payments go to one partition (the card
    # is the record key), so they reach the processor in order.
    for card, count, countries in (("c1", 2, ["FR"]), ("c2", 7, ["FR"]), ("c3", 4, ["FR", "US"]),
                                   ("c4", 3, ["DE", "BR", "JP"]), ("c5", 5, ["FR"])):
        for i in range(count):
            amount = round(rng.uniform(5, 50), 2) if not (card == "c5" and i == 4) else 900.0
            payments.append({"card_id": card, "amount": amount, "country": countries[i % len(countries)]})

    # The score as the example defines it: 10 per earlier payment (at most
    # 50), 25 per country beyond the first, 30 for an amount over three times
    # the mean of the card's last (up to five) amounts before it.
    expected = []
    state = defaultdict(lambda: {"n": 0, "countries": set(), "recent": []})
    for p in payments:
        s = state[p["card_id"]]
        s["n"] += 1
        s["countries"].add(p["country"])
        before = s["recent"]
        score = 10 * min(s["n"] - 1, 5) + 25 * (len(s["countries"]) - 1)
        if before and p["amount"] > 3 * sum(before) / len(before):
            score += 30
        s["recent"] = (before + [p["amount"]])[-5:]
        expected.append((p["card_id"], s["n"], len(s["countries"]), score, score >= 50))
    assert any(e[4] for e in expected) and not all(e[4] for e in expected)

    for card in sorted({p["card_id"] for p in payments}):
        deployed.produce("card_payments", [p for p in payments if p["card_id"] == card], key=card)
    got = deployed.consume_json("card_scores", n=len(expected), timeout=30, grace=0.3)
    scores = sorted((r["card_id"], r["payments"], r["countries"], r["score"], r["suspicious"])
                    for r in got)
    assert scores == sorted(expected)


def test_sessions_with_a_custom_inactivity_timeout(server, deployed):
    rng = random.Random(61)
    clicks = []
    # Each user has a timeout of their own; pauses are well under or well over it.
    for user, timeout in (("kiosk1", 30), ("kiosk2", 30), ("desk1", 600), ("desk2", 600)):
        t = BASE
        for _ in range(rng.randrange(8, 15)):
            clicks.append({"user_id": user, "ts": t, "timeout_s": timeout})
            pause = rng.choice([timeout // 3, timeout * 3])
            t += timedelta(seconds=pause)

    # A session ends at a pause over the user's timeout; it is written when
    # the next click shows that, so each user's last session stays open.
    expected = set()
    for user in {c["user_id"] for c in clicks}:
        mine = [c for c in clicks if c["user_id"] == user]
        start = last = mine[0]["ts"]
        n = 1
        for c in mine[1:]:
            if (c["ts"] - last).total_seconds() > c["timeout_s"]:
                expected.add((user, start, last, n))
                start, n = c["ts"], 0
            last = c["ts"]
            n += 1
    assert len(expected) >= 4, "the seed gives too few sessions"

    for user in sorted({c["user_id"] for c in clicks}):
        deployed.produce("app_clicks", [{**c, "ts": stamp(c["ts"])} for c in clicks
                                        if c["user_id"] == user], key=user)
    got = deployed.consume_json("app_sessions", n=len(expected), timeout=30, grace=0.3)
    sessions = {(s["user_id"], parse_time(s["session_start"]), parse_time(s["last_click"]),
                 s["clicks"]) for s in got}
    assert len(got) == len(sessions), f"a session was written twice: {got}"
    assert sessions == expected


# ---------------------------------------------------------------- example inputs

def _ts(text):
    return f"2024-05-01T{text}.000Z"


# What each example writes from its own `*_input.sql` (its README shows the
# same): the output topic, how its records are read ("rows": the multiset of
# the JSON values; "upsert": the table the keyed records leave; "debezium":
# the rows the changes leave, by key columns) and the answer.
EXAMPLE_OUTPUTS = {
    "fraud_velocity": ("velocity_alerts", "rows", [
        {"card_id": "c1", "window_start": _ts("12:00:00"), "window_end": _ts("12:01:00"),
         "payments": 6, "total": 210.0}]),
    "dedup_retries": ("unique_order_events", "rows", [
        {"event_id": "e1", "order_id": "o1", "status": "created", "ts": _ts("12:00:00")},
        {"event_id": "e2", "order_id": "o1", "status": "paid", "ts": _ts("12:00:10")},
        {"event_id": "e3", "order_id": "o2", "status": "created", "ts": _ts("12:00:20")}]),
    "enrichment": ("enriched_purchases", "rows", [
        {"purchase_id": "p1", "amount": 4.5, "merchant": "Corner Bakery", "category": "food",
         "risk": 0.05},
        {"purchase_id": "p2", "amount": 250.0, "merchant": "Lucky Star Games, Inc.",
         "category": "gaming", "risk": 0.85},
        {"purchase_id": "p3", "amount": 12.0, "merchant": None, "category": None, "risk": None}]),
    "top_n_per_window": ("top_sales", "debezium", [
        {"minute": _ts("12:00:00"), "sale_id": "s4", "store": "east", "amount": 70.0, "rn": 1},
        {"minute": _ts("12:00:00"), "sale_id": "s3", "store": "north", "amount": 50.0, "rn": 2},
        {"minute": _ts("12:00:00"), "sale_id": "s1", "store": "north", "amount": 30.0, "rn": 3},
        {"minute": _ts("12:01:00"), "sale_id": "s6", "store": "south", "amount": 20.0, "rn": 1}]),
    "sessionization": ("user_sessions", "rows", [
        {"user_id": "u1", "session_start": _ts("12:00:00"), "last_click": _ts("12:02:00"),
         "session_end": _ts("12:07:00"), "clicks": 3},
        {"user_id": "u1", "session_start": _ts("12:12:00"), "last_click": _ts("12:12:00"),
         "session_end": _ts("12:17:00"), "clicks": 1},
        {"user_id": "u2", "session_start": _ts("12:00:30"), "last_click": _ts("12:00:30"),
         "session_end": _ts("12:05:30"), "clicks": 1}]),
    "cdc_aggregate": ("customer_totals", "upsert", {
        "A": {"customer_id": "A", "open_orders": 1, "total": 25.0}}),
    "stacked_views": ("vip_customers", "upsert", {
        "c1": {"customer_id": "c1", "total": 110.0}}),
    "iot_anomaly": ("sensor_alerts", "rows", [
        {"device_id": "d1", "reading_ts": _ts("12:00:20"), "value": 65.0, "threshold": 50.0,
         "threshold_ts": _ts("12:00:00")},
        {"device_id": "d2", "reading_ts": _ts("12:00:30"), "value": 90.0, "threshold": 80.0,
         "threshold_ts": _ts("12:00:00")}]),
    "fraud_score": ("card_scores", "rows", [
        {"card_id": "c1", "payments": 1, "countries": 1, "score": 0, "suspicious": False},
        {"card_id": "c1", "payments": 2, "countries": 1, "score": 10, "suspicious": False},
        {"card_id": "c1", "payments": 3, "countries": 1, "score": 20, "suspicious": False},
        {"card_id": "c1", "payments": 4, "countries": 2, "score": 85, "suspicious": True},
        {"card_id": "c2", "payments": 1, "countries": 1, "score": 0, "suspicious": False}]),
    "custom_sessions": ("app_sessions", "rows", [
        {"user_id": "u1", "session_start": _ts("12:00:00"), "last_click": _ts("12:00:30"),
         "clicks": 2},
        {"user_id": "u2", "session_start": _ts("12:00:00"), "last_click": _ts("12:05:00"),
         "clicks": 2}]),
}


@pytest.fixture(scope="module")
def fed(tmp_path_factory):
    """A server of its own with every example deployed and fed by its
    `*_input.sql` alone, with `rtsql -f` as a user would."""
    s = ExamplesServer(tmp_path_factory.mktemp("rtsqld_example_inputs"))
    s.start()
    try:
        for name in EXAMPLE_OUTPUTS:
            s.rtsql("-v", f"merchants_csv={MERCHANTS_CSV}", "-f", str(EXAMPLES / f"{name}.sql"),
                    cwd=str(SOURCE_DIR))
            s.rtsql("-f", str(EXAMPLES / f"{name}_input.sql"), cwd=str(SOURCE_DIR))
        yield s, Kafka("embedded", "embedded", s.embedded_bootstrap)
    finally:
        code = s.stop()
        assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{s.log_tail()}"


def _read_output(kafka, topic, how):
    records = kafka.consume_to_end(topic, timeout=10)
    if how == "upsert":
        return apply_upsert(records)
    values = [json.loads(m.value()) for m in records]
    if how == "debezium":
        return sorted((dict(r) for r in apply_debezium(values).elements()),
                      key=lambda r: json.dumps(r, sort_keys=True))
    return sorted(values, key=lambda r: json.dumps(r, sort_keys=True))


@pytest.mark.parametrize("name", sorted(EXAMPLE_OUTPUTS))
def test_example_fed_by_its_input_script(fed, name):
    server, kafka = fed
    topic, how, want = EXAMPLE_OUTPUTS[name]
    if how != "upsert":
        want = sorted(want, key=lambda r: json.dumps(r, sort_keys=True))
    got = None
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        got = _read_output(kafka, topic, how)
        if got == want:
            break
        time.sleep(0.5)
    assert got == want, f"{name}: {topic} holds {got}\n{server.log_tail(20)}"
