"""Differential test of the regular (unbounded) stream-stream join against
DuckDB: seeded random rows on both sides, a few keys and NULL keys, event
times in any order (no time bound limits the pairs), the two sides sent in
interleaved chunks so that either side's row may come first. The join's
output, as a multiset of rows, must equal DuckDB's join of the same rows.

The output is a changelog in general (outer joins retract their NULL rows).
The inner join's output is append: each row is an insert. The FULL join's
changes are read through a sink with format 'debezium-json' (every change,
old row and new) and applied with changelog.apply_debezium, which fails on a
change that removes a row never written.
"""

import json
import random
from collections import Counter
from datetime import datetime, timedelta, timezone

import duckdb
import pytest

from changelog import apply_debezium
from conftest import unique

SEED = 20240502
N_LEFT = 400
N_RIGHT = 300
N_KEYS = 12
T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)
WAIT_S = 60


def iso(ms):
    t = T0 + timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def make_rows(rng, n, prefix):
    rows = []
    for i in range(n):
        key = None if rng.random() < 0.08 else rng.randrange(N_KEYS)
        val = None if rng.random() < 0.05 else rng.randint(-5, 5)
        ms = rng.randrange(0, 3_600_000)  # any order: no bound limits the pairs
        rows.append({f"{prefix}id": i, "k": key, f"{prefix}v": val, "ts": iso(ms), "_ms": ms})
    return rows


def test_regular_inner_join_matches_duckdb(server, kafka):
    rng = random.Random(SEED)
    lefts = make_rows(rng, N_LEFT, "l")
    rights = make_rows(rng, N_RIGHT, "r")

    db = duckdb.connect()
    db.execute("CREATE TABLE l (lid INTEGER, k INTEGER, lv INTEGER)")
    db.execute("CREATE TABLE r (rid INTEGER, k INTEGER, rv INTEGER)")
    db.executemany("INSERT INTO l VALUES (?, ?, ?)", [(x["lid"], x["k"], x["lv"]) for x in lefts])
    db.executemany("INSERT INTO r VALUES (?, ?, ?)", [(x["rid"], x["k"], x["rv"]) for x in rights])
    # The residual `l.lv <> r.rv` is NULL (no pair) when either value is NULL.
    want = Counter(tuple(row) for row in db.execute(
        "SELECT l.lid, r.rid, l.k, l.lv + r.rv FROM l JOIN r ON l.k = r.k AND l.lv <> r.rv"
    ).fetchall())
    n_want = sum(want.values())
    assert n_want > 500
    assert any(x["k"] is None for x in lefts) and any(x["k"] is None for x in rights)

    t_l, t_r = unique("dj_left"), unique("dj_right")
    s_l, s_r, sink, flow = unique("dj_l"), unique("dj_r"), unique("dj_out"), unique("dj_flow")
    kafka.create_topic(t_l)
    kafka.create_topic(t_r)
    wm = "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND"
    with server.connect() as conn:
        conn.execute(f"CREATE SOURCE {s_l} (lid INT, k BIGINT, lv INT, ts TIMESTAMP, {wm}) WITH "
                     f"({kafka.options()}, subscribe = '{t_l}', startingOffsets = 'earliest', "
                     f"format = 'json')")
        conn.execute(f"CREATE SOURCE {s_r} (rid INT, k BIGINT, rv INT, ts TIMESTAMP, {wm}) WITH "
                     f"({kafka.options()}, subscribe = '{t_r}', startingOffsets = 'earliest', "
                     f"format = 'json')")
        conn.execute(f"CREATE SINK {sink}_s WITH ({kafka.options()}, topic = '{sink}', "
                     f"format = 'json')")
        conn.execute(f"""CREATE FLOW {flow} INTO {sink}_s WITH ('shuffle.partitions' = '3') AS
            SELECT a.lid, b.rid, a.k, a.lv + b.rv AS s FROM {s_l} a JOIN {s_r} b
              ON a.k = b.k AND a.lv <> b.rv""")

    def strip(rs):
        return [{f: v for f, v in r.items() if f != "_ms"} for r in rs]

    try:
        # Interleaved chunks: either side's rows may come first for a key.
        li = ri = 0
        while li < len(lefts) or ri < len(rights):
            n = rng.randint(1, 60)
            if rng.random() < 0.5 and li < len(lefts) or ri >= len(rights):
                kafka.produce(t_l, strip(lefts[li:li + n]))
                li += n
            else:
                kafka.produce(t_r, strip(rights[ri:ri + n]))
                ri += n
        last = server.wait_progress(
            flow, lambda p: p.get("sink", {}).get("numOutputRows", 0) >= n_want, timeout=WAIT_S)
        assert last and last["sink"]["numOutputRows"] == n_want, json.dumps(last)
        rows = kafka.consume_json(sink, n=n_want, timeout=WAIT_S, grace=1.0)
        got = Counter((r["lid"], r["rid"], r["k"], r["s"]) for r in rows)
        if got != want:
            missing = want - got
            extra = got - want
            pytest.fail(f"{sum(got.values())} rows, want {n_want}; missing "
                        f"{list(missing.items())[:5]}, unexpected {list(extra.items())[:5]}")
        st = server.progress(flow)["stateOperators"][0]
        # Every row with a key is kept; NULL keys are not.
        kept = sum(1 for x in lefts + rights if x["k"] is not None)
        assert st["numRowsTotal"] == kept
        assert st["numRowsDroppedByWatermark"] == 0
    finally:
        with server.connect() as conn:
            conn.execute(f"DROP FLOW IF EXISTS {flow}")


def test_regular_full_join_changelog_matches_duckdb(server, kafka):
    """A FULL join's changelog (NULL rows written, retracted when a pair
    arrives) through a sink that writes every change, applied to a multiset,
    equals DuckDB's FULL OUTER JOIN."""
    rng = random.Random(SEED + 1)
    lefts = make_rows(rng, N_LEFT // 2, "l")
    rights = make_rows(rng, N_RIGHT // 2, "r")
    t_l, t_r = unique("djf_left"), unique("djf_right")
    s_l, s_r, sink, flow = unique("djf_l"), unique("djf_r"), unique("djf_out"), unique("djf_flow")
    with server.connect() as conn:
        conn.execute(f"CREATE SINK {sink}_s WITH ({kafka.options()}, topic = '{sink}', "
                     f"format = 'debezium-json')")

    db = duckdb.connect()
    db.execute("CREATE TABLE l (lid INTEGER, k INTEGER, lv INTEGER)")
    db.execute("CREATE TABLE r (rid INTEGER, k INTEGER, rv INTEGER)")
    db.executemany("INSERT INTO l VALUES (?, ?, ?)", [(x["lid"], x["k"], x["lv"]) for x in lefts])
    db.executemany("INSERT INTO r VALUES (?, ?, ?)", [(x["rid"], x["k"], x["rv"]) for x in rights])
    want = Counter(tuple(row) for row in db.execute(
        "SELECT l.lid, r.rid FROM l FULL OUTER JOIN r ON l.k = r.k AND l.lv <> r.rv").fetchall())
    assert any(a is None for a, _ in want) and any(b is None for _, b in want)

    kafka.create_topic(t_l)
    kafka.create_topic(t_r)
    wm = "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND"
    with server.connect() as conn:
        conn.execute(f"CREATE SOURCE {s_l} (lid INT, k BIGINT, lv INT, ts TIMESTAMP, {wm}) WITH "
                     f"({kafka.options()}, subscribe = '{t_l}', startingOffsets = 'earliest', "
                     f"format = 'json')")
        conn.execute(f"CREATE SOURCE {s_r} (rid INT, k BIGINT, rv INT, ts TIMESTAMP, {wm}) WITH "
                     f"({kafka.options()}, subscribe = '{t_r}', startingOffsets = 'earliest', "
                     f"format = 'json')")
        conn.execute(f"""CREATE FLOW {flow} INTO {sink}_s WITH ('shuffle.partitions' = '3') AS
            SELECT a.lid, b.rid FROM {s_l} a FULL JOIN {s_r} b ON a.k = b.k AND a.lv <> b.rv""")

    def strip(rs):
        return [{f: v for f, v in r.items() if f != "_ms"} for r in rs]

    try:
        li = ri = 0
        while li < len(lefts) or ri < len(rights):
            n = rng.randint(1, 40)
            if rng.random() < 0.5 and li < len(lefts) or ri >= len(rights):
                kafka.produce(t_l, strip(lefts[li:li + n]))
                li += n
            else:
                kafka.produce(t_r, strip(rights[ri:ri + n]))
                ri += n
        total = len(lefts) + len(rights)

        def joined_all(p):
            ops = [o for o in p.get("operators", []) if o.get("operatorName") == "StreamJoin"]
            return ops and sum(o.get("rowsIn", 0) for o in ops) >= total

        last = server.wait_progress(flow, joined_all, timeout=WAIT_S)
        assert last and joined_all(last), json.dumps(last)
        # The sink runs in the join's task: every change is counted by now.
        n_out = server.progress(flow)["sink"]["numOutputRows"]
        records = kafka.consume_json(sink, n=n_out, timeout=WAIT_S, grace=1.0)
        assert len(records) == n_out
        got = Counter()
        for row, n in apply_debezium(records).items():
            cols = dict(row)
            got[(cols["lid"], cols["rid"])] += n
        if got != want:
            pytest.fail(f"missing {list((want - got).items())[:5]}, "
                        f"unexpected {list((got - want).items())[:5]}")
    finally:
        with server.connect() as conn:
            conn.execute(f"DROP FLOW IF EXISTS {flow}")
