"""A bounded query over views held by different nodes of a cluster: each node
answers a join, a UNION ALL and a subquery of a view it holds and a view the
other node holds, reading the other view's rows from its holder (its columns
the query needs and the filters that read only it), and the result equals
DuckDB's over the rows each holder answers for its own view. SHOW
rtsql.view_epochs names each view with the epoch it was read at. A holder
that does not answer gives 55000 naming it within statement_timeout; the
result bound gives 54000. A session's settings that change an answer
(ansi_mode, the time zone, the result bound) go with each read, so every
node answers as the view's holder would in the same session.
"""

import datetime
import os
import signal
import time

import duckdb
import psycopg
import pytest

from cluster import SlowNode, run_again_on_40001, runner, start_kind  # noqa: F401
from conftest import unique, wait_for

WAIT_S = 90
KEYS = 12


def records():
    """Five records of each of KEYS keys, n from 1 to 23."""
    out = []
    for i in range(60):
        out.append({"k": f"k{i % KEYS:02d}", "n": (i * 7) % 23 + 1})
    return out


def two_views_on_two_nodes(start, broker, prefix, **node_args):
    """Nodes a and b of a new cluster, a source over records(), the view tot
    (a sum per key) and a view of the max per key (and the max's hour of
    1970-01-01 UTC, at) placed on the node that does
    not hold tot (views are placed by their name's slot: a few names are
    tried). Returns (nodes, {view: holder})."""
    uid = unique(prefix)
    broker.create_topic(f"{uid}_in")
    nodes = [start(uid, broker, n, **node_args) for n in ("a", "b")]
    run_again_on_40001(nodes[0], f"""
        CREATE SOURCE ev (k STRING, n BIGINT)
            WITH ({broker.options()}, subscribe = '{uid}_in', startingOffsets = 'earliest',
                  format = 'json')""")
    broker.produce(f"{uid}_in", records())
    run_again_on_40001(nodes[0], "CREATE MATERIALIZED VIEW tot WITH ('shuffle.partitions' = '2') AS "
                                 "SELECT k, count(*) AS c, sum(n) AS s FROM ev GROUP BY k")
    holders = {"tot": runner("tot", *nodes)}
    for i in range(12):
        name = f"mx{i}"
        run_again_on_40001(nodes[0], f"CREATE MATERIALIZED VIEW {name} WITH ('shuffle.partitions' = '2') AS "
                                     "SELECT k, max(n) AS m, min(n) AS lo, "
                                     "max(timestamp_seconds(n * 3600)) AS at FROM ev GROUP BY k")
        holder = runner(name, *nodes)
        if holder is not holders["tot"]:
            holders["mx"] = (name, holder)
            break
        # Its task slots are the queries' (each view's flow holds some).
        run_again_on_40001(nodes[0], f"DROP MATERIALIZED VIEW {name}")
    assert "mx" in holders, "no view name of twelve placed on the other node"
    return nodes, holders


def expected():
    """Each view's rows from records(): tot's (k, c, s), the max view's (k, m, lo)."""
    by_key = {}
    for r in records():
        by_key.setdefault(r["k"], []).append(r["n"])
    tot = [(k, len(ns), sum(ns)) for k, ns in sorted(by_key.items())]
    mx = [(k, max(ns), min(ns)) for k, ns in sorted(by_key.items())]
    return {"tot": tot, "mx": mx}


def own_rows(holder, view, cols, want):
    """The view's rows as its holder answers them, once they are WANT (every
    record counted)."""
    sql = f"SELECT {cols} FROM {view} ORDER BY k"
    wait_for(lambda: [tuple(r) for r in holder.query(sql)] == want, WAIT_S,
             f"every record in {view} on its holder")
    return holder.query(sql)


def holder_epoch(holder, view):
    """The epoch a read of VIEW on its holder sees now."""
    with holder.connect() as conn:
        conn.execute(f"SELECT count(*) FROM {view}").fetchall()
        return int(conn.execute("SHOW rtsql.view_epoch").fetchone()[0])


def read(node, sql):
    with node.connect() as conn:
        rows = conn.execute(sql).fetchall()
        epochs = conn.execute("SHOW rtsql.view_epochs").fetchall()
        epoch = conn.execute("SHOW rtsql.view_epoch").fetchone()[0]
    return rows, epochs, epoch


def test_a_query_over_views_on_two_nodes_equals_duckdb_on_every_node(broker, start_kind):
    nodes, holders = two_views_on_two_nodes(start_kind, broker, "rj_eq")
    mx, mx_holder = holders["mx"]
    want = expected()
    tot_rows = own_rows(holders["tot"], "tot", "k, c, s", want["tot"])
    mx_rows = own_rows(mx_holder, mx, "k, m, lo", want["mx"])
    duck = duckdb.connect()
    duck.execute("CREATE TABLE tot (k VARCHAR, c BIGINT, s BIGINT)")
    duck.execute("CREATE TABLE mx (k VARCHAR, m BIGINT, lo BIGINT)")
    duck.executemany("INSERT INTO tot VALUES (?, ?, ?)", tot_rows)
    duck.executemany("INSERT INTO mx VALUES (?, ?, ?)", mx_rows)
    queries = [
        # A join with filters on each view (sent to its holder) and one on both.
        "SELECT t.k, t.s, x.m FROM tot t JOIN {mx} x ON t.k = x.k "
        "WHERE t.s > 55 AND x.m >= 20 AND t.c + x.lo > 7 ORDER BY t.k",
        "SELECT k, s AS v FROM tot WHERE c > 4 UNION ALL SELECT k, m FROM {mx} ORDER BY k, v",
        "SELECT k, c FROM tot WHERE k IN (SELECT k FROM {mx} WHERE m > 20) ORDER BY k",
        # A filter on the side of an outer join that may be NULL stays here.
        "SELECT t.k, x.m FROM tot t LEFT JOIN {mx} x ON t.k = x.k AND x.m > 20 "
        "WHERE x.m IS NULL ORDER BY t.k",
        "SELECT count(*), sum(x.m) FROM tot t JOIN {mx} x ON t.k = x.k",
        "SELECT t.k, x.lo FROM tot AS t, {mx} AS x WHERE t.k = x.k AND x.lo = 1 ORDER BY 1",
    ]
    for sql in queries:
        want = duck.execute(sql.format(mx="mx")).fetchall()
        assert want, sql  # each query returns rows: a wrong one cannot pass by being empty
        for node in nodes:
            # Each holder's epoch before and after bounds the one the view
            # was read at (checkpoints go on meanwhile).
            before = {v: holder_epoch(h, v) for v, h in (("tot", holders["tot"]), (mx, mx_holder))}
            rows, epochs, epoch = read(node, sql.format(mx=mx))
            after = {v: holder_epoch(h, v) for v, h in (("tot", holders["tot"]), (mx, mx_holder))}
            assert [tuple(r) for r in rows] == [tuple(r) for r in want], (node.name, sql, rows, want)
            # Each view with the epoch it was read at, in the order read.
            assert sorted(e[0] for e in epochs) == sorted(["tot", mx]), (node.name, sql, epochs)
            for view, at in epochs:
                assert at is not None and before[view] <= int(at) <= after[view], \
                    (node.name, view, before, at, after)
            assert epoch == epochs[0][1], (epoch, epochs)


def test_a_holder_that_does_not_answer_gives_55000_and_the_bound_54000(broker, start_kind):
    nodes, holders = two_views_on_two_nodes(start_kind, broker, "rj_down", kind=SlowNode)
    mx, mx_holder = holders["mx"]
    want = expected()
    own_rows(holders["tot"], "tot", "k, c, s", want["tot"])
    own_rows(mx_holder, mx, "k, m, lo", want["mx"])
    asker = holders["tot"]
    sql = f"SELECT t.k, x.m FROM tot t JOIN {mx} x ON t.k = x.k ORDER BY t.k"
    assert len(asker.query(sql)) == KEYS
    # The result bound: more rows than rtsql.bounded_max_rows.
    with asker.connect() as conn:
        conn.execute("SET rtsql.bounded_max_rows = 5")
        with pytest.raises(psycopg.Error) as err:
            conn.execute(sql).fetchall()
    assert err.value.sqlstate == "54000", err.value
    # Silent: the query ends within its statement_timeout, naming the holder.
    os.kill(mx_holder.proc.pid, signal.SIGSTOP)
    try:
        with asker.connect() as conn:
            conn.execute("SET statement_timeout = 3000")
            started = time.monotonic()
            with pytest.raises(psycopg.Error) as err:
                conn.execute(sql).fetchall()
            took = time.monotonic() - started
        assert err.value.sqlstate == "55000", err.value
        assert f'node "{mx_holder.name}", which cannot be reached' in str(err.value), err.value
        assert took < 30, took
    finally:
        os.kill(mx_holder.proc.pid, signal.SIGCONT)
    # Down: 55000 at once.
    mx_holder.kill()
    with asker.connect() as conn:
        conn.execute("SET statement_timeout = 3000")
        with pytest.raises(psycopg.Error) as err:
            conn.execute(sql).fetchall()
    assert err.value.sqlstate == "55000", err.value
    assert f'node "{mx_holder.name}"' in str(err.value), err.value


def outcome(node, sql, settings=()):
    """What NODE answers to SQL after the SETs of SETTINGS: ("rows", rows) or
    ("error", sqlstate)."""
    with node.connect() as conn:
        for name, value in settings:
            conn.execute(f"SET {name} = '{value}'")
        try:
            return "rows", [tuple(r) for r in conn.execute(sql).fetchall()]
        except psycopg.Error as e:
            return "error", e.sqlstate


def test_a_session_setting_that_changes_an_answer_goes_with_the_read(broker, start_kind):
    """ansi_mode off, a time zone, backslashes kept as written and the result
    bound: each node answers a read of a view held elsewhere, whole or as
    part of a join, as the view's holder answers it in the same session; a
    part of a join is not bounded by the result's bound."""
    nodes, holders = two_views_on_two_nodes(start_kind, broker, "rj_set")
    mx, mx_holder = holders["mx"]
    other = holders["tot"]  # holds tot, not mx
    want = expected()
    own_rows(holders["tot"], "tot", "k, c, s", want["tot"])
    own_rows(mx_holder, mx, "k, m, lo", want["mx"])
    ansi_off = (("ansi_mode", "off"),)
    # A division by zero: NULL with ANSI mode off, 22012 with it on; whole
    # (sent to the holder) and as a filter that reads only the view held
    # elsewhere (sent with its read) or here (run here).
    whole = f"SELECT k, m / 0 AS d FROM {mx} ORDER BY k"
    joined = (f"SELECT t.k, x.m FROM tot t JOIN {mx} x ON t.k = x.k "
              f"WHERE x.m / 0 IS NULL AND t.s / 0 IS NULL ORDER BY t.k")
    assert outcome(mx_holder, whole, ansi_off) == \
        ("rows", [(k, None) for k, _, _ in want["mx"]])
    assert outcome(other, whole, ansi_off) == outcome(mx_holder, whole, ansi_off)
    assert outcome(other, whole) == outcome(mx_holder, whole) == ("error", "22012")
    for node in nodes:
        assert outcome(node, joined, ansi_off) == \
            ("rows", [(k, m) for k, m, _ in want["mx"]]), node.name
        assert outcome(node, joined) == ("error", "22012"), node.name
    # A filter on the wall clock in a zone other than UTC, evaluated by the
    # holder in that zone; the timestamps come back as the instants they are.
    zone = "Asia/Kolkata"  # +05:30 all year since 1945
    hour = (20 + 5) % 24   # 20:00 UTC, the max of two keys, is 01:30 there
    at = {k: datetime.datetime(1970, 1, 1, m, tzinfo=datetime.timezone.utc)
          for k, m, _ in want["mx"]}
    wall = {k: t + datetime.timedelta(hours=5, minutes=30) for k, t in at.items()}
    keys = sorted(k for k, t in wall.items() if t.hour == hour)
    assert keys and keys != sorted(k for k, t in at.items() if t.hour == hour)
    in_zone = (("timezone", zone),)
    filtered = (f"SELECT t.k, x.at FROM tot t JOIN {mx} x ON t.k = x.k "
                f"WHERE hour(x.at) = {hour} ORDER BY t.k")
    for node in nodes:
        assert outcome(node, filtered, in_zone) == ("rows", [(k, at[k]) for k in keys]), node.name
    whole_at = f"SELECT k, at FROM {mx} WHERE hour(at) = {hour} ORDER BY k"
    assert outcome(other, whole_at, in_zone) == ("rows", [(k, at[k]) for k in keys])
    # Backslashes kept as written: the literal 'a', backslash, 'n', 'b' is
    # four characters then, three with the escape read as a newline. The
    # text the holder gets is already in the form every session reads alike,
    # so the setting does not go with it (sent too, the backslash would be
    # doubled twice: five).
    text = f"SELECT k, length('a\\nb') AS n FROM {mx} WHERE k = 'k00'"
    assert outcome(other, text) == ("rows", [("k00", 3)])
    kept = (("rtsql.escaped_string_literals", "on"),)
    assert outcome(mx_holder, text, kept) == ("rows", [("k00", 4)])
    assert outcome(other, text, kept) == ("rows", [("k00", 4)])
    # The result bound of a whole read is the client's session's.
    bounded = f"SELECT k, m FROM {mx} ORDER BY m DESC, k"
    bound = (("rtsql.bounded_max_rows", "5"),)
    assert outcome(mx_holder, bounded, bound) == ("error", "54000")
    assert outcome(other, bounded, bound) == ("error", "54000")
    # The bound is the result's, not the rows read of a view: a query over
    # twelve rows of each view (read from its holder with no row bound, a
    # filter sent with it) answers its one row on every node, as a query
    # over two views held here would.
    counted = (f"SELECT count(*) AS n, sum(x.m) AS m FROM tot t JOIN {mx} x ON t.k = x.k "
               f"WHERE x.m > 0 AND t.c > 0")
    want_m = sum(m for _, m, _ in want["mx"])
    for node in nodes:
        assert outcome(node, counted, bound) == ("rows", [(KEYS, want_m)]), node.name
