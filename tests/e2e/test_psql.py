"""rtsqld as a PostgreSQL server: psql, several statements in one query string,
many concurrent sessions, the embedded broker's address, and a clean exit on
SIGTERM while a flow runs."""

import subprocess
import threading
import time

import psycopg
import pytest

from conftest import KCAT, Kafka, Server, unique


def test_psql_show_statements(server):
    p = server.psql("SHOW SOURCES; SHOW FLOWS")
    assert p.returncode == 0, p.stderr
    assert "ERROR" not in p.stderr


def test_several_statements_in_one_query(server):
    a, b = unique("multi_a"), unique("multi_b")
    kafka = "connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded'"
    p = server.psql(
        f"CREATE SINK {a} WITH ({kafka}, topic = '{a}', format = 'json'); "
        f"CREATE SINK {b} WITH ({kafka}, topic = '{b}', format = 'json'); "
        f"SHOW SINKS")
    # psql prints the result of the last statement of a multi-statement string.
    assert a in p.stdout and b in p.stdout, p.stdout
    server.psql(f"DROP SINK {a}; DROP SINK {b}")
    out = server.psql("SHOW SINKS").stdout
    assert a not in out and b not in out


def test_twenty_concurrent_sessions(server):
    kafka = "connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded'"
    errors = []
    names = [unique(f"conc{i}") for i in range(20)]
    barrier = threading.Barrier(len(names), timeout=30)

    def session(name):
        try:
            with server.connect() as conn:
                barrier.wait()
                conn.execute(
                    f"CREATE SINK {name} WITH ({kafka}, topic = '{name}', format = 'json')")
                for _ in range(5):
                    rows = conn.execute("SHOW SINKS").fetchall()
                    assert any(name in map(str, r) for r in rows)
                    conn.execute("SHOW SOURCES").fetchall()
                conn.execute(f"DROP SINK {name}")
        except Exception as e:  # noqa: BLE001 - every failure is reported below
            errors.append(f"{name}: {e!r}")

    threads = [threading.Thread(target=session, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a session hung"
    assert not errors, errors
    left = server.psql("SHOW SINKS").stdout
    assert not any(n in left for n in names)


def test_embedded_kafka_address_works_with_clients(server):
    addr = server.psql("SHOW embedded_kafka").stdout.strip()
    assert addr.startswith("127.0.0.1:"), addr
    assert addr == server.embedded_bootstrap
    k = Kafka("embedded", "embedded", addr)
    topic = unique("probe")
    k.produce(topic, [{"n": i} for i in range(5)])
    got = k.consume_json(topic, n=5, timeout=20)
    assert sorted(v["n"] for v in got) == list(range(5))
    if KCAT:
        p = subprocess.run([KCAT, "-b", addr, "-L", "-t", topic, "-m", "5"],
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, p.stderr
        assert topic in p.stdout


def test_sigterm_with_running_flow_exits_zero(tmp_path):
    s = Server(tmp_path).start()
    try:
        topic = unique("sig_in")
        k = Kafka("embedded", "embedded", s.embedded_bootstrap)
        k.create_topic(topic)
        k.produce(topic, [{"user_id": f"u{i}", "amount": 20.0 + i} for i in range(10)])
        s.run_script(f"""
CREATE SOURCE src (user_id STRING, amount DOUBLE) WITH (
  connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
  subscribe = '{topic}', startingOffsets = 'earliest', format = 'json');
CREATE SINK snk WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
  topic = '{topic}_out', format = 'json');
CREATE FLOW f INTO snk TRIGGER REALTIME AS SELECT user_id, amount FROM src;
""")
        assert len(k.consume(f"{topic}_out", n=10, timeout=30)) == 10
        with s.connect() as conn:
            flows = conn.execute("SHOW FLOWS").fetchall()
            assert any("f" in map(str, r) for r in flows)
        started = time.monotonic()
        code = s.stop(timeout=10)
        assert code == 0, f"exit code {code} on SIGTERM with a running flow\n{s.log_tail()}"
        assert time.monotonic() - started < 10
    finally:
        s.kill()


def test_session_survives_error_and_reports_version(server):
    with server.connect() as conn:
        rows = conn.execute("SHOW embedded_kafka").fetchall()
        assert len(rows) == 1 and len(rows[0]) == 1
        # psycopg reads server_version from the startup's ParameterStatus.
        assert conn.info.server_version > 0
        with pytest.raises(psycopg.Error):
            conn.execute("SHOW PROGRESS no_such_flow_anywhere")
        assert conn.execute("SHOW SOURCES").fetchall() is not None
