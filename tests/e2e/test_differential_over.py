"""Differential test of aggregates OVER a window of rows: random seeded rows
through rtsql flows computing sum/count/avg/min/max OVER (PARTITION BY k
ORDER BY t ROWS BETWEEN n PRECEDING AND CURRENT ROW), and the same queries in
DuckDB over the same rows.

The rows arrive in random t order, so most rows land before rows of their
partition already emitted and update their aggregates; one flow reads a
ROW_NUMBER top-1 per group, whose output retracts a row each time a better
one arrives, so the OVER aggregate takes retracted rows out of its frames.
The flows write their changelog in the debezium-json format; the table it
leaves (tests/e2e/changelog.py apply_debezium) must equal DuckDB's result.
The order keys t and the top-N's w are distinct, so neither the frames nor
the ranking depend on the order in which rows of different partitions arrive.
"""

import json
import random
import time
from collections import Counter

import duckdb
import pytest

from changelog import apply_debezium
from conftest import unique

SEED = 20261201
N_ROWS = 500
N_KEYS = 6
N_GROUPS = 150
WAIT_S = 60

AGGS = ("sum(v) OVER {w} AS s, count(v) OVER {w} AS c, count(*) OVER {w} AS n, "
        "avg(v) OVER {w} AS a, min(v) OVER {w} AS lo, max(v) OVER {w} AS hi")

# name -> (window, FROM of the query, whether the input retracts)
TOP_1 = ("(SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY g ORDER BY w DESC) AS rn "
         "FROM {src}) WHERE rn <= 1) AS q")
CASES = {
    "two_preceding": ("(PARTITION BY k ORDER BY t ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)",
                      "{src}"),
    "desc_five_preceding": ("(PARTITION BY k ORDER BY t DESC ROWS BETWEEN 5 PRECEDING AND "
                            "CURRENT ROW)", "{src}"),
    "running": ("(PARTITION BY k ORDER BY t ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)",
                "{src}"),
    "whole_stream": ("(ORDER BY t ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)", "{src}"),
    "over_top_1": ("(PARTITION BY k ORDER BY t ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)", TOP_1),
}
COLUMNS = ["id", "k", "t", "v", "s", "c", "n", "a", "lo", "hi"]


def make_rows(rng):
    ts = rng.sample(range(1, 1_000_000), N_ROWS)  # distinct: no ties in the frames' order
    ws = rng.sample(range(1, 1_000_000), N_ROWS)  # distinct: no ties in the top-N
    return [{"id": i, "g": rng.randrange(N_GROUPS), "k": rng.randrange(N_KEYS), "t": ts[i],
             "w": ws[i], "v": None if rng.random() < 0.1 else rng.randrange(-50, 100)}
            for i in range(N_ROWS)]


def query(case, src):
    window, frm = CASES[case]
    return f"SELECT id, k, t, v, {AGGS.format(w=window)} FROM {frm.format(src=src)}"


def as_row(values):
    """A row as apply_debezium gives it; avg rounded, as both sides divide."""
    row = dict(zip(COLUMNS, values))
    if row["a"] is not None:
        row["a"] = round(row["a"], 9)
    return tuple(sorted(row.items()))


def duckdb_result(rows, case):
    db = duckdb.connect()
    db.execute("CREATE TABLE src (id BIGINT, g BIGINT, k BIGINT, t BIGINT, w BIGINT, v BIGINT)")
    db.executemany("INSERT INTO src VALUES (?, ?, ?, ?, ?, ?)",
                   [(r["id"], r["g"], r["k"], r["t"], r["w"], r["v"]) for r in rows])
    return Counter(as_row(r) for r in db.execute(query(case, "src")).fetchall())


def applied(kafka, topic, quiet_s=None):
    """The sink topic's changes applied: read up to its end now or, with
    QUIET_S, for that long (to see that nothing more arrives)."""
    msgs = (kafka.consume(topic, timeout=quiet_s) if quiet_s
            else kafka.consume_to_end(topic, timeout=10))
    values = [m.value() for m in msgs if m.value() is not None]
    table = apply_debezium(values)
    return Counter({as_row([dict(r)[c] for c in COLUMNS]): n for r, n in table.items()})


@pytest.fixture(scope="module")
def setup(server, kafka):
    topic = unique("over_in")
    src = unique("over_src")
    kafka.create_topic(topic)
    with server.connect() as conn:
        conn.execute(f"""CREATE SOURCE {src} (id BIGINT, g BIGINT, k BIGINT, t BIGINT, w BIGINT,
                                             v BIGINT)
                         WITH ({kafka.options()}, subscribe = '{topic}',
                               startingOffsets = 'earliest', format = 'json')""")
    rows = make_rows(random.Random(SEED))
    kafka.produce(topic, rows)
    yield {"src": src, "rows": rows}


def test_the_input_makes_the_flows_update_and_retract(setup):
    """Most rows arrive before a row of their partition that is later in t,
    and the top-1 per group replaces rows: the flows' update and retraction
    paths are exercised, not only appends."""
    rows = setup["rows"]
    early = sum(1 for i, r in enumerate(rows)
                if any(p["k"] == r["k"] and p["t"] > r["t"] for p in rows[:i]))
    assert early > N_ROWS // 2
    replaced = sum(1 for i, r in enumerate(rows)
                   if any(p["g"] == r["g"] and p["w"] < r["w"] for p in rows[:i]))
    assert replaced > 50


@pytest.mark.parametrize("case", list(CASES))
def test_over_changelog_matches_duckdb(server, kafka, setup, case):
    src, rows = setup["src"], setup["rows"]
    flow, out = unique("over_flow"), unique("over_out")
    with server.connect() as conn:
        conn.execute(f"CREATE SINK {out}_s WITH ({kafka.options()}, topic = '{out}', "
                     f"format = 'debezium-json')")
        conn.execute(f"CREATE FLOW {flow} INTO {out}_s WITH ('shuffle.partitions' = '3') AS "
                     f"{query(case, src)}")
    want = duckdb_result(rows, case)
    assert sum(want.values()) == (N_ROWS if CASES[case][1] == "{src}" else
                                  len({r["g"] for r in rows}))
    try:
        last = server.wait_progress(flow, lambda p: p.get("numInputRows", 0) >= N_ROWS,
                                    timeout=WAIT_S)
        assert last and last.get("numInputRows") == N_ROWS, json.dumps(last)
        deadline = time.monotonic() + WAIT_S
        got = None
        while time.monotonic() < deadline:
            got = applied(kafka, out)
            if got == want:
                break
            time.sleep(0.2)
        assert got == want
        # Nothing more arrives that would change it.
        assert applied(kafka, out, quiet_s=3) == want
    finally:
        with server.connect() as conn:
            conn.execute(f"DROP FLOW IF EXISTS {flow}")
