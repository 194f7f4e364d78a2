"""Differential tests of a stream joined with an aggregation's result against
DuckDB: orders, each joined with its customer's running payment totals
(`sum(paid)`, `count(*)` per customer over a stream of payments).

The aggregation is a changelog: every payment replaces its customer's row
(the old one retracted, the new one inserted), and the join must retract each
joined row of the old totals and write the order again with the new ones.
The inner join writes an order once its customer has paid; the LEFT join
writes an order of a customer without payments at once with NULL totals and
retracts that row when the first payment arrives.

Seeded random input: 300 orders and 600 payments over 15 customers, some
customers with orders but no payments, some with payments but no orders,
a few NULL customers on both sides (they never match) and a few NULL
payments (sum skips them, count(*) counts them). A first batch of orders is
read before any payment is sent (the LEFT join has NULL-total rows to
retract); the rest of the orders and payments are sent in random interleaved
batches so that either may come first. The flow
writes into a `debezium-json` sink; its records, applied in order with
changelog.apply_debezium (which fails on a retraction of a row that is not
there), must leave exactly the multiset DuckDB's same query gives on the
same rows.
"""

import json
import random
from collections import Counter

import duckdb
import pytest

from changelog import wait_for_debezium
from conftest import unique

SEED = 20261202
N_ORDERS = 300
N_PAYS = 600
N_PAYING = 12  # customers c00..c11 pay; c12..c14 only order
N_CUSTOMERS = 15
WAIT_S = 90  # bound on the wait for the flow's final result

COLUMNS = ("oid", "cust", "amount", "total", "n")


def cust_name(i):
    return f"c{i:02d}"


def make_rows(rng):
    orders = []
    for oid in range(N_ORDERS):
        cust = None if rng.random() < 0.03 else cust_name(rng.randrange(N_CUSTOMERS))
        orders.append({"oid": oid, "cust": cust, "amount": rng.randint(1, 500)})
    pays = []
    for _ in range(N_PAYS):
        r = rng.random()
        if r < 0.03:
            cust = None
        elif r < 0.08:
            cust = f"p{rng.randrange(3)}"  # pays, never orders
        else:
            cust = cust_name(rng.randrange(N_PAYING))
        paid = None if rng.random() < 0.03 else rng.randint(-50, 200)
        pays.append({"cust": cust, "paid": paid})
    return orders, pays


def duckdb_answer(orders, pays, join):
    db = duckdb.connect()
    db.execute("CREATE TABLE orders (oid BIGINT, cust VARCHAR, amount BIGINT)")
    db.execute("CREATE TABLE pays (cust VARCHAR, paid BIGINT)")
    db.executemany("INSERT INTO orders VALUES (?, ?, ?)",
                   [(o["oid"], o["cust"], o["amount"]) for o in orders])
    db.executemany("INSERT INTO pays VALUES (?, ?)", [(p["cust"], p["paid"]) for p in pays])
    rows = db.execute(
        f"SELECT o.oid, o.cust, o.amount, t.total, t.n FROM orders o {join} "
        "(SELECT cust, sum(paid) AS total, count(*) AS n FROM pays GROUP BY cust) t "
        "ON o.cust = t.cust").fetchall()
    # sum() of BIGINT is a HUGEINT in DuckDB: plain ints, as the JSON rows hold.
    return Counter((oid, cust, amount, None if total is None else int(total), n)
                   for oid, cust, amount, total, n in rows)


def as_tuples(applied):
    """apply_debezium's Counter of (column, value) pairs as a Counter of
    tuples in COLUMNS order."""
    out = Counter()
    for row, count in applied.items():
        d = dict(row)
        assert set(d) == set(COLUMNS), f"a row with columns {sorted(d)}"
        out[tuple(d[c] for c in COLUMNS)] += count
    return out


def diff(got, want, n=8):
    missing = want - got
    extra = got - want
    return (f"{sum(got.values())} rows, want {sum(want.values())}; "
            f"missing ({sum(missing.values())}) {sorted(missing.items(), key=str)[:n]}, "
            f"unexpected ({sum(extra.values())}) {sorted(extra.items(), key=str)[:n]}")


def run_join(server, kafka, join, seed, tag):
    rng = random.Random(seed)
    orders, pays = make_rows(rng)
    want = duckdb_answer(orders, pays, join)
    # The input covers what the test is about.
    assert any(o["cust"] is None for o in orders) and any(p["cust"] is None for p in pays)
    assert any(o["cust"] >= cust_name(N_PAYING) for o in orders if o["cust"] is not None)
    assert any(p["paid"] is None for p in pays)

    t_o, t_p = unique(f"{tag}_orders"), unique(f"{tag}_pays")
    s_o, s_p = unique(f"{tag}_o"), unique(f"{tag}_p")
    sink, flow = unique(f"{tag}_out"), unique(f"{tag}_flow")
    kafka.create_topic(t_o)
    kafka.create_topic(t_p)
    with server.connect() as conn:
        conn.execute(f"CREATE SOURCE {s_o} (oid BIGINT, cust STRING, amount BIGINT) WITH "
                     f"({kafka.options()}, subscribe = '{t_o}', startingOffsets = 'earliest', "
                     f"format = 'json')")
        conn.execute(f"CREATE SOURCE {s_p} (cust STRING, paid BIGINT) WITH "
                     f"({kafka.options()}, subscribe = '{t_p}', startingOffsets = 'earliest', "
                     f"format = 'json')")
        conn.execute(f"CREATE SINK {sink}_s WITH ({kafka.options()}, topic = '{sink}', "
                     f"format = 'debezium-json')")
        conn.execute(f"""CREATE FLOW {flow} INTO {sink}_s WITH ('shuffle.partitions' = '3') AS
            SELECT o.oid, o.cust, o.amount, t.total, t.n FROM {s_o} o {join}
              (SELECT cust, sum(paid) AS total, count(*) AS n FROM {s_p} GROUP BY cust) t
              ON o.cust = t.cust""")

    try:
        # The first orders go alone, and the flow reads them before any
        # payment is sent: they wait for their totals (the LEFT join writes
        # them with NULL totals first). Then random interleaved batches: an
        # order may come before or after its customer's payments, and
        # payments keep changing the totals of orders already joined.
        oi, pi = 20, 0
        kafka.produce(t_o, orders[:oi])
        outer = join.startswith("LEFT")

        def read_first(p):
            return p.get("numInputRows", 0) >= oi and (
                not outer or p.get("sink", {}).get("numOutputRows", 0) >= oi)

        last = server.wait_progress(flow, read_first, timeout=WAIT_S)
        assert last and read_first(last), json.dumps(last)
        while oi < len(orders) or pi < len(pays):
            n = rng.randint(1, 40)
            if rng.random() < 0.4 and oi < len(orders) or pi >= len(pays):
                kafka.produce(t_o, orders[oi:oi + n])
                oi += n
            else:
                kafka.produce(t_p, pays[pi:pi + n])
                pi += n

        # Poll the sink topic until its changelog leaves DuckDB's answer or
        # the deadline passes.
        got, records, error, progress = wait_for_debezium(server, kafka, flow, sink, want,
                                                          as_tuples, WAIT_S)
        if error is not None:
            pytest.fail(f"the changelog of {len(records)} records does not apply: {error}")
        if got != want:
            pytest.fail(f"{join} after {WAIT_S}s, {len(records)} changes: {diff(got, want)}\n"
                        f"progress: {json.dumps(progress)}")
        # Retractions happened: more changes than final rows.
        assert len(records) > sum(want.values())
        assert any(r.get("op") in ("u", "d") for r in records)
        return want, records
    finally:
        with server.connect() as conn:
            conn.execute(f"DROP FLOW IF EXISTS {flow}")


def test_stream_join_aggregate_matches_duckdb(server, kafka):
    want, _ = run_join(server, kafka, "JOIN", SEED, "dja")
    # Only orders of paying customers, each exactly once.
    assert all(row[3] is not None or row[4] is not None for row in want)
    assert all(c == 1 for c in want.values())


def test_stream_left_join_aggregate_matches_duckdb(server, kafka):
    want, records = run_join(server, kafka, "LEFT JOIN", SEED + 1, "djl")
    # Orders without payments (their customer never pays, or is NULL) end
    # with NULL totals; every order is there exactly once.
    assert sum(want.values()) == N_ORDERS
    assert any(row[4] is None for row in want)
    # Some order was first written with NULL totals and that row retracted
    # once its customer's first payment arrived.
    retracted_null = [r for r in records if r.get("before") is not None
                      and r["before"].get("n") is None]
    assert retracted_null, "no NULL-extended row was ever retracted"
