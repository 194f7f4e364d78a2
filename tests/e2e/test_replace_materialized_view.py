"""CREATE OR REPLACE MATERIALIZED VIEW end to end: a view's rows against
DuckDB on the same seeded records before and after a replace that keeps its
state, with reads during the replace.

The records (g, k, x) of test_materialized_view.py, in two phases. The view
aggregates per (g, k); the replace adds a filter (x IS NULL OR x >= 0), which
keeps the aggregate's state and the view's rows. After it the view must hold
exactly DuckDB's rows of the first phase's records all counted and the second
phase's filtered: nothing lost, nothing counted twice, the new query in force
from the replace on. Reads while the replace runs must each see the rows as
committed before it, whole: never empty, never partial.

The broker outlives the servers (the `broker` fixture), as in the other view
tests.
"""

import random
import threading

import duckdb
import psycopg

from conftest import Server, unique, wait_for
from test_materialized_view import WAIT_S, converge, make_records

SEED = 20261207
N_RECORDS = 2400


def duck(first, second):
    """DuckDB's rows of the view: every record of the first phase, and those
    of the second that the replaced query lets through, in key order."""
    con = duckdb.connect()
    con.execute("CREATE TABLE r (phase INT, g VARCHAR, k VARCHAR, x BIGINT)")
    con.executemany("INSERT INTO r VALUES (?, ?, ?, ?)",
                    [(1, r["g"], r["k"], r["x"]) for r in first] +
                    [(2, r["g"], r["k"], r["x"]) for r in second])
    rows = con.execute("""SELECT g, k, count(*), sum(x), min(x), max(x) FROM r
                          WHERE phase = 1 OR x IS NULL OR x >= 0
                          GROUP BY g, k ORDER BY g, k""").fetchall()
    return [tuple(row) for row in rows]


QUERY = "SELECT g, k, count(*) AS n, sum(x) AS s, min(x) AS lo, max(x) AS hi FROM {src}{where} GROUP BY g, k"


def test_replace_keeps_the_view_rows_exact(broker, tmp_path):
    uid = unique("mv_replace")
    topic = f"{uid}_in"
    broker.create_topic(topic)
    records = make_records(random.Random(SEED), N_RECORDS)
    first, second = records[:N_RECORDS // 2], records[N_RECORDS // 2:]
    src, view = f"{uid}_src", f"{uid}_totals"
    server = Server(tmp_path).start()
    try:
        with server.connect() as conn:
            conn.execute(f"""CREATE SOURCE {src} (g STRING, k STRING, x BIGINT)
                             WITH ({broker.options()}, subscribe = '{topic}',
                                   startingOffsets = 'earliest', format = 'json')""")
            conn.execute(f"""CREATE MATERIALIZED VIEW {view} WITH ('shuffle.partitions' = '3') AS
                             {QUERY.format(src=src, where='')}""")
        broker.produce(topic, first)
        before = duck(first, [])
        converge(server, view, before)

        # Reads from another session while the replace runs.
        done = threading.Event()
        seen, errors = [], []

        def read():
            with server.connect() as conn:
                for _ in range(10_000):
                    if done.is_set():
                        return
                    try:
                        seen.append([tuple(r) for r in conn.execute(f"SELECT * FROM {view}")])
                    except psycopg.Error as e:
                        errors.append(str(e))
                        return

        reader = threading.Thread(target=read)
        reader.start()
        wait_for(lambda: len(seen) >= 3, WAIT_S, "the reader's first reads")
        with server.connect() as conn:
            plan = [r[0] for r in conn.execute(
                f"""EXPLAIN CREATE OR REPLACE MATERIALIZED VIEW {view} WITH ('shuffle.partitions' = '3') AS
                    {QUERY.format(src=src, where=' WHERE x IS NULL OR x >= 0')}""")]
            assert any(line.startswith(f"view table {view} key=(g, k)") and
                       line.endswith("state kept") for line in plan), plan
            reads_before = len(seen)
            conn.execute(f"""CREATE OR REPLACE MATERIALIZED VIEW {view} WITH ('shuffle.partitions' = '3') AS
                             {QUERY.format(src=src, where=' WHERE x IS NULL OR x >= 0')}""")
            # At once, as a new session would read it.
            assert [tuple(r) for r in conn.execute(f"SELECT * FROM {view}")] == before
        wait_for(lambda: len(seen) >= reads_before + 3, WAIT_S, "reads after the replace")
        done.set()
        reader.join(timeout=WAIT_S)
        assert not reader.is_alive()
        assert not errors, errors[:3]
        bad = [rows for rows in seen if rows != before]
        assert not bad, f"{len(bad)} of {len(seen)} reads differ from the committed rows: {bad[0]}"

        broker.produce(topic, second)
        converge(server, view, duck(first, second))
        # A restart keeps the replaced view's rows and query.
        assert server.stop() == 0
        server = Server(tmp_path).start()
        converge(server, view, duck(first, second))
        with server.connect() as conn:
            text = conn.execute(f"SHOW CREATE MATERIALIZED VIEW {view}").fetchone()[0]
            assert "WHERE x IS NULL OR x >= 0" in text, text
    finally:
        server.stop()
