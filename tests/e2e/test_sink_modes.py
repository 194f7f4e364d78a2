"""Sinks that write a flow's changes (docs/connectors.md, "Sink modes"): a
GROUP BY into a format = 'debezium-json' topic and into a 'mode' = 'upsert'
topic. Each topic's changelog is applied (tests/e2e/changelog.py) and the
table it leaves must equal DuckDB's GROUP BY over the same seeded random
input. A HAVING that groups enter and leave, into both sinks, must leave
exactly DuckDB's HAVING result: a group that stops passing is deleted. A sink
that cannot write what a query emits is refused at CREATE FLOW.
"""

import json
import random
import time

import duckdb
import psycopg
import pytest

from changelog import apply_debezium, apply_debezium_by_key, apply_upsert, rows_multiset
from conftest import unique

SEED = 20261201
N_RECORDS = 600
N_KEYS = 25
WAIT_S = 40
COLUMNS = ["k", "n", "sq", "mi", "ma"]


def make_records(rng):
    records = []
    for _ in range(N_RECORDS):
        qty = None if rng.random() < 0.1 else rng.randint(-50, 100)
        records.append({"k": f"k{rng.randrange(N_KEYS):02d}", "qty": qty})
    return records


def duckdb_groups(records):
    db = duckdb.connect()
    db.execute("CREATE TABLE t (k VARCHAR, qty INTEGER)")
    db.executemany("INSERT INTO t VALUES (?, ?)", [(r["k"], r["qty"]) for r in records])
    rows = db.execute("SELECT k, count(*), sum(qty), min(qty), max(qty) FROM t GROUP BY k").fetchall()
    return rows_multiset([tuple(r) for r in rows], COLUMNS)


# Groups pass while their count is in a band, so each enters and then leaves.
HAVING = "HAVING count(*) BETWEEN 10 AND 25 AND coalesce(sum(qty), 0) > 200"


def duckdb_having(records):
    db = duckdb.connect()
    db.execute("CREATE TABLE t (k VARCHAR, qty INTEGER)")
    db.executemany("INSERT INTO t VALUES (?, ?)", [(r["k"], r["qty"]) for r in records])
    rows = db.execute("SELECT k, count(*), sum(qty), min(qty), max(qty) FROM t GROUP BY k "
                      + HAVING).fetchall()
    return rows_multiset([tuple(r) for r in rows], COLUMNS)


def wait_for_table(kafka, topic, apply, want):
    """Re-reads TOPIC until the table its changes leave equals WANT (or the
    bound passes); returns the last table."""
    deadline = time.monotonic() + WAIT_S
    got = None
    while time.monotonic() < deadline:
        got = apply(kafka.consume_to_end(topic, timeout=3))
        if got == want:
            break
        time.sleep(0.2)
    return got


QUERY = "SELECT k, count(*) AS n, sum(qty) AS sq, min(qty) AS mi, max(qty) AS ma FROM {src} GROUP BY k"


@pytest.fixture(scope="module")
def setup(server, kafka):
    rng = random.Random(SEED)
    records = make_records(rng)
    topic = unique("modes_in")
    src = unique("modes_src")
    out = {m: unique(f"modes_{m}") for m in ("cdc", "upsert", "hcdc", "hupsert")}
    flows = {m: unique(f"modes_f_{m}") for m in out}
    kafka.create_topic(topic)
    with server.connect() as conn:
        conn.execute(f"""CREATE SOURCE {src} (k STRING, qty INT)
                         WITH ({kafka.options()}, subscribe = '{topic}',
                               startingOffsets = 'earliest', format = 'json')""")
        conn.execute(f"CREATE SINK {out['cdc']}_s WITH ({kafka.options()}, topic = '{out['cdc']}', "
                     f"format = 'debezium-json')")
        conn.execute(f"CREATE SINK {out['hcdc']}_s WITH ({kafka.options()}, topic = '{out['hcdc']}', "
                     f"format = 'debezium-json')")
        for m in ("upsert", "hupsert"):
            conn.execute(f"CREATE SINK {out[m]}_s WITH ({kafka.options()}, "
                         f"topic = '{out[m]}', mode = 'upsert')")
        for m in out:
            conn.execute(f"CREATE FLOW {flows[m]} INTO {out[m]}_s WITH ('shuffle.partitions' = '3') AS "
                         + QUERY.format(src=src) + (" " + HAVING if m.startswith("h") else ""))
    kafka.produce(topic, records)
    yield {"records": records, "src": src, "out": out, "flows": flows}
    with server.connect() as conn:
        for f in flows.values():
            conn.execute(f"DROP FLOW IF EXISTS {f}")


def test_upsert_topic_applies_to_duckdb_group_by(kafka, setup):
    want = duckdb_groups(setup["records"])
    # One record per input row: each changes its group's count.
    msgs = kafka.consume(setup["out"]["upsert"], n=N_RECORDS, timeout=WAIT_S, grace=0.5)
    assert len(msgs) == N_RECORDS
    table = apply_upsert(msgs)
    for key, row in table.items():
        assert key == row["k"], f"record of group {row['k']} under key {key}"
    assert rows_multiset(table.values(), COLUMNS) == want


def test_debezium_topic_applies_to_duckdb_group_by(kafka, setup):
    want = duckdb_groups(setup["records"])
    # One record per input row: an insert for a group's first row, one update
    # (old row and new) for each later one.
    msgs = kafka.consume(setup["out"]["cdc"], n=N_RECORDS, timeout=WAIT_S, grace=0.5)
    assert len(msgs) == N_RECORDS
    values = [m.value() for m in msgs]
    for m in msgs:
        assert m.key() is not None  # keyed by the group
    assert rows_multiset([dict(r) for r in apply_debezium(values).elements()], COLUMNS) == want
    table = apply_debezium_by_key(values, ["k"])
    assert rows_multiset(table.values(), COLUMNS) == want


def test_having_into_upsert_deletes_groups_that_leave(kafka, setup):
    want = duckdb_having(setup["records"])
    assert 0 < len(want) < N_KEYS  # some groups pass, some do not
    table = wait_for_table(kafka, setup["out"]["hupsert"],
                           lambda msgs: rows_multiset(apply_upsert(msgs).values(), COLUMNS), want)
    assert table == want
    # Groups did leave: some key's last record is a tombstone.
    msgs = kafka.consume(setup["out"]["hupsert"], timeout=3)
    last = {}
    for m in msgs:
        last[m.key()] = m.value()
    assert any(v is None for v in last.values())


def test_having_into_debezium_deletes_groups_that_leave(kafka, setup):
    want = duckdb_having(setup["records"])

    def apply(msgs):
        values = [m.value() for m in msgs]
        return rows_multiset([dict(r) for r in apply_debezium(values).elements()], COLUMNS)

    assert wait_for_table(kafka, setup["out"]["hcdc"], apply, want) == want
    msgs = kafka.consume(setup["out"]["hcdc"], timeout=3)
    ops = {json.loads(m.value())["op"] for m in msgs}
    assert "d" in ops


def test_sinks_refuse_what_they_cannot_write(server, kafka, setup):
    src = setup["src"]
    topic = unique("modes_refused")
    with server.connect() as conn:
        conn.execute(f"CREATE SINK {topic}_a WITH ({kafka.options()}, topic = '{topic}', "
                     f"mode = 'append')")
        conn.execute(f"CREATE SINK {topic}_u WITH ({kafka.options()}, topic = '{topic}', "
                     f"mode = 'upsert')")
        # An append-only sink and a GROUP BY: refused at the query.
        sql = f"CREATE FLOW {topic}_f1 INTO {topic}_a AS " + QUERY.format(src=src)
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            conn.execute(sql)
        assert e.value.diag.statement_position == str(sql.index("SELECT") + 1)
        # Upsert without a unique key: refused, pointing at debezium-json.
        with pytest.raises(psycopg.errors.FeatureNotSupported) as e:
            conn.execute(f"CREATE FLOW {topic}_f2 INTO {topic}_u AS SELECT k, qty FROM {src}")
        assert "debezium-json" in e.value.diag.message_hint
        # A file cannot hold an upsert.
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            conn.execute(f"CREATE SINK {topic}_file WITH (connector = 'file', "
                         f"path = '/tmp/{topic}.jsonl', mode = 'upsert')")
