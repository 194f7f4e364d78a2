"""A Python function that never returns cannot hold rtsqld: a statement stuck
in the `re` matcher's backtracking ends on statement_timeout and on a cancel
request, and the next Python call runs; a flow stuck in one stops on STOP
FLOW while other statements' DDL goes on; --python-call-timeout fails a flow
whose call runs past it; a function cannot take SIGTERM away from rtsqld; and
a call in C code that never returns (which nothing can interrupt) holds
neither the DDL lock nor the server's stop past --shutdown-timeout."""

import contextlib
import threading
import time

import psycopg
import pytest

from conftest import Kafka, Server, unique, wait_for

# Generous: CI machines are loaded. Each bound is far above what an interrupt
# takes (a fraction of a second; 10 s of grace for a flow's final epoch) and
# far below "for ever", which is what these calls take without one.
BOUND_S = 60

# Backtracks for ever (2^64 steps) on 64 'a' and a 'b'.
BACKTRACKS_BODY = (
    "import re\n"
    "    return 1 if re.match(r'(a+)+$', s) else 0")
BAD_INPUT = "a" * 64 + "b"

# Loops in C, never back in the interpreter and never looking at signals.
C_LOOP_BODY = (
    "import collections, itertools\n"
    "    collections.deque(itertools.count(), maxlen=0)\n"
    "    return 1")


class PythonServer(Server):
    """An rtsqld with extra flags (the call time limit, the shutdown bound)."""

    def __init__(self, tmp, *args):
        super().__init__(tmp)
        self.args = list(args)

    def extra_args(self):
        return self.args


@contextlib.contextmanager
def session(server):
    """A connection, closed at the end unless the test failed: a statement of
    it may then still wait on another thread, and closing would wait too."""
    conn = server.connect()
    yield conn
    conn.close()


def create_function(conn, name, body):
    conn.execute(f"CREATE FUNCTION {name}(s STRING) RETURNS BIGINT LANGUAGE PYTHON AS $$\n"
                 f"    {body}\n$$")


def in_thread(fn):
    """Runs FN on a daemon thread; returns (thread, result dict)."""
    result = {}

    def run():
        try:
            result["value"] = fn()
        except Exception as e:  # noqa: BLE001 - the test looks at it
            result["error"] = e
        result["done"] = time.monotonic()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, result


def bounded(fn, what):
    """FN's result; fails when it has not returned within BOUND_S (a statement
    waiting for a lock another one holds)."""
    t, result = in_thread(fn)
    t.join(BOUND_S)
    assert not t.is_alive(), f"{what} did not return within {BOUND_S} s"
    if "error" in result:
        raise result["error"]
    return result.get("value")


def flow_status(server, flow):
    for row in server.query("SHOW FLOWS"):
        if row[0] == flow:
            return row[2], row[4] or ""
    return None, ""


def stuck_flow(server, conn, fn, body):
    """A flow whose one record makes FN (BODY) run for ever; returns its name
    once the record is in the function."""
    topic, src, snk, out, flow = (unique("py_in"), unique("py_src"), unique("py_snk"),
                                  unique("py_out"), unique("py_flow"))
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    create_function(conn, fn, body)
    conn.execute(f"CREATE SOURCE {src} (s STRING) WITH ({kafka.options()}, "
                 f"subscribe = '{topic}', startingOffsets = 'earliest', format = 'json')")
    conn.execute(f"CREATE SINK {snk} WITH ({kafka.options()}, topic = '{out}', format = 'json')")
    kafka.produce(topic, [{"s": BAD_INPUT}])
    conn.execute(f"CREATE FLOW {flow} INTO {snk} AS SELECT {fn}(s) AS n FROM {src}")
    # The record is in: the flow's progress counts it as read.
    progress = server.wait_progress(flow, lambda p: (p.get("numInputRows") or 0) >= 1,
                                    timeout=BOUND_S)
    assert (progress.get("numInputRows") or 0) >= 1, progress
    return flow


@pytest.fixture
def server(tmp_path):
    s = PythonServer(tmp_path)
    s.start()
    yield s
    code = s.stop(timeout=BOUND_S)
    assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{s.log_tail()}"


def test_statement_timeout_ends_a_backtracking_python_call(server):
    with session(server) as conn:
        create_function(conn, "backtracks", BACKTRACKS_BODY)
        create_function(conn, "echo_len", "return len(s)")
        conn.execute("SET statement_timeout = '1s'")
        t, result = in_thread(
            lambda: conn.execute(f"SELECT backtracks('{BAD_INPUT}')").fetchall())
        t.join(BOUND_S)
        assert not t.is_alive(), "statement_timeout did not end the Python call"
        err = result.get("error")
        assert isinstance(err, psycopg.Error), result
        assert err.diag.sqlstate == "57014"
        assert err.diag.message_primary == "canceling statement due to statement timeout"
        # The interpreter is free: another Python call answers, on another
        # connection too.
        assert conn.execute("SELECT echo_len('abc')").fetchone() == (3,)
    assert server.query("SELECT echo_len('abcd')") == [(4,)]


def test_statement_timeout_ends_a_live_query_stuck_in_python(server):
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    topic, src = unique("live_in"), unique("live_src")
    kafka.produce(topic, [{"s": BAD_INPUT}])
    with session(server) as conn:
        create_function(conn, "backtracks", BACKTRACKS_BODY)
        create_function(conn, "echo_len", "return len(s)")
        conn.execute(f"CREATE SOURCE {src} (s STRING) WITH ({kafka.options()}, "
                     f"subscribe = '{topic}', startingOffsets = 'earliest', format = 'json')")
        conn.execute("SET statement_timeout = '2s'")
        t, result = in_thread(lambda: conn.execute(f"SELECT backtracks(s) FROM {src}").fetchall())
        t.join(BOUND_S)
        assert not t.is_alive(), "statement_timeout did not end the live query"
        err = result.get("error")
        assert isinstance(err, psycopg.Error), result
        assert err.diag.sqlstate == "57014"
        assert conn.execute("SELECT echo_len('abc')").fetchone() == (3,)


def test_cancel_request_ends_a_backtracking_python_call(server):
    started = server.tmp / "call_started"
    with session(server) as setup:
        # The call says when it has begun, so that the cancel comes while it
        # runs (one that comes before the statement starts ends it too).
        create_function(setup, "backtracks_marked",
                        "import pathlib, re\n"
                        f"    pathlib.Path({str(started)!r}).touch()\n"
                        "    return 1 if re.match(r'(a+)+$', s) else 0")
        create_function(setup, "echo_len", "return len(s)")
    conn = server.connect()
    t, result = in_thread(
        lambda: conn.execute(f"SELECT backtracks_marked('{BAD_INPUT}')").fetchall())
    wait_for(started.exists, BOUND_S, "the Python call running")
    # Cancel until the statement has ended.
    deadline = time.monotonic() + BOUND_S
    while t.is_alive() and time.monotonic() < deadline:
        conn.cancel()
        t.join(0.5)
    assert not t.is_alive(), "the cancel request did not end the Python call"
    err = result.get("error")
    assert isinstance(err, psycopg.Error) and err.diag.sqlstate == "57014", result
    assert conn.execute("SELECT echo_len('abcde')").fetchone() == (5,)
    conn.close()


def test_stop_flow_ends_a_flow_stuck_in_python_without_holding_ddl(server):
    with session(server) as conn:
        flow = stuck_flow(server, conn, "backtracks", BACKTRACKS_BODY)
        stopper = server.connect()
        t, result = in_thread(lambda: stopper.execute(f"STOP FLOW {flow}"))
        # Meanwhile another session's DDL runs.
        with session(server) as other:
            bounded(lambda: other.execute(f"CREATE FUNCTION {unique('meanwhile')}(a BIGINT) "
                                          f"RETURNS BIGINT LANGUAGE SQL AS a + 1"),
                    "CREATE FUNCTION while STOP FLOW waits")
        t.join(BOUND_S)
        assert not t.is_alive(), "STOP FLOW did not end the flow stuck in Python"
        assert "error" not in result, result
        assert flow_status(server, flow)[0] == "stopped"
        stopper.close()
        create_function(conn, "echo_len", "return len(s)")
        assert conn.execute("SELECT echo_len('ab')").fetchone() == (2,)


def test_python_call_timeout_fails_a_flow_stuck_in_the_re_matcher(tmp_path):
    s = PythonServer(tmp_path, "--python-call-timeout", "2")
    s.start()
    try:
        with session(s) as conn:
            flow = stuck_flow(s, conn, "backtracks", BACKTRACKS_BODY)
            wait_for(lambda: flow_status(s, flow)[0] == "failed", BOUND_S, "the flow failed")
            status, error = flow_status(s, flow)
            assert "function backtracks ran longer than the Python call time limit of 2000 ms" \
                in error, error
        assert s.stop(timeout=BOUND_S) == 0, s.log_tail()
    finally:
        s.kill()


def test_a_function_cannot_take_sigterm_from_rtsqld(tmp_path):
    s = PythonServer(tmp_path)
    s.start()
    try:
        # The function is the server's first: its session's thread is the
        # interpreter's main thread, where signal.signal would work.
        with session(s) as conn:
            create_function(conn, "ignore_term",
                            "import signal\n"
                            "    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                            "    return 1")
            with pytest.raises(psycopg.Error) as err:
                conn.execute("SELECT ignore_term('x')").fetchall()
            assert err.value.diag.sqlstate == "22000"
            assert "signal handling belongs to rtsqld" in err.value.diag.message_primary
        start = time.monotonic()
        code = s.stop(timeout=BOUND_S)
        assert code == 0, f"exit code {code} (None: SIGTERM did not stop it)\n{s.log_tail()}"
        assert time.monotonic() - start < BOUND_S
    finally:
        s.kill()


def test_a_call_looping_in_c_holds_neither_ddl_nor_the_stop(tmp_path):
    s = PythonServer(tmp_path, "--shutdown-timeout", "5")
    s.start()
    try:
        with session(s) as conn:
            flow = stuck_flow(s, conn, "c_loop", C_LOOP_BODY)
            stopper = s.connect()
            t, _ = in_thread(lambda: stopper.execute(f"STOP FLOW {flow}"))
            # STOP FLOW waits for a task nothing can stop; other DDL goes on,
            # and the flow cannot be started or dropped meanwhile.
            with session(s) as other:
                wait_for(lambda: bounded(lambda: _refused(other, f"START FLOW {flow}"),
                                         "START FLOW while STOP FLOW waits"),
                         BOUND_S, "START FLOW refused while STOP FLOW waits")
                assert bounded(lambda: _refused(other, f"DROP FLOW {flow}"),
                               "DROP FLOW while STOP FLOW waits")
                bounded(lambda: other.execute(f"CREATE FUNCTION {unique('meanwhile')}(a BIGINT) "
                                              f"RETURNS BIGINT LANGUAGE SQL AS a + 1"),
                        "CREATE FUNCTION while STOP FLOW waits")
                bounded(lambda: other.execute(
                    f"CREATE SINK {unique('meanwhile')} WITH (connector = 'kafka', "
                    f"'kafka.bootstrap.servers' = 'embedded', topic = 'meanwhile', "
                    f"format = 'json')"), "CREATE SINK while STOP FLOW waits")
            assert t.is_alive(), "STOP FLOW returned while its task loops in C"
        start = time.monotonic()
        code = s.stop(timeout=BOUND_S)
        assert code == 3, f"exit code {code} (None: still running)\n{s.log_tail()}"
        assert time.monotonic() - start < BOUND_S
        assert "--shutdown-timeout" in s.log_tail()
    finally:
        s.kill()


def _refused(conn, sql):
    """Whether SQL is refused with 55006 (a flow still stopping)."""
    try:
        conn.execute(sql)
    except psycopg.Error as e:
        assert e.diag.sqlstate == "55006", e
        return True
    return False
