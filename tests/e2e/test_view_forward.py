"""Reads of a materialized view on any node of a cluster: a node that does
not hold the view sends the read to the node that does (over the PostgreSQL
protocol, to the address that node advertised) and relays its rows, column
types and epoch. A holder that is down or does not answer gives 55000
naming it within the client's statement_timeout; a user the holder does not
know is refused there, whichever node the user asked; prepared statements
take the same path.
"""

import os
import signal
import threading
import time

import psycopg
import pytest

from cluster import Node, SlowNode, run_again_on_40001, runner, start_kind, start_node  # noqa: F401
from conftest import unique, wait_for

WAIT_S = 90
PASSWORD = "s3cret pass"


def make_view(start, broker, prefix, names, **node_args):
    """Nodes NAMES of a new cluster, a source over a new topic with three
    records, and the view per_k over it, converged on its holder.
    Returns (nodes, holder, the others)."""
    uid = unique(prefix)
    broker.create_topic(f"{uid}_in")
    nodes = [start(uid, broker, n, **node_args) for n in names]
    run_again_on_40001(nodes[0], f"""
        CREATE SOURCE ev (k STRING, n BIGINT)
            WITH ({broker.options()}, subscribe = '{uid}_in', startingOffsets = 'earliest',
                  format = 'json')""")
    run_again_on_40001(nodes[0], "CREATE MATERIALIZED VIEW per_k AS "
                                 "SELECT k, count(*) AS c, sum(n) AS s FROM ev GROUP BY k")
    broker.produce(f"{uid}_in", [{"k": "x", "n": 1}, {"k": "y", "n": 2}, {"k": "x", "n": 3}])
    holder = runner("per_k", *nodes)
    wait_for(lambda: holder.query("SELECT * FROM per_k ORDER BY k") == [("x", 2, 4), ("y", 1, 2)],
             WAIT_S, "the view's rows on its holder")
    return nodes, holder, [n for n in nodes if n is not holder]


class SecureNode(Node):
    """A node with a users file (the superuser rtsql and alice) and the
    cluster's secret."""

    def __init__(self, tmp, cluster, broker, name, secret):
        super().__init__(tmp, cluster, broker, name)
        self.users = self.tmp / "users"
        self.users.write_text(f"rtsql:{PASSWORD}\nalice:{PASSWORD}\n")
        self.secret = self.tmp / "secret"
        self.secret.write_text(secret + "\n")
        os.chmod(self.secret, 0o600)

    def extra_args(self):
        return super().extra_args() + ["--users-file", str(self.users),
                                       "--cluster-secret-file", str(self.secret)]

    def connect(self, connect_timeout=10, user="rtsql", password=PASSWORD):
        return psycopg.connect(host=self.host, port=self.port, user=user, password=password,
                               dbname="rtsql", connect_timeout=connect_timeout, autocommit=True)


def read(node, sql, params=None, prepare=None):
    """Rows, column type codes and the epoch read, on one connection."""
    with node.connect() as conn:
        cur = conn.execute(sql, params, prepare=prepare)
        rows = cur.fetchall()
        types = [d.type_code for d in cur.description]
        epoch = conn.execute("SHOW rtsql.view_epoch").fetchone()[0]
    return rows, types, epoch


def test_every_node_answers_a_read_of_a_view_with_the_holders_rows_and_epoch(
        broker, start_node):
    nodes, holder, others = make_view(start_node, broker, "fw_all", ["a", "b", "c"])
    assert len(others) == 2
    for sql in ("SELECT * FROM per_k ORDER BY k",       # a scan
                "SELECT c, s FROM per_k WHERE k = 'x'",  # a lookup by key
                "SELECT k, s * 2 AS d FROM per_k WHERE s > 1 ORDER BY d DESC"):  # a bounded query
        for other in others:
            # The holder's epoch before and after bounds the one the other
            # node relays (checkpoints go on meanwhile).
            rows0, types0, before = read(holder, sql)
            rows, types, epoch = read(other, sql)
            _, _, after = read(holder, sql)
            assert rows == rows0 and types == types0, (other.name, sql, rows, rows0)
            assert epoch is not None and int(before) <= int(epoch) <= int(after), \
                (other.name, before, epoch, after)
    # Prepared statements take the same path, again and again.
    for other in others:
        with other.connect() as conn:
            for k, want in (("x", [(2, 4)]), ("y", [(1, 2)]), ("z", []), ("x", [(2, 4)])):
                cur = conn.execute("SELECT c, s FROM per_k WHERE k = %s", (k,), prepare=True)
                assert cur.fetchall() == want, (other.name, k)
            assert conn.execute("SHOW rtsql.view_epoch").fetchone()[0] is not None
            # The session's view setting travels with the read.
            conn.execute("SET rtsql.view_snapshot = 'latest'")
            assert conn.execute("SELECT s FROM per_k WHERE k = 'y'").fetchall() == [(2,)]
            assert conn.execute("SHOW rtsql.view_epoch").fetchone()[0] == "latest"
        # An error on the holder comes back as the holder said it, with its
        # position in the client's text.
        with pytest.raises(psycopg.Error) as err:
            other.query("SELECT nope FROM per_k")
        assert err.value.sqlstate == "42703", err.value
        assert err.value.diag.statement_position == "8", err.value.diag.statement_position


def test_a_holder_down_or_silent_answers_55000_naming_it_within_the_timeout(
        broker, start_kind):
    nodes, holder, others = make_view(start_kind, broker, "fw_down", ["a", "b"], kind=SlowNode)
    other = others[0]
    assert read(other, "SELECT * FROM per_k ORDER BY k")[0] == [("x", 2, 4), ("y", 1, 2)]
    # Silent: the connection is not answered; the client's timeout bounds it.
    os.kill(holder.proc.pid, signal.SIGSTOP)
    with other.connect() as conn:
        conn.execute("SET statement_timeout = 3000")
        started = time.monotonic()
        with pytest.raises(psycopg.Error) as err:
            conn.execute("SELECT * FROM per_k WHERE k = 'x'").fetchall()
        took = time.monotonic() - started
    assert err.value.sqlstate == "55000", err.value
    assert f'node "{holder.name}", which cannot be reached' in str(err.value)
    assert "no connection" in (err.value.diag.message_detail or ""), err.value.diag
    assert took < 30, took
    # A cancel of the client's statement ends the forwarded read at once (the
    # connection to the silent holder would otherwise wait for its 10 s bound
    # and answer 55000).
    with other.connect() as conn:
        failure = []

        def run():
            try:
                conn.execute("SELECT * FROM per_k WHERE k = 'y'").fetchall()
            except psycopg.Error as e:
                failure.append(e)
        worker = threading.Thread(target=run)
        worker.start()
        # A cancel that reaches the server before the statement does is lost:
        # cancel again until the statement ends (bounded), never trusting one
        # pause to be long enough on a loaded machine.
        for _ in range(120):
            conn.cancel()
            worker.join(timeout=0.5)
            if not worker.is_alive():
                break
        assert not worker.is_alive()
    assert failure and failure[0].sqlstate == "57014", failure
    os.kill(holder.proc.pid, signal.SIGCONT)
    # Down: refused at once, naming the holder.
    holder.kill()
    with other.connect() as conn:
        conn.execute("SET statement_timeout = 3000")
        with pytest.raises(psycopg.Error) as err:
            conn.execute("SELECT * FROM per_k WHERE k = 'x'").fetchall()
    assert err.value.sqlstate == "55000", err.value
    assert f'node "{holder.name}"' in str(err.value)


def test_a_user_the_holder_does_not_know_is_refused_on_every_node(broker, start_kind):
    nodes, holder, others = make_view(start_kind, broker, "fw_users", ["a", "b"],
                                      kind=SecureNode, secret="cluster secret 1")
    other = others[0]
    # alice exists on both: the read is hers on the holder.
    with other.connect(user="alice") as conn:
        assert conn.execute("SELECT * FROM per_k ORDER BY k").fetchall() == \
            [("x", 2, 4), ("y", 1, 2)]
    # mallory exists only on the node she asks: the holder refuses her.
    other.query(f"CREATE USER mallory WITH PASSWORD '{PASSWORD}'")
    with other.connect(user="mallory") as conn:
        with pytest.raises(psycopg.Error) as err:
            conn.execute("SELECT * FROM per_k WHERE k = 'x'").fetchall()
    assert err.value.sqlstate == "28000", err.value
    assert f'node "{holder.name}"' in str(err.value)
    # Nor does a client that names the forwarding option itself pass for a node.
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(host=holder.host, port=holder.port, user="alice", password="wrong",
                        dbname="rtsql", options="-c rtsql.forwarded_by=b", connect_timeout=10)
    with holder.connect(user="alice") as conn:  # her own password still works there
        assert conn.execute("SELECT count(*) FROM per_k").fetchone() == (2,)


def test_a_read_on_another_node_answers_the_asking_sessions_functions_and_positions(
        broker, start_node):
    """A query that calls a function of the session (pg_backend_pid(), now(),
    current_setting()) answers the asking session's values, not the
    holder's; an error after a literal whose backslashes are kept as written
    points where the client wrote it."""
    nodes, holder, others = make_view(start_node, broker, "fw_sess", ["a", "b"])
    other = others[0]
    with other.connect() as conn:
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        # shuffle.partitions stays on the asking node (it changes no answer):
        # the holder's session would say its default, 8.
        conn.execute("SET shuffle.partitions = 3")
        before = conn.execute("SELECT now()").fetchone()[0]
        rows = conn.execute(
            "SELECT k, s, pg_backend_pid() AS p, current_setting('shuffle.partitions') AS sp, "
            "now() AS t, current_user AS u FROM per_k ORDER BY k").fetchall()
        after = conn.execute("SELECT now()").fetchone()[0]
        epoch = conn.execute("SHOW rtsql.view_epoch").fetchone()[0]
        assert [(k, s) for k, s, *_ in rows] == [("x", 4), ("y", 2)], rows
        for _, _, p, sp, t, u in rows:
            assert (p, sp, u) == (pid, "3", "rtsql"), rows
            assert before <= t <= after, (before, t, after)
        assert epoch is not None
        # In a filter too: the rows this session's values select.
        assert conn.execute("SELECT k FROM per_k WHERE current_setting('shuffle.partitions') = '3' "
                            "AND k = 'y'").fetchall() == [("y",)]
        assert conn.execute(f"SELECT k FROM per_k WHERE pg_backend_pid() = {pid} "
                            "ORDER BY k").fetchall() == [("x",), ("y",)]
        # A read without them is still sent whole: the holder's epoch, its rows.
        assert conn.execute("SELECT c, s FROM per_k WHERE k = 'x'").fetchall() == [(2, 4)]
    # Backslashes kept as written are doubled in the text sent to the holder;
    # the position of its error is moved back into the client's text (é is
    # two bytes and one character).
    for sql in ("SELECT k, 'a\\b\\c' AS t, nope FROM per_k",
                "SELECT k, 'é\\\\x' AS t, upper('\\'), nope FROM per_k WHERE k = 'x'"):
        with other.connect() as conn:
            conn.execute("SET rtsql.escaped_string_literals = on")
            with pytest.raises(psycopg.Error) as err:
                conn.execute(sql).fetchall()
        assert err.value.sqlstate == "42703", err.value
        assert err.value.diag.statement_position == str(sql.index("nope") + 1), \
            (sql, err.value.diag.statement_position)
