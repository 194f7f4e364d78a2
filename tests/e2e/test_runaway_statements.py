"""What a client or a record sends cannot crash rtsqld or keep it busy without
bound: regular expressions match in linear time on long inputs (in a constant
SELECT and in a flow), a pattern RE2 cannot run is an error with a SQLSTATE,
statement_timeout ends a long statement with 57014, and a cancel request ends
one within a bound."""

import os
import threading
import time

import psycopg
import pytest

from conftest import Server, cancel_until_ended, unique

# Generous: CI machines are loaded. Each bound is far above what the statement
# needs and far below what the old matcher took (minutes, or a crash).
BOUND_S = 30


# A constant SELECT that computes for minutes: each search for 'a(.*z)?' looks
# to the end of the text, once for each of its 300,000 matches.
LONG_COMPUTATION = f"SELECT length(regexp_replace('{'a' * 300000}', 'a(.*z)?', 'x'))"


def cpu_seconds(pid):
    """User plus system CPU time of process PID."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for(predicate, timeout=BOUND_S, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} not reached within {timeout}s")


def query_within(server, sql, timeout=BOUND_S):
    """Rows of SQL on a connection whose client gives up after TIMEOUT."""
    with psycopg.connect(host=server.host, port=server.port, user="rtsql", dbname="rtsql",
                         autocommit=True, connect_timeout=10,
                         options=None) as conn:
        result = {}

        def run():
            try:
                result["rows"] = conn.execute(sql).fetchall()
            except psycopg.Error as e:
                result["error"] = e

        t = threading.Thread(target=run, daemon=True)
        t.start()
        t.join(timeout)
        assert not t.is_alive(), f"{sql[:80]!r}... did not end within {timeout}s"
        if "error" in result:
            raise result["error"]
        return result["rows"]


def test_regex_on_a_long_literal_neither_crashes_nor_hangs(server):
    long_a = "a" * 20000
    assert query_within(server, f"SELECT regexp_like('{long_a}', '(a|b)*')") == [(True,)]
    evil = "a" * 32 + "!"
    assert query_within(server, f"SELECT regexp_like('{evil}', '(a+)+$')") == [(False,)]
    assert server.proc.poll() is None, "rtsqld died"
    assert server.query("SELECT 1") == [(1,)]


def test_a_pattern_re2_cannot_run_is_2201B_with_a_hint(server):
    # A literal reads Spark's backslash escapes: '\\1' is the regex's \1.
    for pattern, says in [(r"(a)\\1", "backreference"), ("(?=a)", "lookahead")]:
        sql = f"SELECT regexp_like('aa', '{pattern}')"
        with pytest.raises(psycopg.Error) as err:
            server.query(sql)
        diag = err.value.diag
        assert diag.sqlstate == "2201B", diag.message_primary
        assert says in diag.message_primary
        assert "RE2" in (diag.message_hint or "")
        # At the pattern (1-based, as PostgreSQL counts).
        assert diag.statement_position == str(sql.index(f"'{pattern}'") + 1), diag.statement_position


def test_flow_matches_a_50_kb_record_and_keeps_running(server, kafka):
    src, sink, flow = unique("rx_src"), unique("rx_sink"), unique("rx_flow")
    in_topic, out_topic = unique("rx_in"), unique("rx_out")
    kafka.create_topic(in_topic)
    kafka.create_topic(out_topic)
    server.query(f"CREATE SOURCE {src} (id BIGINT, s STRING) WITH ({kafka.options()}, "
                 f"subscribe = '{in_topic}', startingOffsets = 'earliest', format = 'json')")
    server.query(f"CREATE SINK {sink} WITH ({kafka.options()}, topic = '{out_topic}', format = 'json')")
    server.query(f"CREATE FLOW {flow} INTO {sink} TRIGGER REALTIME AS "
                 f"SELECT id, length(s) AS n FROM {src} WHERE regexp_like(s, '^(ab|cd)*$')")
    kafka.produce(in_topic, [{"id": 1, "s": "ab" * 25000}, {"id": 2, "s": "ab" * 24999 + "x"}])
    got = kafka.consume_json(out_topic, n=1, timeout=BOUND_S)
    assert got == [{"id": 1, "n": 50000}], got
    assert server.proc.poll() is None, "rtsqld died"

    # The flow goes on with the records after the long ones.
    kafka.produce(in_topic, [{"id": 3, "s": "cdab"}])
    got = kafka.consume_json(out_topic, n=2, timeout=BOUND_S)
    assert sorted(r["id"] for r in got) == [1, 3], got
    flows = {r[0]: r[2] for r in server.query("SHOW FLOWS")}
    assert flows[flow] == "running", flows

    # STOP FLOW ends it within a bound.
    start = time.monotonic()
    server.query(f"STOP FLOW {flow}")
    assert time.monotonic() - start < BOUND_S
    flows = {r[0]: r[2] for r in server.query("SHOW FLOWS")}
    assert flows[flow] == "stopped", flows
    # Left running: the server fixture's SIGTERM must end it cleanly in time.
    server.query(f"START FLOW {flow}")


def declare_idle_source(server, kafka):
    """A source on a topic nobody writes to: a live query on it runs until ended."""
    topic, src = unique("idle_in"), unique("idle_src")
    kafka.create_topic(topic)
    server.query(f"CREATE SOURCE {src} (id BIGINT) WITH ({kafka.options()}, "
                 f"subscribe = '{topic}', format = 'json')")
    return src


def test_statement_timeout_ends_a_long_statement_with_57014(server, kafka):
    src = declare_idle_source(server, kafka)
    with server.connect() as conn:
        assert conn.execute("SHOW statement_timeout").fetchone() == ("0",)
        conn.execute("SET statement_timeout = '1s'")
        assert conn.execute("SHOW statement_timeout").fetchone() == ("1s",)
        start = time.monotonic()
        with pytest.raises(psycopg.Error) as err:
            conn.execute(f"SELECT id FROM {src}").fetchall()
        assert time.monotonic() - start < BOUND_S
        assert err.value.diag.sqlstate == "57014"
        assert err.value.diag.message_primary == "canceling statement due to statement timeout"
        # The session goes on, and statements that finish in time are unaffected.
        assert conn.execute("SELECT 2").fetchone() == (2,)
        conn.execute("SET statement_timeout = 0")
        assert conn.execute("SELECT 3").fetchone() == (3,)
        with pytest.raises(psycopg.Error) as err:
            conn.execute("SET statement_timeout = 'soon'")
        assert err.value.diag.sqlstate == "22023"


def test_statement_timeout_ends_a_function_looping_over_a_long_value(server):
    # The timeout ends it between two matches.
    with server.connect() as conn:
        conn.execute("SET statement_timeout = '1s'")
        start = time.monotonic()
        with pytest.raises(psycopg.Error) as err:
            conn.execute(LONG_COMPUTATION).fetchall()
        assert time.monotonic() - start < BOUND_S
        assert err.value.diag.sqlstate == "57014"
        assert err.value.diag.message_primary == "canceling statement due to statement timeout"
        assert conn.execute("SELECT 5").fetchone() == (5,)


@pytest.mark.parametrize("statement", ["live query", "function on a long value"])
def test_cancel_request_ends_a_long_statement(server, kafka, statement):
    if statement == "live query":
        sql = f"SELECT id FROM {declare_idle_source(server, kafka)}"
    else:
        sql = LONG_COMPUTATION
    conn = server.connect()
    errors = cancel_until_ended(conn, sql, BOUND_S, "the statement")
    if statement != "live query":
        # A live query ends with the rows it had; a computation has none.
        assert errors and errors[0].diag.sqlstate == "57014", errors
    assert conn.execute("SELECT 4").fetchone() == (4,)
    conn.close()


def test_sigterm_ends_a_running_computation_in_time(tmp_path):
    s = Server(tmp_path)
    s.start()
    try:
        conn = s.connect()
        before = cpu_seconds(s.proc.pid)

        def run():
            try:
                conn.execute(LONG_COMPUTATION)
            except psycopg.Error:
                pass

        threading.Thread(target=run, daemon=True).start()
        wait_for(lambda: cpu_seconds(s.proc.pid) - before > 1.0, what="rtsqld computing")
        start = time.monotonic()
        code = s.stop(timeout=BOUND_S)
        assert code == 0, f"exit code {code} (None: still running after {BOUND_S}s)\n{s.log_tail()}"
        assert time.monotonic() - start < BOUND_S
    finally:
        s.kill()
