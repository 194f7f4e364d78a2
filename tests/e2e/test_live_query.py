"""Live queries: SELECT on a stream runs as a temporary flow whose rows stream to
the client. LIMIT ends it, a cancel or a disconnect ends it, and every way it
ends gives its task slots back; it commits no offsets. Live queries on a source
read from the latest offsets share one Kafka consumer (SHOW live_taps)."""

import threading
import time

import psycopg
import pytest

from conftest import unique


def slots_used(server):
    text = server.query("SHOW slots")[0][0]  # "N used of M"
    return int(text.split()[0])


def declare_source(server, kafka, topic, name):
    server.query(
        f"CREATE SOURCE {name} (id BIGINT, user_id STRING, amount DOUBLE) "
        f"WITH ({kafka.options()}, subscribe = '{topic}', startingOffsets = 'earliest', "
        f"format = 'json')")


def test_limit_returns_the_first_rows_and_frees_the_slots(server, kafka):
    topic, src = unique("live_in"), unique("live_src")
    kafka.create_topic(topic)
    kafka.produce(topic, [{"id": i, "user_id": f"u{i % 3}", "amount": i * 1.5} for i in range(20)])
    declare_source(server, kafka, topic, src)
    before = slots_used(server)

    rows = server.query(f"SELECT id, upper(user_id) AS u, amount * 2 AS d FROM {src} WHERE id >= 5 LIMIT 4")
    # The topic may have several partitions, so which four arrive first is not
    # fixed; each must be a distinct, correctly computed row that passed WHERE.
    assert len(rows) == 4 and len({r[0] for r in rows}) == 4, rows
    for i, u, d in rows:
        assert 5 <= i < 20 and u == f"U{i % 3}" and d == i * 3.0, rows
    assert slots_used(server) == before

    # Through psql as well: the rows come as a normal result set.
    out = server.psql(f"SELECT id FROM {src} LIMIT 2").stdout.split()
    assert len(out) == 2 and all(0 <= int(x) < 20 for x in out), out


def test_column_types_reach_the_driver(server, kafka):
    topic, src = unique("live_types_in"), unique("live_types_src")
    kafka.create_topic(topic)
    kafka.produce(topic, [{"id": 7, "user_id": "u", "amount": 2.5}])
    declare_source(server, kafka, topic, src)
    rows = server.query(f"SELECT id, amount, amount > 2 AS big, amount < 0 AS neg, "
                        f"CAST(NULL AS STRING) AS nothing FROM {src} LIMIT 1")
    assert [tuple(r) for r in rows] == [(7, 2.5, True, False, None)]


def test_aggregating_live_query_streams_updates(server, kafka):
    topic, src = unique("live_agg_in"), unique("live_agg_src")
    kafka.create_topic(topic)
    kafka.produce(topic, [{"id": i, "user_id": "a" if i % 2 else "b", "amount": 1.0} for i in range(6)])
    declare_source(server, kafka, topic, src)
    rows = server.query(f"SELECT user_id, count(*) AS n FROM {src} GROUP BY user_id LIMIT 6")
    # Update mode: each input row emits its key's new count, in order per key.
    per_key = {}
    for user, n in rows:
        per_key.setdefault(user, []).append(n)
    assert per_key == {"a": [1, 2, 3], "b": [1, 2, 3]}, rows


def test_rows_arrive_while_the_query_runs_and_cancel_ends_it(server, kafka):
    topic, src = unique("live_stream_in"), unique("live_stream_src")
    kafka.create_topic(topic)
    declare_source(server, kafka, topic, src)
    before = slots_used(server)

    conn = psycopg.connect(host="127.0.0.1", port=server.port, user="t", dbname="t",
                           autocommit=True, prepare_threshold=None)
    got = []

    def run():
        with conn.cursor() as cur:
            # No LIMIT: runs until cancelled.
            cur.execute(f"SELECT id FROM {src}")
            got.extend(r[0] for r in cur.fetchall())

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 10
    while slots_used(server) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert slots_used(server) > before, "the live query did not start"
    kafka.produce(topic, [{"id": i, "user_id": "x", "amount": 1.0} for i in range(3)])
    time.sleep(1.0)
    conn.cancel()
    t.join(timeout=15)
    assert not t.is_alive(), "cancel did not end the live query"
    assert sorted(got) == [0, 1, 2]
    conn.close()
    deadline = time.monotonic() + 10
    while slots_used(server) != before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert slots_used(server) == before


def test_disconnect_ends_the_query(server, kafka):
    topic, src = unique("live_drop_in"), unique("live_drop_src")
    kafka.create_topic(topic)
    declare_source(server, kafka, topic, src)
    before = slots_used(server)
    conn = psycopg.connect(host="127.0.0.1", port=server.port, user="t", dbname="t", autocommit=True)
    conn.pgconn.send_query(f"SELECT id FROM {src}".encode())
    deadline = time.monotonic() + 10
    while slots_used(server) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert slots_used(server) > before
    conn.pgconn.finish()  # the client goes away mid-query
    deadline = time.monotonic() + 15
    while slots_used(server) != before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert slots_used(server) == before, "a dropped client left its live query running"


def test_describe_tells_the_columns_without_running_the_query(server, kafka):
    topic, src = unique("live_desc_in"), unique("live_desc_src")
    kafka.create_topic(topic)
    declare_source(server, kafka, topic, src)
    before = slots_used(server)
    with server.connect() as conn:
        pg = conn.pgconn
        res = pg.prepare(b"q", f"SELECT id, amount * 2 AS d FROM {src}".encode())
        assert res.error_message == b"", res.error_message
        desc = pg.describe_prepared(b"q")
        assert [desc.fname(i) for i in range(desc.nfields)] == [b"id", b"d"]
        assert [desc.ftype(i) for i in range(desc.nfields)] == [20, 701]  # int8, float8
        # Describing it started nothing.
        assert slots_used(server) == before
        desc = pg.prepare(b"s", b"SHOW FLOWS")
        desc = pg.describe_prepared(b"s")
        assert [desc.fname(i) for i in range(desc.nfields)] == [b"name", b"sink", b"state", b"slots", b"error"]


# -- live queries on a source read from the latest offsets share one consumer --

def live_taps(server, topic):
    """SHOW live_taps rows of TOPIC: (bootstrap, topics, live_queries, tasks, records)."""
    return [tuple(r) for r in server.query("SHOW live_taps") if r[1] == topic]


def wait_for(predicate, timeout=20, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} not reached within {timeout}s")


class LiveQuery(threading.Thread):
    """A live query on its own connection; its rows, or its error, once it ends."""

    def __init__(self, server, sql):
        super().__init__(daemon=True)
        self.conn = server.connect()
        self.sql = sql
        self.rows = None
        self.error = None

    def run(self):
        try:
            self.rows = self.conn.execute(self.sql).fetchall()
        except psycopg.Error as e:
            self.error = e

    def finish(self, timeout=30):
        self.join(timeout)
        alive = self.is_alive()
        if alive:
            self.conn.cancel()
            self.join(10)
        self.conn.close()
        assert not alive, f"{self.sql!r} did not end within {timeout}s"


def test_live_queries_on_a_latest_source_share_one_consumer(server, kafka):
    topic, src = unique("live_tap_in"), unique("live_tap_src")
    partitions = kafka.create_topic(topic)
    server.query(
        f"CREATE SOURCE {src} (id BIGINT, user_id STRING, amount DOUBLE) "
        f"WITH ({kafka.options()}, subscribe = '{topic}', format = 'json')")  # 'latest'
    kafka.produce(topic, [{"id": 1000 + i, "user_id": "old", "amount": 0.0} for i in range(5)])
    assert live_taps(server, topic) == []

    n = 12
    queries = [LiveQuery(server, f"SELECT id FROM {src} LIMIT {n}"),
               LiveQuery(server, f"SELECT id, amount * 2 AS d FROM {src} LIMIT {n}"),
               LiveQuery(server, f"SELECT id FROM {src} WHERE amount >= 0 LIMIT {n}")]
    for q in queries:
        q.start()
    # All three have subscribed once the one tap of the topic counts them.
    wait_for(lambda: any(t[2] == 3 for t in live_taps(server, topic)),
             what="three live queries on one tap")
    taps = live_taps(server, topic)
    assert len(taps) == 1, taps
    assert taps[0][3] == 3 * partitions, taps  # every source task of the three

    kafka.produce(topic, [{"id": i, "user_id": "new", "amount": float(i)} for i in range(n)])
    for q in queries:
        q.finish()
        assert q.error is None, q.error
        # Every row produced after the query started, none from before.
        assert sorted(r[0] for r in q.rows) == list(range(n)), q.rows
    # The last query to end closed the tap.
    wait_for(lambda: live_taps(server, topic) == [], what="the tap closing")


def test_live_query_from_the_earliest_offsets_reads_on_its_own(server, kafka):
    topic, src = unique("live_own_in"), unique("live_own_src")
    kafka.create_topic(topic)
    declare_source(server, kafka, topic, src)  # startingOffsets = 'earliest'
    kafka.produce(topic, [{"id": i, "user_id": "x", "amount": 1.0} for i in range(3)])
    before = slots_used(server)
    q = LiveQuery(server, f"SELECT id FROM {src} LIMIT 4")
    q.start()
    wait_for(lambda: slots_used(server) > before, what="the live query starting")
    assert live_taps(server, topic) == []
    kafka.produce(topic, [{"id": 3, "user_id": "x", "amount": 1.0}])
    q.finish()
    assert q.error is None, q.error
    assert sorted(r[0] for r in q.rows) == [0, 1, 2, 3]


def test_a_deleted_topic_ends_the_live_queries_on_its_tap(server, kafka):
    if kafka.name == "embedded":
        pytest.skip("the embedded broker cannot delete topics")
    from confluent_kafka.admin import AdminClient
    topic, src = unique("live_gone_in"), unique("live_gone_src")
    kafka.create_topic(topic)
    server.query(
        f"CREATE SOURCE {src} (id BIGINT, user_id STRING, amount DOUBLE) "
        f"WITH ({kafka.options()}, subscribe = '{topic}', format = 'json')")
    queries = [LiveQuery(server, f"SELECT id FROM {src}") for _ in range(2)]
    for q in queries:
        q.start()
    wait_for(lambda: any(t[2] == 2 for t in live_taps(server, topic)),
             what="two live queries on one tap")
    admin = AdminClient({"bootstrap.servers": kafka.bootstrap})
    admin.delete_topics([topic])[topic].result(30)
    for q in queries:
        q.finish(timeout=40)
        assert q.error is not None, "the live query outlived its topic"
        assert q.error.sqlstate == "42704", q.error
        assert f"topic '{topic}' does not exist" in str(q.error), q.error
    wait_for(lambda: live_taps(server, topic) == [], what="the tap closing")
