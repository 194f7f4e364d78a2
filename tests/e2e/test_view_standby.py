"""Reads of a materialized view from a standby copy: in a cluster of two
nodes, a view with 'standby.replicas' = '1' is held by one node and the
other keeps a standby copy of its state. With `SET rtsql.view_read =
'standby'` the other node answers lookups, scans, ranges, ORDER BY, GROUP BY
and joins from its copy, as of the copy's last applied checkpoint, each
answer saying so in a NOTICE with the epoch that SHOW rtsql.view_epoch
gives; the rows equal DuckDB's over the records. The latest state is never
read from a copy (0A000). With the holder stopped (SIGSTOP), the other node
answers from its copy by default where it answered 55000 before, and still
answers 55000 when the session asked for the holder only.
"""

import os
import re
import signal
import time

import duckdb
import psycopg
import pytest

from cluster import SlowNode, run_again_on_40001, runner, start_kind  # noqa: F401
from conftest import unique, wait_for

WAIT_S = 90
KEYS = 8
FROM_STANDBY = re.compile(r'materialized view "per_k": read from the standby copy on this node, '
                          r"as of epoch (\d+)")


def batch(first, count):
    """COUNT records from record FIRST on: keys k00.. k07 again and again."""
    return [{"k": f"k{i % KEYS:02d}", "n": (i * 5) % 17 + 1} for i in range(first, first + count)]


def standby_epoch(node):
    """The epoch NODE's standby copy of per_k holds, as EXPLAIN FLOW says
    (None: none kept, or none applied yet)."""
    text = "\n".join(r[0] for r in node.query("EXPLAIN FLOW per_k"))
    m = re.search(rf"{re.escape(node.name)} \(here, at epoch (\d+)\)", text)
    return int(m.group(1)) if m else None


def settled(nodes):
    """The node that runs per_k when the other keeps a standby copy of it
    that has applied a checkpoint, and per_k stays put meanwhile (the group
    may still be giving the second node its slots); None otherwise."""
    holder = runner("per_k", *nodes)
    other = next(n for n in nodes if n is not holder)
    if standby_epoch(other) is None:
        return None
    time.sleep(2)
    return holder if runner("per_k", *nodes) is holder and standby_epoch(other) else None


def view_with_a_standby(start, broker, prefix):
    """Nodes a and b (flows stay put for a minute when a node falls silent),
    the source ev with a first batch, the view per_k with one standby copy
    and the static table labels; a second batch once the standby node has
    applied a checkpoint, so that it applies updates too. Returns (holder,
    standby node, every record, the topic)."""
    uid = unique(prefix)
    broker.create_topic(f"{uid}_in")
    nodes = [start(uid, broker, n, kind=SlowNode) for n in ("a", "b")]
    run_again_on_40001(nodes[0], f"""
        CREATE SOURCE ev (k STRING, n BIGINT)
            WITH ({broker.options()}, subscribe = '{uid}_in', startingOffsets = 'earliest',
                  format = 'json')""")
    run_again_on_40001(nodes[0], "CREATE TABLE labels (k STRING, label STRING)")
    run_again_on_40001(nodes[0], "INSERT INTO labels VALUES ('k01', 'one'), ('k02', 'two'), "
                                 "('k05', 'five')")
    first = batch(0, 20)
    broker.produce(f"{uid}_in", first)
    run_again_on_40001(nodes[0], "CREATE MATERIALIZED VIEW per_k WITH ('standby.replicas' = '1', "
                                 "'shuffle.partitions' = '2') AS "
                                 "SELECT k, count(*) AS c, sum(n) AS s FROM ev GROUP BY k")
    holder = wait_for(lambda: settled(nodes), WAIT_S * 2,
                      "per_k runs on one node and the other keeps a standby copy of it")
    other = next(n for n in nodes if n is not holder)
    second = batch(20, 37)
    broker.produce(f"{uid}_in", second)
    return holder, other, first + second


def duck_of(records):
    """DuckDB with the view's rows (per_k) and the static table (labels)."""
    duck = duckdb.connect()
    duck.execute("CREATE TABLE ev (k VARCHAR, n BIGINT)")
    duck.executemany("INSERT INTO ev VALUES (?, ?)", [(r["k"], r["n"]) for r in records])
    duck.execute("CREATE TABLE per_k AS SELECT k, count(*) AS c, sum(n) AS s FROM ev GROUP BY k")
    duck.execute("CREATE TABLE labels (k VARCHAR, label VARCHAR)")
    duck.execute("INSERT INTO labels VALUES ('k01', 'one'), ('k02', 'two'), ('k05', 'five')")
    return duck


QUERIES = [
    "SELECT * FROM per_k ORDER BY k",                                   # a scan
    "SELECT c, s FROM per_k WHERE k = 'k03'",                           # a lookup by key
    "SELECT c, s FROM per_k WHERE k = 'nope'",                          # a lookup of no row
    "SELECT k, s FROM per_k WHERE k >= 'k02' AND k < 'k06' ORDER BY k",  # a range
    "SELECT k, s FROM per_k ORDER BY s DESC, k LIMIT 3",                # ORDER BY and LIMIT
    "SELECT c, count(*) AS n, sum(s) AS t FROM per_k GROUP BY c ORDER BY c",  # GROUP BY
    "SELECT a.k, a.s + b.c AS x FROM per_k a JOIN per_k b ON a.k = b.k ORDER BY a.k",  # a self-join
    "SELECT v.k, l.label, v.s FROM per_k v JOIN labels l ON v.k = l.k ORDER BY v.k",  # a static table
]


def read(node, sql, settings=(), params=None, prepare=None):
    """Rows, NOTICEs and the epoch read, on one connection with SETTINGS."""
    notices = []
    with node.connect() as conn:
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        for s in settings:
            conn.execute(s)
        rows = conn.execute(sql, params, prepare=prepare).fetchall()
        epoch = conn.execute("SHOW rtsql.view_epoch").fetchone()[0]
    return [tuple(r) for r in rows], notices, epoch


def standby_epoch_of(notices):
    """The epoch the NOTICE of a read from the standby copy names (None: no such NOTICE)."""
    for n in notices:
        m = FROM_STANDBY.search(n)
        if m:
            return int(m.group(1))
    return None


def holder_epoch(holder):
    with holder.connect() as conn:
        conn.execute("SELECT count(*) FROM per_k").fetchall()
        return int(conn.execute("SHOW rtsql.view_epoch").fetchone()[0])


STANDBY = ("SET rtsql.view_read = 'standby'",)


def copy_of_every_record(start, broker, prefix):
    """view_with_a_standby(), once the standby copy holds every record (it is
    a checkpoint or so behind the holder). Returns (holder, standby node,
    DuckDB over the records, the view's rows)."""
    holder, other, records = view_with_a_standby(start, broker, prefix)
    duck = duck_of(records)
    want_all = duck.execute(QUERIES[0]).fetchall()
    wait_for(lambda: read(other, QUERIES[0], STANDBY)[0] == want_all, WAIT_S,
             f"{other.name}'s standby copy holds every record")
    return holder, other, duck, want_all


def test_a_standby_node_answers_from_its_copy_at_a_committed_epoch_as_duckdb(broker, start_kind):
    holder, other, duck, want_all = copy_of_every_record(start_kind, broker, "vsb_read")
    for sql in QUERIES:
        rows, notices, epoch = read(other, sql, STANDBY)
        assert rows == duck.execute(sql).fetchall(), (sql, rows)
        # The answer says it came from the standby copy, and at which epoch.
        at = standby_epoch_of(notices)
        assert at is not None, (sql, notices)
        assert epoch is not None and int(epoch) == at, (sql, epoch, notices)
        assert at <= holder_epoch(holder), (sql, at)
    # Prepared, again and again.
    with other.connect() as conn:
        conn.execute(STANDBY[0])
        for k in ("k01", "k07", "zz", "k01"):
            got = conn.execute("SELECT c, s FROM per_k WHERE k = %s", (k,), prepare=True).fetchall()
            want = duck.execute("SELECT c, s FROM per_k WHERE k = ?", [k]).fetchall()
            assert [tuple(r) for r in got] == want, k
        assert conn.execute("SHOW rtsql.view_epoch").fetchone()[0] is not None
        # The latest state is the holder's only: refused from a copy.
        conn.execute("SET rtsql.view_snapshot = 'latest'")
        with pytest.raises(psycopg.Error) as err:
            conn.execute("SELECT * FROM per_k").fetchall()
        assert err.value.sqlstate == "0A000", err.value
        assert "committed" in (err.value.diag.message_hint or ""), err.value.diag
    # The holder reads its own view whatever the setting, and says nothing of copies.
    rows, notices, _ = read(holder, QUERIES[0], STANDBY)
    assert rows == want_all and standby_epoch_of(notices) is None, notices
    # A value the setting does not take.
    with pytest.raises(psycopg.Error) as err:
        other.query("SET rtsql.view_read = 'nearest'")
    assert err.value.sqlstate == "22023", err.value


def test_a_silent_holder_leaves_the_standby_node_answering_from_its_copy(broker, start_kind):
    holder, other, duck, want_all = copy_of_every_record(start_kind, broker, "vsb_down")
    # Read from the holder while it answers (no NOTICE of a copy).
    rows, notices, _ = read(other, QUERIES[0])
    assert rows == want_all and standby_epoch_of(notices) is None, notices

    os.kill(holder.proc.pid, signal.SIGSTOP)
    # The holder only, as before: 55000 naming it.
    with pytest.raises(psycopg.Error) as err:
        read(other, QUERIES[1], ("SET rtsql.view_read = 'holder'", "SET statement_timeout = 3000"))
    assert err.value.sqlstate == "55000", err.value
    assert f'node "{holder.name}", which cannot be reached' in str(err.value)
    # By default the copy answers once the holder cannot (its connection is
    # given 10 s), saying both. The reads right after the first go to the
    # copy without waiting on the holder again, saying why.
    took = []
    for sql in (QUERIES[0], QUERIES[1], QUERIES[5], QUERIES[7]):
        started = time.monotonic()
        rows, notices, epoch = read(other, sql)
        took.append(time.monotonic() - started)
        assert rows == duck.execute(sql).fetchall(), (sql, rows)
        assert any("cannot be reached" in n for n in notices), (sql, notices)
        at = standby_epoch_of(notices)
        assert at is not None and epoch is not None and int(epoch) == at, (sql, epoch, notices)
        assert took[-1] < 40, (sql, took)
        if len(took) == 2:
            assert any("the standby copy answers without asking" in n for n in notices), notices
            assert took[1] < took[0] / 2, took
    # A prepared lookup too.
    with other.connect() as conn:
        got = conn.execute("SELECT c, s FROM per_k WHERE k = %s", ("k02",), prepare=True).fetchall()
        assert [tuple(r) for r in got] == duck.execute(QUERIES[1].replace("k03", "k02")).fetchall()
    os.kill(holder.proc.pid, signal.SIGCONT)
