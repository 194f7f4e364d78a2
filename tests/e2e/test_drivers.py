"""PostgreSQL drivers against the real rtsqld: psycopg 3 with server-side
parameters and prepared statements (the extended query protocol), and the
PostgreSQL JDBC driver from a small Java program (tests/e2e/jdbc). Each creates
a source, a sink and a flow, feeds it through Kafka and reads SHOW PROGRESS."""

import json
import time
import os
import shutil
import subprocess
from pathlib import Path

import psycopg
import pytest

from conftest import unique

JDBC_DIR = Path(__file__).resolve().parent / "jdbc"


def records(tag, n=40):
    """N records; those with amount > 10 pass the flows' filter."""
    return [{"user_id": f"{tag}-{i}", "amount": float(i)} for i in range(n)]


def expected_output(recs):
    return sorted((r["user_id"], r["amount"] * 2) for r in recs if r["amount"] > 10)


def one(cur):
    """The single value of a one-row, one-column result. Constant SELECTs may
    answer in text, so numbers are compared through int()."""
    rows = cur.fetchall()
    assert len(rows) == 1 and len(rows[0]) == 1, rows
    return rows[0][0]


def output_rows(values):
    return sorted((v["user_id"], float(v["doubled"])) for v in values)


# -- psycopg ---------------------------------------------------------------

def test_psycopg_server_side_parameters(server):
    with server.connect() as conn:
        cur = conn.cursor()
        # Parameters travel separately from the text ($1), as binary int2.
        assert int(one(cur.execute("SELECT %s::int + 1", (41,)))) == 42
        assert one(cur.execute("SELECT %s || 'x'", ("it's",))) == "it'sx"
        assert one(cur.execute("SELECT %s IS NULL", (None,))) in (True, "true", "t")
        assert int(one(cur.execute("SELECT %s::int * %s", (6, 7)))) == 42
        assert int(one(cur.execute("SELECT %(a)s::int - %(b)s::int", {"a": 50, "b": 8}))) == 42
        assert int(one(cur.execute("SELECT %s::bigint - 1", (2**40,)))) == 2**40 - 1
        assert float(one(cur.execute("SELECT %s * 2", (1.25,)))) == 2.5
        assert [d.name for d in cur.execute("SELECT %s::int AS answer", (1,)).description] == \
            ["answer"]
        # The same statement through the extended protocol without parameters.
        row = conn.execute("SHOW embedded_kafka", prepare=True).fetchone()
        assert row[0] == server.embedded_bootstrap


def test_psycopg_prepared_statements(server):
    with server.connect() as conn:
        conn.prepare_threshold = 2
        for i in range(6):
            assert int(one(conn.execute("SELECT %s::int * 2", (i,)))) == 2 * i
        # Explicitly prepared, and run again by name.
        for i in range(3):
            assert int(one(conn.execute("SELECT %s::int + 100", (i,), prepare=True))) == 100 + i


def test_psycopg_binary_results(server):
    with server.connect() as conn:
        cur = conn.cursor(binary=True)
        # Every column is requested in binary; the values still arrive intact.
        a, b = cur.execute("SELECT %s::int + 1, %s || 'b'", (41, "a")).fetchone()
        assert (int(a), b) == (42, "ab")
        assert all(col.type_code for col in cur.description)


def test_psycopg_errors_then_recovery(server):
    with server.connect() as conn:
        with pytest.raises(psycopg.errors.SyntaxError) as err:
            conn.execute("SELEC %s", (1,))
        assert err.value.diag.sqlstate == "42601"
        assert int(one(conn.execute("SELECT %s::int", (7,)))) == 7


def test_psycopg_flow_with_parameters(server, kafka):
    """DDL with server-side parameters: each $n becomes a literal of its value."""
    tag = unique("psy")
    in_topic, out_topic = unique("in"), unique("out")
    source, sink, flow = unique("src"), unique("snk"), unique("f")
    recs = records(tag)
    kafka.create_topic(in_topic)
    kafka.produce(in_topic, recs)
    with server.connect() as conn:
        conn.execute(
            f"CREATE SOURCE {source} (user_id STRING, amount DOUBLE) WITH ({kafka.options()}, "
            "subscribe = %s, startingOffsets = 'earliest', format = %s)", (in_topic, "json"))
        conn.execute(f"CREATE SINK {sink} WITH ({kafka.options()}, topic = %s, format = 'json')",
                     (out_topic,))
        conn.execute(f"CREATE FLOW {flow} INTO {sink} TRIGGER REALTIME AS "
                     f"SELECT user_id, amount * 2 AS doubled FROM {source} WHERE amount > %s",
                     (10,))
        want = expected_output(recs)
        got = output_rows(kafka.consume_json(out_topic, n=len(want), timeout=30, grace=1.0))
        assert got == want
        progress = None
        for _ in range(60):
            row = conn.execute(f"SHOW PROGRESS {flow}", prepare=True).fetchone()
            progress = row[0] if isinstance(row[0], dict) else json.loads(row[0])
            if progress.get("numInputRows") == len(recs):
                break
            time.sleep(0.3)
        assert progress["numInputRows"] == len(recs), progress
        assert progress["name"] == flow
        conn.execute(f"DROP FLOW {flow}")


# -- JDBC ------------------------------------------------------------------

@pytest.fixture(scope="module")
def jdbc_classpath(tmp_path_factory):
    """The driver jar (fetched once by jdbc/fetch.sh) and the compiled smoke
    program; skips when Java or the driver cannot be had."""
    javac = shutil.which("javac")
    java = shutil.which("java")
    if not javac or not java:
        pytest.skip("the JDBC check needs a JDK (javac and java)")
    fetch = subprocess.run(["bash", str(JDBC_DIR / "fetch.sh")], capture_output=True, text=True,
                           timeout=600)
    if fetch.returncode != 0:
        pytest.skip("the PostgreSQL JDBC driver could not be fetched from Maven Central "
                    f"(is the network reachable?): {fetch.stderr.strip()[-500:]}")
    jar = fetch.stdout.strip().splitlines()[-1]
    out = tmp_path_factory.mktemp("jdbc")
    subprocess.run([javac, "-cp", jar, "-d", str(out), str(JDBC_DIR / "JdbcSmoke.java")],
                   check=True, timeout=300)
    return f"{jar}{os.pathsep}{out}"


def test_jdbc_driver(server, kafka, jdbc_classpath):
    tag = unique("jdbc")
    in_topic, out_topic = unique("in"), unique("out")
    source, sink, flow = unique("src"), unique("snk"), unique("f")
    recs = records(tag)
    kafka.create_topic(in_topic)
    kafka.produce(in_topic, recs)
    url = f"jdbc:postgresql://{server.host}:{server.port}/rtsql"
    p = subprocess.run(
        ["java", "-cp", jdbc_classpath, "JdbcSmoke", url, kafka.options(), in_topic, out_topic,
         source, sink, flow, str(len(recs))],
        capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, f"JdbcSmoke failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
    lines = p.stdout.strip().splitlines()
    assert lines[-1] == "OK", p.stdout
    progress = json.loads(next(line for line in lines if line.startswith("PROGRESS "))[9:])
    assert progress["name"] == flow
    assert progress["numInputRows"] == len(recs), progress
    want = expected_output(recs)
    got = output_rows(kafka.consume_json(out_topic, n=len(want), timeout=30, grace=1.0))
    assert got == want
    server.query(f"DROP FLOW {flow}")
