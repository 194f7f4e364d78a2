"""A debezium-json source against DuckDB: seeded random change events
(snapshot reads, inserts, updates that move rows between groups, deletes, the
tombstones after deletes, NULL balances) over a keyed CDC topic. The table the
events describe is built in Python and loaded into DuckDB; rtsql's GROUP BY
over the source, written to an upsert topic, must leave DuckDB's GROUP BY over
that table (count, sum, min and max, so min and max must survive the removal
of their current value), and a filtered pass-through into a debezium-json
topic must leave DuckDB's filtered table.

Regular joins over such a source: the CDC source on either side of inner,
LEFT, RIGHT and FULL joins with a json source, `x IN (SELECT ...)` with the
CDC source outside and inside the subquery, a FULL join of two CDC sources and
a join feeding a GROUP BY, all over seeded events with deletes and changes of
the join key. The debezium-json changes each flow writes, applied, must leave
DuckDB's answer to the same query over the final tables."""

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
    # The module's server runs every test on every broker: give back the slots.
    for flow in (groups_flow, rich_flow):
        server.psql(f"DROP FLOW {flow}")


JOIN_SEED = 20261206
JOIN_EVENTS = 260
JOIN_IDS = 24
JOIN_KEYS = ["a", "b", "c", "d", "e"]


def make_join_events(rng, n_ids=JOIN_IDS, n_events=JOIN_EVENTS):
    """Change events of rows (id, g, v) whose g, the join key, moves between
    JOIN_KEYS (and NULL) on updates, and the table they leave ({id: row})."""
    table, events = {}, []

    def row(i):
        g = None if rng.random() < 0.05 else rng.choice(JOIN_KEYS)
        return {"id": i, "g": g, "v": rng.randint(0, 9)}

    for i in range(n_ids // 2):
        table[i] = row(i)
        events.append((str(i), {"before": None, "after": table[i], "op": "r"}))
    for _ in range(n_events):
        i = rng.randrange(n_ids)
        if i not in table:
            table[i] = row(i)
            events.append((str(i), {"before": None, "after": table[i], "op": "c"}))
        elif rng.random() < 0.3:
            events.append((str(i), {"before": table.pop(i), "after": None, "op": "d"}))
            events.append((str(i), None))
        else:
            new = row(i)
            events.append((str(i), {"before": table[i], "after": new, "op": "u"}))
            table[i] = new
    return events, table


def test_cdc_source_in_joins_matches_duckdb(server, kafka):
    rng = random.Random(JOIN_SEED)
    events, c_table = make_join_events(rng)
    events2, e_table = make_join_events(rng, n_ids=12, n_events=80)
    # The append side: rows keyed by k, some keys no c row ever has, some NULL.
    d_rows = [{"k": None if rng.random() < 0.05 else rng.choice(JOIN_KEYS + ["x"]),
               "w": rng.randint(0, 99)} for _ in range(30)]
    # Changes of the join key and deletes did happen.
    assert sum(1 for _, e in events if e and e["op"] == "d") > 20
    assert sum(1 for _, e in events
               if e and e["op"] == "u" and e["before"]["g"] != e["after"]["g"]) > 20

    db = duckdb.connect()
    db.execute("CREATE TABLE c (id BIGINT, g VARCHAR, v BIGINT)")
    db.executemany("INSERT INTO c VALUES (?, ?, ?)",
                   [(r["id"], r["g"], r["v"]) for r in c_table.values()])
    db.execute("CREATE TABLE e (id BIGINT, g VARCHAR, v BIGINT)")
    db.executemany("INSERT INTO e VALUES (?, ?, ?)",
                   [(r["id"], r["g"], r["v"]) for r in e_table.values()])
    db.execute("CREATE TABLE d (k VARCHAR, w BIGINT)")
    db.executemany("INSERT INTO d VALUES (?, ?)", [(r["k"], r["w"]) for r in d_rows])

    c_topic, e_topic, d_topic = unique("cdcj_c"), unique("cdcj_e"), unique("cdcj_d")
    c, e, d = unique("cdcj_cs"), unique("cdcj_es"), unique("cdcj_ds")
    lr = "c.id, c.g, c.v, d.k, d.w"
    rl = "d.k, d.w, c.id, c.g, c.v"
    # name -> (query over the tables {c}, {d} and {e}, its columns): the CDC
    # source c on the left, then on the right, of each join kind.
    queries = {
        "inner_l": (f"SELECT {lr} FROM {{c}} c JOIN {{d}} d ON c.g = d.k", lr),
        "inner_r": (f"SELECT {rl} FROM {{d}} d JOIN {{c}} c ON d.k = c.g", rl),
        "left_l": (f"SELECT {lr} FROM {{c}} c LEFT JOIN {{d}} d ON c.g = d.k", lr),
        "left_r": (f"SELECT {rl} FROM {{d}} d LEFT JOIN {{c}} c ON d.k = c.g", rl),
        "right_l": (f"SELECT {lr} FROM {{c}} c RIGHT JOIN {{d}} d ON c.g = d.k", lr),
        "right_r": (f"SELECT {rl} FROM {{d}} d RIGHT JOIN {{c}} c ON d.k = c.g", rl),
        "full_l": (f"SELECT {lr} FROM {{c}} c FULL JOIN {{d}} d ON c.g = d.k", lr),
        "full_r": (f"SELECT {rl} FROM {{d}} d FULL JOIN {{c}} c ON d.k = c.g", rl),
        "in_outer": ("SELECT id, g, v FROM {c} WHERE g IN (SELECT k FROM {d})", "id, g, v"),
        "in_inner": ("SELECT k, w FROM {d} WHERE k IN (SELECT g FROM {c})", "k, w"),
        "full_cdc": ("SELECT c.id, c.g, e.id AS eid, e.v AS ev "
                     "FROM {c} c FULL JOIN {e} e ON c.g = e.g", "id, g, eid, ev"),
        "join_agg": ("SELECT d.k, count(*) AS n, sum(c.v) AS total "
                     "FROM {c} c JOIN {d} d ON c.g = d.k GROUP BY d.k", "k, n, total"),
    }
    names = {q: unique(f"cdcj_{q}") for q in queries}
    # The topics exist before the flows (a real broker creates none on
    # demand); one task reads each source, so the twelve flows fit the
    # server's slots whatever the broker's partition count.
    for topic in (c_topic, e_topic, d_topic):
        kafka.create_topic(topic)
    ddl = [
        f"CREATE SOURCE {c} (id BIGINT, g STRING, v BIGINT) WITH ({kafka.options()}, "
        f"subscribe = '{c_topic}', startingOffsets = 'earliest', format = 'debezium-json', "
        "maxPartitions = '1');",
        f"CREATE SOURCE {e} (id BIGINT, g STRING, v BIGINT) WITH ({kafka.options()}, "
        f"subscribe = '{e_topic}', startingOffsets = 'earliest', format = 'debezium-json', "
        "maxPartitions = '1');",
        f"CREATE SOURCE {d} (k STRING, w BIGINT) WITH ({kafka.options()}, "
        f"subscribe = '{d_topic}', startingOffsets = 'earliest', format = 'json', "
        "maxPartitions = '1');",
    ]
    for q, (sql, _) in queries.items():
        name = names[q]
        ddl.append(f"CREATE SINK {name}_s WITH ({kafka.options()}, topic = '{name}', "
                   "format = 'debezium-json');")
        ddl.append(f"CREATE FLOW {name} INTO {name}_s WITH ('shuffle.partitions' = '1') AS "
                   f"{sql.format(c=c, d=d, e=e)};")
    server.run_script("\n".join(ddl))

    # The two sides interleave: a third of d's rows, the events, the rest.
    kafka.produce(d_topic, [json.dumps(r) for r in d_rows[:10]])
    produce_keyed(kafka.bootstrap, c_topic, events[: len(events) // 2])
    produce_keyed(kafka.bootstrap, e_topic, events2)
    kafka.produce(d_topic, [json.dumps(r) for r in d_rows[10:]])
    produce_keyed(kafka.bootstrap, c_topic, events[len(events) // 2:])

    for q, (sql, cols) in queries.items():
        columns = [col.strip().split(".")[-1].split(" AS ")[-1] for col in cols.split(",")]
        want = rows_multiset(
            [tuple(r) for r in db.execute(sql.format(c="c", d="d", e="e")).fetchall()], columns)
        assert sum(want.values()) > 0, q
        got, records, error, progress = wait_for_debezium(
            server, kafka, names[q], names[q], want,
            lambda ch, columns=columns: rows_multiset([dict(r) for r in ch.elements()], columns),
            WAIT_S)
        assert error is None, f"{q}: {error}"
        assert got == want, (f"{q} differs from DuckDB: missing {want - got}, extra {got - want}; "
                             f"{progress}")
        assert {r["op"] for r in records} >= {"c", "d"}, q
    for q in queries:
        server.psql(f"DROP FLOW {names[q]}")
