"""A debezium-json source against DuckDB: seeded random change events
(snapshot reads, inserts, updates that move rows between groups, deletes, the
tombstones after deletes, NULL balances) over a keyed CDC topic. The table the
events describe is built in Python and loaded into DuckDB; rtsql's GROUP BY
over the source, written to an upsert topic, must leave DuckDB's GROUP BY over
that table (count, sum, min and max, so min and max must survive the removal
of their current value), and a filtered pass-through into a debezium-json
topic must leave DuckDB's filtered table."""

import json
import random
import time

import duckdb
from confluent_kafka import Producer

from changelog import apply_debezium, apply_upsert, rows_multiset, wait_for_debezium
from conftest import unique

SEED = 20261202
N_EVENTS = 500
N_IDS = 40
OWNERS = [f"o{i}" for i in range(6)]
WAIT_S = 60


def make_events(rng):
    """(key, value) pairs in the order a connector would write them, and the
    table they leave ({id: row})."""
    table, events = {}, []

    def row(i):
        balance = None if rng.random() < 0.05 else rng.randint(-20, 200)
        return {"id": i, "owner": rng.choice(OWNERS), "balance": balance}

    for i in range(N_IDS // 2):  # a snapshot of half the ids
        table[i] = row(i)
        events.append((str(i), {"before": None, "after": table[i], "op": "r"}))
    for _ in range(N_EVENTS):
        i = rng.randrange(N_IDS)
        if i not in table:
            table[i] = row(i)
            events.append((str(i), {"before": None, "after": table[i], "op": "c"}))
        elif rng.random() < 0.25:
            events.append((str(i), {"before": table.pop(i), "after": None, "op": "d"}))
            events.append((str(i), None))  # the tombstone for compaction
        else:
            new = row(i)
            events.append((str(i), {"before": table[i], "after": new, "op": "u"}))
            table[i] = new
    return events, table


def produce_keyed(bootstrap, topic, events):
    """EVENTS keyed by id, as a CDC connector keys by primary key, so each id's
    events stay in order on its partition; a None value is a tombstone."""
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
    errors = []
    for key, value in events:
        while True:
            try:
                p.produce(topic, key=key, value=None if value is None else json.dumps(value),
                          on_delivery=lambda err, _m: errors.append(err) if err else None)
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    assert p.flush(30) == 0 and not errors, errors[:3]


def test_cdc_source_matches_duckdb(server, kafka):
    events, table = make_events(random.Random(SEED))
    db = duckdb.connect()
    db.execute("CREATE TABLE t (id INTEGER, owner VARCHAR, balance INTEGER)")
    db.executemany("INSERT INTO t VALUES (?, ?, ?)",
                   [(r["id"], r["owner"], r["balance"]) for r in table.values()])
    want_groups = rows_multiset(
        [tuple(r) for r in db.execute(
            "SELECT owner, count(*), sum(balance), min(balance), max(balance) FROM t "
            "GROUP BY owner").fetchall()],
        ["owner", "n", "total", "mi", "ma"])
    want_rich = rows_multiset(
        [tuple(r) for r in db.execute("SELECT id, owner, balance FROM t WHERE balance > 50")
         .fetchall()],
        ["id", "owner", "balance"])
    assert sum(want_rich.values()) > 0 and len(want_groups) == len(OWNERS)

    topic, src = unique("cdcd_in"), unique("cdcd_src")
    groups_out, rich_out = unique("cdcd_groups"), unique("cdcd_rich")
    groups_snk, rich_snk = unique("cdcd_gs"), unique("cdcd_rs")
    groups_flow, rich_flow = unique("cdcd_gf"), unique("cdcd_rf")
    kafka.create_topic(topic)
    server.run_script(f"""
CREATE SOURCE {src} (id BIGINT, owner STRING, balance BIGINT) WITH ({kafka.options()},
    subscribe = '{topic}', startingOffsets = 'earliest', format = 'debezium-json');
CREATE SINK {groups_snk} WITH ({kafka.options()}, topic = '{groups_out}', mode = 'upsert');
CREATE SINK {rich_snk} WITH ({kafka.options()}, topic = '{rich_out}', format = 'debezium-json');
CREATE FLOW {groups_flow} INTO {groups_snk} TRIGGER REALTIME AS
  SELECT owner, count(*) AS n, sum(balance) AS total, min(balance) AS mi, max(balance) AS ma
  FROM {src} GROUP BY owner;
CREATE FLOW {rich_flow} INTO {rich_snk} TRIGGER REALTIME AS
  SELECT id, owner, balance FROM {src} WHERE balance > 50;
""")
    produce_keyed(kafka.bootstrap, topic, events)

    deadline = time.monotonic() + WAIT_S
    got = None
    while time.monotonic() < deadline:
        got = rows_multiset(list(apply_upsert(kafka.consume_to_end(groups_out, timeout=3)).values()),
                            ["owner", "n", "total", "mi", "ma"])
        if got == want_groups:
            break
        time.sleep(0.2)
    progress = server.progress(groups_flow)
    assert got == want_groups, f"GROUP BY over the CDC source differs from DuckDB; {progress}"

    got, records, error, progress = wait_for_debezium(
        server, kafka, rich_flow, rich_out, want_rich,
        lambda c: rows_multiset([dict(r) for r in c.elements()], ["id", "owner", "balance"]),
        WAIT_S)
    assert error is None, error
    assert got == want_rich, f"filtered pass-through differs from DuckDB; {progress}"
    # Both kinds of retraction reached the debezium sink.
    ops = {r["op"] for r in records}
    assert {"c", "u", "d"} <= ops, ops
