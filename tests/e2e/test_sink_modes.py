"""Sinks that write a flow's changes (docs/connectors.md, "Sink modes"): a
GROUP BY into a format = 'debezium-json' topic and into a 'mode' = 'upsert'
topic. Each topic's changelog is applied (tests/e2e/changelog.py) and the
table it leaves must equal DuckDB's GROUP BY over the same seeded random
input. A sink that cannot write what a query emits is refused at CREATE FLOW.
"""

import random

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


QUERY = "SELECT k, count(*) AS n, sum(qty) AS sq, min(qty) AS mi, max(qty) AS ma FROM {src} GROUP BY k"


@pytest.fixture(scope="module")
def setup(server, kafka):
    rng = random.Random(SEED)
    records = make_records(rng)
    topic = unique("modes_in")
    src = unique("modes_src")
    out = {m: unique(f"modes_{m}") for m in ("cdc", "upsert")}
    flows = {m: unique(f"modes_f_{m}") for m in out}
    kafka.create_topic(topic)
    with server.connect() as conn:
        conn.execute(f"""CREATE SOURCE {src} (k STRING, qty INT)
                         WITH ({kafka.options()}, subscribe = '{topic}',
                               startingOffsets = 'earliest', format = 'json')""")
        conn.execute(f"CREATE SINK {out['cdc']}_s WITH ({kafka.options()}, topic = '{out['cdc']}', "
                     f"format = 'debezium-json')")
        conn.execute(f"CREATE SINK {out['upsert']}_s WITH ({kafka.options()}, "
                     f"topic = '{out['upsert']}', mode = 'upsert')")
        for m in out:
            conn.execute(f"CREATE FLOW {flows[m]} INTO {out[m]}_s WITH ('shuffle.partitions' = '3') AS "
                         + QUERY.format(src=src))
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
