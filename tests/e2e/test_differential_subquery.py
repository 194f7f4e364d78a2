"""Differential tests of subqueries in WHERE against DuckDB: orders filtered
by `cust IN (SELECT cust FROM pays WHERE ...)` and by a comparison with a
scalar subquery `(SELECT avg(paid) FROM pays WHERE ...)`, and by an IN whose
subquery's values come and go (`GROUP BY cust HAVING sum(paid) > 1000 AND
sum(paid) < 2500`), so that orders already written
are retracted when their customer leaves it.

rtsql plans each as a regular join with an aggregation over the payments
(docs/sql.md, "Subqueries"): the IN form joins each order with the distinct
customers that paid, so that an order is written once however many payments
its customer made; the scalar form joins each order with the one row of the
aggregate and checks the comparison on the joined row, so that each change
of the average retracts the orders it no longer lets through and writes the
ones it now does.

Seeded random input: orders and payments over a few customers, some
customers with orders but no payments, some with payments but no orders,
NULL customers on both sides (an IN never holds for them) and NULL payments
(the average skips them). A first batch of orders is read before any
payment is sent, so orders wait in the join's state for the subquery's
rows; the rest come in random interleaved batches. The flow writes into a
`debezium-json` sink; its records, applied in order with
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

SEED = 20261203
N_PAYING = 10  # customers c00..c09 pay; c10..c13 only order
N_CUSTOMERS = 14
WAIT_S = 90  # bound on the wait for the flow's final result

COLUMNS = ("oid", "cust", "amount")

IN_WHERE = "amount > 100 AND cust IN (SELECT cust FROM {pays} WHERE paid > 20)"
# The subquery's values come and go: a customer is in it while its total
# is between 1000 and 2500, which most totals pass through.
IN_HAVING_WHERE = ("cust IN (SELECT cust FROM {pays} GROUP BY cust "
                   "HAVING sum(paid) > 1000 AND sum(paid) < 2500)")
SCALAR_WHERE = "amount > (SELECT avg(paid) FROM {pays} WHERE cust <> 'c00') + 50"


def cust_name(i):
    return f"c{i:02d}"


def make_rows(rng, n_orders, n_pays):
    orders = []
    for oid in range(n_orders):
        cust = None if rng.random() < 0.03 else cust_name(rng.randrange(N_CUSTOMERS))
        orders.append({"oid": oid, "cust": cust, "amount": rng.randint(1, 300)})
    pays = []
    for _ in range(n_pays):
        r = rng.random()
        if r < 0.03:
            cust = None
        elif r < 0.08:
            cust = f"p{rng.randrange(3)}"  # pays, never orders
        else:
            cust = cust_name(rng.randrange(N_PAYING))
        paid = None if rng.random() < 0.05 else rng.randint(-50, 200)
        pays.append({"cust": cust, "paid": paid})
    return orders, pays


def duckdb_answer(orders, pays, where):
    db = duckdb.connect()
    db.execute("CREATE TABLE orders (oid BIGINT, cust VARCHAR, amount BIGINT)")
    db.execute("CREATE TABLE pays (cust VARCHAR, paid BIGINT)")
    db.executemany("INSERT INTO orders VALUES (?, ?, ?)",
                   [(o["oid"], o["cust"], o["amount"]) for o in orders])
    db.executemany("INSERT INTO pays VALUES (?, ?)", [(p["cust"], p["paid"]) for p in pays])
    rows = db.execute(
        f"SELECT oid, cust, amount FROM orders WHERE {where.format(pays='pays')}").fetchall()
    return Counter(rows)


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


def run_flow(server, kafka, where, seed, tag, n_orders, n_pays):
    rng = random.Random(seed)
    orders, pays = make_rows(rng, n_orders, n_pays)
    want = duckdb_answer(orders, pays, where)
    # The input covers what the test is about.
    assert any(o["cust"] is None for o in orders) and any(p["cust"] is None for p in pays)
    assert any(o["cust"] >= cust_name(N_PAYING) for o in orders if o["cust"] is not None)
    assert any(p["paid"] is None for p in pays)
    # The filter keeps some orders and drops others.
    assert 0 < sum(want.values()) < n_orders

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
            SELECT oid, cust, amount FROM {s_o} WHERE {where.format(pays=s_p)}""")

    try:
        # The first orders go alone, and the flow reads them before any
        # payment is sent: they wait in the join's state. Then random
        # interleaved batches: an order may come before or after the
        # payments that let it through, and payments keep changing the
        # subquery's result for orders already written.
        oi, pi = 20, 0
        kafka.produce(t_o, orders[:oi])

        def read_first(p):
            return p.get("numInputRows", 0) >= oi

        last = server.wait_progress(flow, read_first, timeout=WAIT_S)
        assert last and read_first(last), json.dumps(last)
        assert last.get("sink", {}).get("numOutputRows", 0) == 0, json.dumps(last)
        while oi < len(orders) or pi < len(pays):
            n = rng.randint(1, 30)
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
            pytest.fail(f"{where} after {WAIT_S}s, {len(records)} changes: {diff(got, want)}\n"
                        f"progress: {json.dumps(progress)}")
        return want, records
    finally:
        with server.connect() as conn:
            conn.execute(f"DROP FLOW IF EXISTS {flow}")


def test_in_subquery_matches_duckdb(server, kafka):
    want, records = run_flow(server, kafka, IN_WHERE, SEED, "dsi", 300, 400)
    # A semi join: every order at most once, though its customer paid many times.
    assert all(c == 1 for c in want.values())
    assert all(r.get("op") == "c" for r in records), "an append-only IN wrote a retraction"
    assert len(records) == sum(want.values())


def test_in_subquery_with_retractions_matches_duckdb(server, kafka):
    want, records = run_flow(server, kafka, IN_HAVING_WHERE, SEED + 2, "dsh", 300, 400)
    assert all(c == 1 for c in want.values())
    # Customers left the subquery's result and took their orders with them.
    assert any(r.get("op") == "d" for r in records)


def test_scalar_subquery_matches_duckdb(server, kafka):
    want, records = run_flow(server, kafka, SCALAR_WHERE, SEED + 1, "dss", 200, 150)
    # The average moved: orders were let through and taken back.
    assert any(r.get("op") == "d" for r in records)
    assert len(records) > sum(want.values())
