"""Differential tests: the same random input through rtsql flows and through
SQLite, and the final results must agree.

A seeded generator makes 2,000 records over 50 keys, with NULL keys and NULL
values, and event times that are slightly out of order but never behind the
watermark. The records go into one Kafka topic that three flows read: a GROUP
BY with every aggregate (update mode: the last update of each key is its final
value), a tumbling window count with EMIT ON WINDOW CLOSE (each window once,
after a last record moves the watermark past every window), and DISTINCT ON
(the first record of each id). A fourth test joins two random streams with a
time bound (LEFT JOIN). A fifth sends records to the partitions of a topic in
seeded random chunks, with random pauses between them, lulls longer than the
source's idle timeout and large bursts, so that partitions are read in every
order and at every speed: no record may be dropped as late. SQLite (in memory)
runs the equivalent batch queries over the same records; per key, per window
and per id the results must be equal (floating-point sums and averages within a
relative 1e-9, since the order of additions differs).
"""

import json
import math
import random
import sqlite3
import time
from datetime import datetime, timedelta, timezone

import pytest

from conftest import unique

SEED = 20240501
N_RECORDS = 2000
N_KEYS = 50
N_EVENT_IDS = 1500
WATERMARK_DELAY_S = 30
JITTER_MS = 10_000          # event times move up to 10 s either way: never late with a 30 s delay
STEP_MS = 300               # 2,000 records over 10 minutes of event time
WINDOW_MS = 60_000
T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)
WAIT_S = 40                 # bound on every wait for a flow's output


def iso(ms):
    t = T0 + timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def make_records(rng):
    """The records as dicts (the JSON sent) with `_ms`, the event time in ms after T0."""
    records = []
    for i in range(N_RECORDS):
        ms = max(0, i * STEP_MS + rng.randint(-JITTER_MS, JITTER_MS))
        key = None if rng.random() < 0.05 else f"k{rng.randrange(N_KEYS):02d}"
        qty = None if rng.random() < 0.1 else rng.randint(-50, 100)
        amount = None if rng.random() < 0.1 else round(rng.uniform(-100, 100), 2)
        event_id = None if rng.random() < 0.01 else f"e{rng.randrange(N_EVENT_IDS)}"
        r = {"event_id": event_id, "k": key, "qty": qty, "amount": amount, "ts": iso(ms)}
        if rng.random() < 0.05:
            del r["amount"]  # a missing field reads as NULL, like an explicit null
        r["_ms"] = ms
        records.append(r)
    return records


def sqlite_db(records):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (seq INTEGER, event_id TEXT, k TEXT, qty INTEGER, amount REAL, ms INTEGER)")
    db.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)",
                   [(i, r["event_id"], r["k"], r["qty"], r.get("amount"), r["_ms"])
                    for i, r in enumerate(records)])
    return db


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)


def wait_output_rows(server, flow, want):
    last = server.wait_progress(flow, lambda p: p.get("sink", {}).get("numOutputRows", 0) >= want,
                                timeout=WAIT_S)
    got = last.get("sink", {}).get("numOutputRows", 0) if last else None
    assert got == want, f"flow {flow}: {got} output rows, want {want}\n{json.dumps(last)}"


@pytest.fixture(scope="module")
def setup(server, kafka):
    """Creates the source and the three flows, sends the records, and returns
    what the tests compare."""
    rng = random.Random(SEED)
    records = make_records(rng)
    topic = unique("diff_in")
    src = unique("diff_src")
    names = {w: unique(f"diff_{w}") for w in ("agg", "win", "dedup")}
    sinks = {w: unique(f"diff_{w}_out") for w in names}
    # A real broker has no topic before someone creates it; the embedded one
    # creates topics on demand. Create it first either way.
    partitions = kafka.create_topic(topic)
    stmts = [f"""CREATE SOURCE {src} (event_id STRING, k STRING, qty INT, amount DOUBLE, ts TIMESTAMP,
                 WATERMARK FOR ts AS ts - INTERVAL '{WATERMARK_DELAY_S}' SECOND)
                 WITH ({kafka.options()}, subscribe = '{topic}', startingOffsets = 'earliest',
                       format = 'json')"""]
    for w in names:
        stmts.append(f"CREATE SINK {sinks[w]}_s WITH ({kafka.options()}, topic = '{sinks[w]}', "
                     f"format = 'json')")
    stmts.append(f"""CREATE FLOW {names['agg']} INTO {sinks['agg']}_s WITH ('shuffle.partitions' = '4') AS
        SELECT k, count(*) AS n, count(amount) AS na, sum(qty) AS sq, sum(amount) AS sa,
               min(amount) AS mi, max(amount) AS ma, avg(amount) AS av, min(qty) AS mq
        FROM {src} GROUP BY k""")
    stmts.append(f"""CREATE FLOW {names['win']} INTO {sinks['win']}_s WITH ('shuffle.partitions' = '4') AS
        SELECT window.start AS ws, window.end AS we, k, count(*) AS n, sum(qty) AS sq
        FROM {src} GROUP BY window(ts, '1 minute'), k EMIT ON WINDOW CLOSE""")
    stmts.append(f"""CREATE FLOW {names['dedup']} INTO {sinks['dedup']}_s WITH ('shuffle.partitions' = '4') AS
        SELECT DISTINCT ON (event_id) event_id, k, qty, ts FROM {src}""")
    with server.connect() as conn:
        for s in stmts:
            conn.execute(s)
    # Keyed by event_id: the copies of an event share a partition, so "the first
    # one" is well defined however many partitions the topic has. Records
    # without an event_id share one key too (a missing key would scatter them).
    kafka.produce(topic, [{f: v for f, v in r.items() if f != "_ms"} for r in records],
                  key=lambda r: r["event_id"] if r["event_id"] is not None else "no-event-id")
    # Moves the watermark an hour past every window above; its own window stays
    # open, so it adds nothing to the window flow's output. Every partition
    # gets one: a partition that stops with everything else is not idle, and
    # its last event time holds the watermark.
    end_ms = N_RECORDS * STEP_MS + 3_600_000
    for p in range(partitions):
        kafka.produce(topic, [{"event_id": "end", "k": "zz_end", "qty": 0, "amount": 0.0,
                               "ts": iso(end_ms)}], partition=p)
    yield {"records": records, "db": sqlite_db(records), "names": names, "sinks": sinks,
           "partitions": partitions}
    with server.connect() as conn:
        for f in names.values():
            conn.execute(f"DROP FLOW IF EXISTS {f}")


def test_group_by_final_values_match_sqlite(server, kafka, setup):
    db, flow, topic = setup["db"], setup["names"]["agg"], setup["sinks"]["agg"]
    # Every record changes its group's count(*), so each one, the last ones
    # (one per partition) included, emits one update.
    n_out = N_RECORDS + setup["partitions"]
    wait_output_rows(server, flow, n_out)
    msgs = kafka.consume(topic, n=n_out, timeout=WAIT_S, grace=0.5)
    assert len(msgs) == n_out
    final = {}
    for m in msgs:
        row = json.loads(m.value())
        key = None if m.key() is None else m.key().decode()
        assert key == row["k"], f"Kafka key {key!r} is not the group key of {row}"
        final[row["k"]] = row
    del final["zz_end"]
    want = {r[0]: r for r in db.execute(
        "SELECT k, count(*), count(amount), sum(qty), sum(amount), min(amount), max(amount), "
        "avg(amount), min(qty) FROM t GROUP BY k")}
    assert set(final) == set(want)
    bad = []
    for k, (_, n, na, sq, sa, mi, ma, av, mq) in want.items():
        g = final[k]
        ok = (g["n"] == n and g["na"] == na and g["sq"] == sq and g["mq"] == mq
              and close(g["sa"], sa) and close(g["mi"], mi) and close(g["ma"], ma)
              and close(g["av"], av))
        if not ok:
            bad.append((k, g, (n, na, sq, sa, mi, ma, av, mq)))
    assert not bad, f"{len(bad)} groups differ, e.g. {bad[:3]}"
    p = server.progress(flow)
    assert p["stateOperators"][0]["numRowsTotal"] == len(want) + 1


def test_tumbling_window_final_counts_match_sqlite(server, kafka, setup):
    db, flow, topic = setup["db"], setup["names"]["win"], setup["sinks"]["win"]
    want = {}
    for ws, k, n, sq in db.execute(
            f"SELECT (ms / {WINDOW_MS}) * {WINDOW_MS}, k, count(*), sum(qty) FROM t "
            f"GROUP BY 1, 2"):
        want[(iso(ws), k)] = (iso(ws + WINDOW_MS), n, sq)
    wait_output_rows(server, flow, len(want))
    rows = kafka.consume_json(topic, n=len(want), timeout=WAIT_S, grace=0.5)
    got = {}
    dups = []
    for r in rows:
        key = (r["ws"], r["k"])
        if key in got:
            dups.append(r)
        got[key] = (r["we"], r["n"], r["sq"])
    assert not dups, f"windows emitted more than once: {dups[:3]}"
    missing = sorted(set(want) - set(got), key=str)
    extra = sorted(set(got) - set(want), key=str)
    assert not missing and not extra, f"missing {missing[:5]}, unexpected {extra[:5]}"
    diff = [(k, got[k], want[k]) for k in want if got[k] != want[k]]
    assert not diff, f"{len(diff)} windows differ (got, want): {diff[:3]}"
    p = server.progress(flow)
    st = p["stateOperators"][0]
    assert st["numRowsDroppedByWatermark"] == 0
    assert st["numRowsTotal"] == 1  # only the last record's window is open


def test_distinct_on_first_rows_match_sqlite(server, kafka, setup):
    db, flow, topic = setup["db"], setup["names"]["dedup"], setup["sinks"]["dedup"]
    want = {}
    for eid, k, qty, ms in db.execute(
            "SELECT event_id, k, qty, ms FROM t WHERE seq IN "
            "(SELECT min(seq) FROM t GROUP BY event_id)"):
        want[eid] = {"event_id": eid, "k": k, "qty": qty, "ts": iso(ms)}
    want["end"] = {"event_id": "end", "k": "zz_end", "qty": 0,
                   "ts": iso(N_RECORDS * STEP_MS + 3_600_000)}
    wait_output_rows(server, flow, len(want))
    rows = kafka.consume_json(topic, n=len(want), timeout=WAIT_S, grace=0.5)
    assert len(rows) == len(want), f"{len(rows)} rows, want {len(want)}"
    got = {r["event_id"]: r for r in rows}
    assert len(got) == len(rows), "an event_id was emitted twice"
    diff = [(e, got.get(e), w) for e, w in want.items() if got.get(e) != w]
    assert not diff, f"{len(diff)} ids differ (got, want): {diff[:3]}"
    p = server.progress(flow)
    assert p["stateOperators"][0]["numRowsTotal"] == len(want)


def test_stream_left_join_matches_sqlite(server, kafka):
    """A stream-stream LEFT JOIN with a time bound against SQLite's LEFT JOIN.
    All orders are sent before all payments, so the orders' watermark runs far
    ahead of the payments': the join must go by the smaller of the two."""
    rng = random.Random(SEED + 1)
    orders, payments = [], []
    for i in range(300):
        ms = max(0, i * 2000 + rng.randint(-JITTER_MS, JITTER_MS))
        oid = None if rng.random() < 0.03 else rng.randrange(100)
        orders.append({"oid": i, "id": oid, "ts": iso(ms), "_ms": ms})
    for i in range(400):
        ms = max(0, i * 1500 + rng.randint(-JITTER_MS, JITTER_MS))
        payments.append({"pid": i, "order_id": rng.randrange(120), "ts": iso(ms), "_ms": ms})
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE o (oid INTEGER, id INTEGER, ms INTEGER)")
    db.execute("CREATE TABLE p (pid INTEGER, order_id INTEGER, ms INTEGER)")
    db.executemany("INSERT INTO o VALUES (?, ?, ?)", [(r["oid"], r["id"], r["_ms"]) for r in orders])
    db.executemany("INSERT INTO p VALUES (?, ?, ?)",
                   [(r["pid"], r["order_id"], r["_ms"]) for r in payments])
    want = sorted(db.execute(
        "SELECT o.oid, p.pid FROM o LEFT JOIN p ON o.id = p.order_id "
        "AND p.ms BETWEEN o.ms AND o.ms + 60000").fetchall(), key=str)
    assert any(p is None for _, p in want) and any(p is not None for _, p in want)

    t_o, t_p = unique("diff_orders"), unique("diff_payments")
    s_o, s_p, sink, flow = (unique("diff_o"), unique("diff_p"), unique("diff_join_out"),
                            unique("diff_join"))
    wm = f"WATERMARK FOR ts AS ts - INTERVAL '{WATERMARK_DELAY_S}' SECOND"
    parts_o = kafka.create_topic(t_o)
    parts_p = kafka.create_topic(t_p)
    with server.connect() as conn:
        conn.execute(f"CREATE SOURCE {s_o} (oid INT, id BIGINT, ts TIMESTAMP, {wm}) WITH "
                     f"({kafka.options()}, subscribe = '{t_o}', startingOffsets = 'earliest', "
                     f"format = 'json')")
        conn.execute(f"CREATE SOURCE {s_p} (pid INT, order_id BIGINT, ts TIMESTAMP, {wm}) WITH "
                     f"({kafka.options()}, subscribe = '{t_p}', startingOffsets = 'earliest', "
                     f"format = 'json')")
        conn.execute(f"CREATE SINK {sink}_s WITH ({kafka.options()}, topic = '{sink}', "
                     f"format = 'json')")
        conn.execute(f"""CREATE FLOW {flow} INTO {sink}_s WITH ('shuffle.partitions' = '4') AS
            SELECT o.oid, p.pid FROM {s_o} o LEFT JOIN {s_p} p
              ON o.id = p.order_id AND p.ts BETWEEN o.ts AND o.ts + INTERVAL '1' MINUTE""")
    def strip(rs):
        return [{f: v for f, v in r.items() if f != "_ms"} for r in rs]

    kafka.produce(t_o, strip(orders))
    kafka.produce(t_p, strip(payments))
    # Both watermarks an hour past every bound above, on every partition; ids
    # that match nothing.
    end = iso(400 * 1500 + 3_600_000)
    for p in range(parts_o):
        kafka.produce(t_o, [{"oid": 100000 + p, "id": 999999, "ts": end}], partition=p)
    for p in range(parts_p):
        kafka.produce(t_p, [{"pid": 100000 + p, "order_id": 888888, "ts": end}], partition=p)
    try:
        wait_output_rows(server, flow, len(want))
        rows = kafka.consume_json(sink, n=len(want), timeout=WAIT_S, grace=1.0)
        got = sorted(((r["oid"], r["pid"]) for r in rows), key=str)
        if got != want:
            missing = sorted(set(want) - set(got), key=str)
            extra = sorted(set(got) - set(want), key=str)
            pytest.fail(f"{len(got)} rows, want {len(want)}; missing {missing[:5]}, "
                        f"unexpected {extra[:5]}")
        st = server.progress(flow)["stateOperators"][0]
        assert st["numRowsDroppedByWatermark"] == 0
    finally:
        with server.connect() as conn:
            conn.execute(f"DROP FLOW IF EXISTS {flow}")


def test_pauses_and_bursts_between_partitions_match_sqlite(server, kafka):
    """Whatever the pauses between the partitions' records, a window counts
    every record: the watermark never lets one partition run ahead of another
    that has records to come. Each partition's event times are in order within
    a jitter well below the delay, so no record is late against its own
    partition; lulls are longer than the idle timeout; within a round every
    partition gets a chunk, in random order, so none is quiet for the idle
    timeout while the others deliver."""
    rng = random.Random(SEED + 2)
    # A partition waits at most for the other partitions' chunks of two rounds;
    # each counts as at most a tenth of the idle timeout plus its delivery, far
    # below the timeout even on a loaded machine.
    idle_timeout_s, delay_s, window_ms = 8, 5, 10_000
    topic, src, sink, flow = (unique("diff_burst_in"), unique("diff_burst_src"),
                              unique("diff_burst_out"), unique("diff_burst"))
    partitions = kafka.create_topic(topic)
    with server.connect() as conn:
        conn.execute(f"""CREATE SOURCE {src} (k STRING, v INT, ts TIMESTAMP,
                         WATERMARK FOR ts AS ts - INTERVAL '{delay_s}' SECOND)
                         WITH ({kafka.options()}, subscribe = '{topic}', startingOffsets = 'earliest',
                               format = 'json', 'watermark.idle.timeout' = '{idle_timeout_s} seconds')""")
        conn.execute(f"CREATE SINK {sink}_s WITH ({kafka.options()}, topic = '{sink}', format = 'json')")
        conn.execute(f"""CREATE FLOW {flow} INTO {sink}_s WITH ('shuffle.partitions' = '3') AS
            SELECT window.start AS ws, k, count(*) AS n, sum(v) AS sv FROM {src}
            GROUP BY window(ts, '10 seconds'), k EMIT ON WINDOW CLOSE""")

    clock = [0] * partitions  # each partition's event time, ms after T0
    sent = []

    def chunk(p, n):
        rows = []
        for _ in range(n):
            clock[p] += rng.randint(0, 400)
            ms = max(0, clock[p] + rng.randint(-1000, 1000))  # jitter well below the delay
            rows.append({"k": f"k{rng.randrange(5)}", "v": rng.randint(-10, 10), "ts": iso(ms), "_ms": ms})
        kafka.produce(topic, [{f: v for f, v in r.items() if f != "_ms"} for r in rows], partition=p)
        sent.extend(rows)

    try:
        for rnd in range(12):
            order = list(range(partitions))
            rng.shuffle(order)
            for p in order:
                # Mostly small chunks; now and then a burst (a backfill).
                chunk(p, rng.randint(150, 300) if rng.random() < 0.15 else rng.randint(1, 40))
                time.sleep(rng.uniform(0, 0.25))
            if rng.random() < 0.25:
                time.sleep(idle_timeout_s + 1)  # a lull: nothing at all arrives
        end = iso(max(clock) + 3_600_000)
        for p in range(partitions):
            kafka.produce(topic, [{"k": "zz_end", "v": 0, "ts": end}], partition=p)

        db = sqlite3.connect(":memory:")
        db.execute("CREATE TABLE t (k TEXT, v INTEGER, ms INTEGER)")
        db.executemany("INSERT INTO t VALUES (?, ?, ?)", [(r["k"], r["v"], r["_ms"]) for r in sent])
        want = {(iso(ws), k): (n, sv) for ws, k, n, sv in db.execute(
            f"SELECT (ms / {window_ms}) * {window_ms}, k, count(*), sum(v) FROM t GROUP BY 1, 2")}
        wait_output_rows(server, flow, len(want))
        rows = kafka.consume_json(sink, n=len(want), timeout=WAIT_S, grace=0.5)
        got = {(r["ws"], r["k"]): (r["n"], r["sv"]) for r in rows}
        st = server.progress(flow)["stateOperators"][0]
        assert st["numRowsDroppedByWatermark"] == 0, \
            f"{st['numRowsDroppedByWatermark']} of {len(sent)} rows dropped as late"
        diff = [(k, got.get(k), w) for k, w in want.items() if got.get(k) != w]
        assert not diff and len(got) == len(want), \
            f"{len(diff)} windows differ (got, want): {diff[:3]}; {len(got)} windows, want {len(want)}"
    finally:
        with server.connect() as conn:
            conn.execute(f"DROP FLOW IF EXISTS {flow}")
