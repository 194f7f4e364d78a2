"""Materialized views end to end: a view's rows against DuckDB on the same
seeded records (every row in key order, and each key looked up by a
prepared statement), a restart that keeps the rows, and kill -9 in the
middle of the stream with the rows exact afterwards.

The records (g, k, x) have 24 keys k in 4 classes g, and NULLs among x. One
view aggregates per (g, k); another keeps only the keys whose count is not a
multiple of 3, so that a key's row comes and goes as its records arrive (an
insert, a delete by retraction, an insert again). DuckDB computes both from
the same records; the views must converge to exactly its rows.

In a cluster, every node answers SELECTs over a view: the node that runs it
from its snapshot, the others by sending the read there.

The broker outlives the killed server (the `broker` fixture): on the
"embedded" run the embedded broker of a second rtsqld that is never killed,
on the "real" run (RTSQL_KAFKA_BOOTSTRAP) an Apache Kafka broker.
"""

import json
import random
import threading

import duckdb
import psycopg
import pytest

from cluster import run_again_on_40001, runner, start_node, two_nodes_reading_a_topic  # noqa: F401
from conftest import HttpServer, Kafka, Server, unique, wait_for

SEED = 20261206
N_RECORDS = 3000
N_KEYS = 24
WAIT_S = 90  # bound on every wait for a view to converge


def make_records(rng, n):
    out = []
    for _ in range(n):
        i = rng.randrange(N_KEYS)
        out.append({"g": f"g{i % 4}", "k": f"k{i:02d}",
                    "x": None if rng.random() < 0.1 else rng.randint(-50, 100)})
    return out


def duck(records):
    """DuckDB's rows of both views, in key order."""
    con = duckdb.connect()
    con.execute("CREATE TABLE r (g VARCHAR, k VARCHAR, x BIGINT)")
    con.executemany("INSERT INTO r VALUES (?, ?, ?)", [(r["g"], r["k"], r["x"]) for r in records])
    totals = con.execute("""SELECT g, k, count(*), sum(x), min(x), max(x) FROM r
                            GROUP BY g, k ORDER BY g, k""").fetchall()
    odd = con.execute("""SELECT k, count(*) FROM r GROUP BY k HAVING count(*) % 3 <> 0
                         ORDER BY k""").fetchall()
    return [tuple(row) for row in totals], [tuple(row) for row in odd]


def create(server, broker, uid, topic):
    src, totals, odd = f"{uid}_src", f"{uid}_totals", f"{uid}_odd"
    with server.connect() as conn:
        conn.execute(f"""CREATE SOURCE {src} (g STRING, k STRING, x BIGINT)
                         WITH ({broker.options()}, subscribe = '{topic}',
                               startingOffsets = 'earliest', format = 'json')""")
        conn.execute(f"""CREATE MATERIALIZED VIEW {totals} WITH ('shuffle.partitions' = '3') AS
                         SELECT g, k, count(*) AS n, sum(x) AS s, min(x) AS lo, max(x) AS hi
                         FROM {src} GROUP BY g, k""")
        conn.execute(f"""CREATE MATERIALIZED VIEW {odd} WITH ('shuffle.partitions' = '2') AS
                         SELECT k, count(*) AS n FROM {src} GROUP BY k
                         HAVING count(*) % 3 <> 0""")
    return totals, odd


def scan(server, view):
    try:
        return [tuple(r) for r in server.query(f"SELECT * FROM {view}")]
    except psycopg.Error:
        return None  # still being restored after a kill: asked again


def converge(server, view, expected):
    last = []

    def matches():
        last[:] = [scan(server, view)]
        return last[0] == expected

    wait_for(matches, WAIT_S, f"{view} to equal DuckDB's {len(expected)} rows (last: {last})")


def test_views_equal_duckdb_and_answer_prepared_lookups(broker, tmp_path):
    uid = unique("mv_diff")
    topic = f"{uid}_in"
    broker.create_topic(topic)
    records = make_records(random.Random(SEED), N_RECORDS)
    server = Server(tmp_path).start()
    try:
        totals, odd = create(server, broker, uid, topic)
        broker.produce(topic, records)
        want_totals, want_odd = duck(records)
        converge(server, totals, want_totals)
        converge(server, odd, want_odd)
        # Each key by a prepared statement ($1, $2 over the extended protocol),
        # and a key that has no row.
        with server.connect() as conn:
            for g, k, n, s, lo, hi in want_totals:
                row = conn.execute(f"SELECT n, s, lo, hi FROM {totals} WHERE g = %s AND k = %s",
                                   (g, k), prepare=True).fetchone()
                assert row == (n, s, lo, hi), (g, k)
            present = {k for k, _ in want_odd}
            for i in range(N_KEYS):
                k = f"k{i:02d}"
                row = conn.execute(f"SELECT n FROM {odd} WHERE k = %s", (k,),
                                   prepare=True).fetchone()
                assert (row is not None) == (k in present), k
            # The epoch the last read saw.
            epoch = conn.execute("SHOW rtsql.view_epoch").fetchone()[0]
            assert epoch is not None and int(epoch) >= 0
            views = {r[0]: r for r in conn.execute("SHOW MATERIALIZED VIEWS").fetchall()}
            assert views[totals][1] == "running" and views[totals][3] == "g, k"
    finally:
        server.stop()


def test_restart_keeps_the_rows(broker, tmp_path):
    uid = unique("mv_restart")
    topic = f"{uid}_in"
    broker.create_topic(topic)
    records = make_records(random.Random(SEED + 1), 600)
    server = Server(tmp_path).start()
    totals, odd = create(server, broker, uid, topic)
    broker.produce(topic, records)
    want_totals, want_odd = duck(records)
    converge(server, totals, want_totals)
    assert server.stop() == 0
    server = Server(tmp_path).start()
    try:
        # At once: a read waits while the view is restored.
        assert scan(server, totals) == want_totals
        converge(server, odd, want_odd)
    finally:
        server.stop()


def kill_9_while_producing(server, broker, topic, records, start, taken_in, what, tmp_path):
    """Produces records[start:] from a thread in batches of 100; once
    TAKEN_IN() holds (WHAT it waits for), kills rtsqld with SIGKILL and
    starts it again on its data directory. Returns the new server and a
    function that waits for the producer and fails if it did not end cleanly."""
    errors = []

    def produce_rest():
        try:
            for at in range(start, len(records), 100):
                broker.produce(topic, records[at:at + 100])
        except Exception as e:  # reported by the returned function, in the test's thread
            errors.append(e)

    producer = threading.Thread(target=produce_rest)
    producer.start()
    wait_for(taken_in, WAIT_S, what)
    server.proc.kill()
    server.proc.wait(timeout=10)
    server = Server(tmp_path)
    server.log_path = tmp_path / "rtsqld.1.log"
    server.start()

    def produced():
        producer.join(timeout=WAIT_S)
        assert not producer.is_alive() and not errors, errors
    return server, produced


def test_kill_9_mid_stream_keeps_the_rows_exact(broker, tmp_path):
    uid = unique("mv_kill")
    topic = f"{uid}_in"
    broker.create_topic(topic)
    records = make_records(random.Random(SEED + 2), N_RECORDS)
    half = N_RECORDS // 2
    server = Server(tmp_path).start()
    totals, odd = create(server, broker, uid, topic)
    broker.produce(topic, records[:half])
    first_totals, _ = duck(records[:half])
    converge(server, totals, first_totals)
    # The rest streams in from a thread while the server is killed.
    server, produced = kill_9_while_producing(
        server, broker, topic, records, half,
        lambda: sum(r[2] for r in scan(server, totals) or []) > half,
        "the view to take in records of the second half", tmp_path)
    try:
        produced()
        want_totals, want_odd = duck(records)
        converge(server, totals, want_totals)
        converge(server, odd, want_odd)
    finally:
        server.stop()


def per_class(records):
    """DuckDB's answer to a bounded query over the totals view: per class g,
    its keys, records and sum, in g's order."""
    con = duckdb.connect()
    con.execute("CREATE TABLE r (g VARCHAR, k VARCHAR, x BIGINT)")
    con.executemany("INSERT INTO r VALUES (?, ?, ?)", [(r["g"], r["k"], r["x"]) for r in records])
    return [tuple(row) for row in con.execute(
        """SELECT g, count(*), sum(n), sum(s) FROM
             (SELECT g, k, count(*) AS n, sum(x) AS s FROM r GROUP BY g, k)
           GROUP BY g ORDER BY g""").fetchall()]


def test_kill_9_storm_between_batches_keeps_every_count_exact(broker, tmp_path):
    """Batches of records, rtsqld killed with SIGKILL right after each batch
    is produced (the batch taken in partly, wholly or not at all), started
    again on its data directory: after every restore both views, and a
    bounded query over one, equal DuckDB's on every record produced so far."""
    uid = unique("mv_storm")
    topic = f"{uid}_in"
    broker.create_topic(topic)
    records = make_records(random.Random(SEED + 3), 1200)
    batches = [records[i:i + 300] for i in range(0, len(records), 300)]
    server = Server(tmp_path).start()
    totals, odd = create(server, broker, uid, topic)
    produced = 0
    try:
        for round_, batch in enumerate(batches):
            broker.produce(topic, batch)
            produced += len(batch)
            server.proc.kill()
            server.proc.wait(timeout=10)
            server = Server(tmp_path)
            server.log_path = tmp_path / f"rtsqld.storm{round_}.log"
            server.start()
            want_totals, want_odd = duck(records[:produced])
            converge(server, totals, want_totals)
            converge(server, odd, want_odd)
            got = [tuple(r) for r in server.query(
                f"SELECT g, count(*), sum(n), sum(s) FROM {totals} GROUP BY g ORDER BY g")]
            assert got == per_class(records[:produced]), round_
    finally:
        server.stop()


def test_console_lists_views(tmp_path):
    server = HttpServer(tmp_path).start()
    try:
        uid = unique("mv_http")
        with server.connect() as conn:
            conn.execute(f"""CREATE SOURCE {uid}_src (k STRING)
                             WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
                                   subscribe = '{uid}_in', format = 'json')""")
            conn.execute(f"""CREATE MATERIALIZED VIEW {uid}_v AS
                             SELECT k, count(*) AS n FROM {uid}_src GROUP BY k""")
        status, _, body = server.http("/flows")
        assert status == 200
        mine = {f["name"]: f for f in json.loads(body)}
        assert mine[f"{uid}_v"]["materializedView"] is True
        _, _, script = server.http("/console/console.js")
        assert "materializedView" in script
    finally:
        server.stop()


def test_a_failed_view_answers_its_last_snapshot_and_says_so(tmp_path):
    server = Server(tmp_path).start()
    try:
        kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
        uid = unique("mv_fail")
        topic = f"{uid}_in"
        kafka.create_topic(topic)
        with server.connect() as conn:
            conn.execute(f"""CREATE SOURCE {uid}_src (k STRING, v BIGINT)
                             WITH ({kafka.options()}, subscribe = '{topic}',
                                   startingOffsets = 'earliest', format = 'json')""")
            # A negative v fails the flow (raise_error, 'on.error' = 'fail').
            conn.execute(f"""CREATE MATERIALIZED VIEW {uid}_v AS
                             SELECT k, count(*) AS n,
                                    max(CASE WHEN v < 0 THEN raise_error('negative') ELSE v END)
                                      AS m
                             FROM {uid}_src GROUP BY k""")
        kafka.produce(topic, [{"k": "a", "v": 1}, {"k": "b", "v": 2}, {"k": "a", "v": 3}])
        want = [("a", 2, 3), ("b", 1, 2)]
        converge(server, f"{uid}_v", want)
        kafka.produce(topic, [{"k": "a", "v": -1}])
        # Failed, and retried by the supervisor (SHOW FLOWS: recovering).
        wait_for(lambda: any(r[0] == f"{uid}_v" and "negative" in (r[4] or "")
                             for r in server.query("SHOW FLOWS")),
                 WAIT_S, "the view's flow to fail")
        notices = []
        with server.connect() as conn:
            conn.add_notice_handler(lambda d: notices.append(d.message_primary))

            def answered():
                rows = [tuple(r) for r in conn.execute(f"SELECT * FROM {uid}_v").fetchall()]
                return rows == want and any("its flow failed" in n for n in notices)

            wait_for(answered, WAIT_S, f"the failed view's snapshot and its notice ({notices})")
    finally:
        server.stop()


def test_a_view_that_cannot_be_restored_answers_55000_within_statement_timeout(tmp_path):
    """Every checkpoint of a view damaged: after a restart its flow cannot
    restore its rows, and a read waits within the statement's timeout and
    answers 55000 saying why, rather than wait on or answer no rows."""
    server = Server(tmp_path).start()
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    uid = unique("mv_norestore")
    topic, v = f"{uid}_in", f"{uid}_v"
    kafka.create_topic(topic)
    with server.connect() as conn:
        conn.execute(f"""CREATE SOURCE {uid}_src (k STRING)
                         WITH ({kafka.options()}, subscribe = '{topic}',
                               startingOffsets = 'earliest', format = 'json')""")
        conn.execute(f"CREATE MATERIALIZED VIEW {v} AS SELECT k, count(*) AS n FROM {uid}_src "
                     "GROUP BY k")
    kafka.produce(topic, [{"k": "a"}, {"k": "b"}, {"k": "a"}])
    converge(server, v, [("a", 2), ("b", 1)])
    assert server.stop() == 0
    root = tmp_path / "data" / "flows" / v / "checkpoints"
    epochs = [p for p in root.iterdir() if p.name.isdigit()]
    assert epochs, list(root.iterdir())
    for e in epochs:
        (e / "checkpoint.meta").write_text("rtsql-checkpoint 1 12 00000000\nnot a checkpoint\n")
    server = Server(tmp_path)
    server.log_path = tmp_path / "rtsqld.1.log"
    server.start()
    try:
        with server.connect() as conn:
            conn.execute("SET statement_timeout = '2s'")
            with pytest.raises(psycopg.Error) as err:
                conn.execute(f"SELECT * FROM {v}").fetchall()
            assert err.value.sqlstate == "55000", err.value
            assert "still being restored" in str(err.value)
            # Once its flow has given up, the detail says why.
            wait_for(lambda: any(r[0] == v and r[2] == "failed" for r in
                                 conn.execute("SHOW FLOWS").fetchall()),
                     WAIT_S, "the view's flow to fail restoring")
            with pytest.raises(psycopg.Error) as err:
                conn.execute(f"SELECT * FROM {v} WHERE k = 'a'").fetchall()
            assert err.value.sqlstate == "55000"
            assert "cannot restore" in (err.value.diag.message_detail or ""), err.value.diag
    finally:
        server.stop()


def test_in_a_cluster_every_node_answers_a_read_of_a_view(broker, start_node):
    uid, a, b = two_nodes_reading_a_topic(start_node, broker, "mv_cl", "out")
    run_again_on_40001(a, "CREATE MATERIALIZED VIEW per_k AS "
                          "SELECT k, count(*) AS c, sum(n) AS s FROM ev GROUP BY k")
    broker.produce(f"{uid}_in", [{"k": "x", "n": 1}, {"k": "y", "n": 2}, {"k": "x", "n": 3}])
    holder = runner("per_k", a, b)
    other = b if holder is a else a
    converge(holder, "per_k", [("x", 2, 4), ("y", 1, 2)])
    # The other node sends the read to the holder (tests/e2e/test_view_forward.py).
    assert other.query("SELECT * FROM per_k WHERE k = 'x'") == [("x", 2, 4)]
    # A bounded query over the view alike.
    assert other.query("SELECT k, s FROM per_k ORDER BY s") == [("y", 2), ("x", 4)]