"""Materialized views over materialized views end to end: views stacked over
a view, with updates and deletes, against DuckDB on the same seeded records,
with kill -9 of rtsqld in the middle of the stream.

The records and the base views are test_materialized_view's: `totals` per
(g, k) and `odd`, the keys whose count is not a multiple of 3, whose rows
come and go. Over them: `per_g` aggregates `totals` per class (each record
updates a key's row, which moves its class's sums: a retraction and an
insert), and `odd_count` counts the rows of `odd` (its deletes must take
rows out). Each stacked view reads its base view's changelog exactly once
across the kill: a change given twice or lost would leave its sums off.
"""

import random

import duckdb
import psycopg
import pytest

from conftest import Server, unique, wait_for
from test_materialized_view import (N_RECORDS, SEED, WAIT_S, converge, create,
                                    kill_9_while_producing, make_records, scan)


def duck_stacked(records):
    """DuckDB's rows of the stacked views, in key order."""
    con = duckdb.connect()
    con.execute("CREATE TABLE r (g VARCHAR, k VARCHAR, x BIGINT)")
    con.executemany("INSERT INTO r VALUES (?, ?, ?)", [(r["g"], r["k"], r["x"]) for r in records])
    per_g = con.execute("""SELECT g, count(*), sum(n), sum(s) FROM
                             (SELECT g, k, count(*) AS n, sum(x) AS s FROM r GROUP BY g, k)
                           GROUP BY g ORDER BY g""").fetchall()
    odd_count = con.execute("""SELECT count(*), sum(n) FROM
                                 (SELECT k, count(*) AS n FROM r GROUP BY k
                                  HAVING count(*) % 3 <> 0)""").fetchall()
    return [tuple(row) for row in per_g], [tuple(row) for row in odd_count]


def create_stacked(server, uid, totals, odd):
    per_g, odd_count = f"{uid}_per_g", f"{uid}_odd_count"
    with server.connect() as conn:
        conn.execute(f"""CREATE MATERIALIZED VIEW {per_g} WITH ('shuffle.partitions' = '2') AS
                         SELECT g, count(*) AS keys, sum(n) AS n, sum(s) AS s
                         FROM {totals} GROUP BY g""")
        conn.execute(f"""CREATE MATERIALIZED VIEW {odd_count} AS
                         SELECT count(*) AS keys, sum(n) AS n FROM {odd}""")
    return per_g, odd_count


def test_stacked_views_equal_duckdb_across_kill_9(broker, tmp_path):
    uid = unique("vi_kill")
    topic = f"{uid}_in"
    broker.create_topic(topic)
    records = make_records(random.Random(SEED + 45), N_RECORDS)
    half = N_RECORDS // 2
    server = Server(tmp_path).start()
    totals, odd = create(server, broker, uid, topic)
    broker.produce(topic, records[: half // 2])
    # The stacked views are made after their base views have rows: they
    # start from the base views' rows, then follow their changes.
    wait_for(lambda: sum(r[2] for r in scan(server, totals) or []) == half // 2, WAIT_S,
             "the base view to take in the first records")
    per_g, odd_count = create_stacked(server, uid, totals, odd)
    broker.produce(topic, records[half // 2:half])
    first_per_g, first_odd_count = duck_stacked(records[:half])
    converge(server, per_g, first_per_g)
    converge(server, odd_count, first_odd_count)
    # The rest streams in from a thread while the server is killed.
    server, produced = kill_9_while_producing(
        server, broker, topic, records, half,
        lambda: sum(r[2] for r in scan(server, per_g) or []) > half,
        "the stacked view to take in records of the second half", tmp_path)
    try:
        produced()
        want_per_g, want_odd_count = duck_stacked(records)
        converge(server, per_g, want_per_g)
        converge(server, odd_count, want_odd_count)
        # A base view that stacked views read is not dropped.
        with server.connect() as conn:
            with pytest.raises(psycopg.errors.DependentObjectsStillExist, match=per_g):
                conn.execute(f"DROP MATERIALIZED VIEW {totals}")
    finally:
        server.stop()
