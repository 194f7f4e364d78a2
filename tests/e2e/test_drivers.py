"""PostgreSQL drivers against the real rtsqld: psycopg 3 with server-side
parameters and prepared statements (the extended query protocol), and the
PostgreSQL JDBC driver from a small Java program (tests/e2e/jdbc), in plain
text and over TLS with a verified certificate and a SCRAM password. Each
creates a source, a sink and a flow, feeds it through Kafka and reads SHOW
PROGRESS; constant SELECTs come back typed."""

import datetime
import decimal
import json
import time
import os
import shutil
import subprocess
from pathlib import Path

import psycopg
import pytest

from conftest import Kafka, unique
from test_security import SecureServer

JDBC_DIR = Path(__file__).resolve().parent / "jdbc"


def records(tag, n=40):
    """N records; those with amount > 10 pass the flows' filter."""
    return [{"user_id": f"{tag}-{i}", "amount": float(i)} for i in range(n)]


def expected_output(recs):
    return sorted((r["user_id"], r["amount"] * 2) for r in recs if r["amount"] > 10)


def one(cur):
    """The single value of a one-row, one-column result."""
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


def test_psycopg_typed_constants(server):
    """A SELECT without FROM answers each column with its expression's type,
    so drivers hand out ints, floats, booleans and timestamps, not strings; in
    text and in binary, and in the extended protocol's Describe."""
    sql = ("SELECT 1 AS i, 'a' AS s, 1.5D AS d, true AS b, 2147483648 AS big, NULL AS n, "
           "1 + 2 AS sum, 7 / 2 AS half, 1 < 2 AS lt, CAST('2024-05-06 07:08:09' AS TIMESTAMP) AS ts, "
           "1.50 AS dec")
    want = (1, "a", 1.5, True, 2147483648, None, 3, 3.5, True,
            datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=datetime.timezone.utc),
            decimal.Decimal("1.50"))
    with server.connect() as conn:
        for binary in (False, True):
            cur = conn.cursor(binary=binary)
            row = cur.execute(sql).fetchone()
            assert row == want, (binary, row)
            assert [type(v) for v in row] == [type(v) for v in want], (binary, row)
            types = [conn.adapters.types.get(d.type_code).name for d in cur.description]
            assert types == ["int4", "text", "float8", "bool", "int8", "text", "int4",
                             "float8", "bool", "timestamptz", "numeric"], types
        # Parameters keep their types too.
        row = conn.execute("SELECT %s::int + 1, %s::bigint * 2, %s IS NULL",
                           (41, 2**40, None)).fetchone()
        assert row == (42, 2**41, True) and type(row[0]) is int
        # The simple query protocol (psql) answers the same.
        assert server.psql("SELECT 1, 1.5, true, 'x'").stdout.strip() == "1|1.5|t|x"


def test_psycopg_timestamp_ntz_is_timestamp(server):
    """A TIMESTAMP_NTZ is PostgreSQL's timestamp (OID 1114): a naive datetime
    of its wall clock in text and in binary, in any session time zone."""
    sql = ("SELECT TIMESTAMP_NTZ '2024-03-10 02:30:00.5' AS n, "
           "CAST('2024-05-06 07:08:09' AS TIMESTAMP_NTZ) AS c")
    want = (datetime.datetime(2024, 3, 10, 2, 30, 0, 500000), datetime.datetime(2024, 5, 6, 7, 8, 9))
    with server.connect() as conn:
        for zone in ("UTC", "Asia/Kolkata"):
            conn.execute(f"SET TIME ZONE '{zone}'")
            for binary in (False, True):
                cur = conn.cursor(binary=binary)
                row = cur.execute(sql).fetchone()
                assert row == want, (zone, binary, row)
                assert [d.type_code for d in cur.description] == [1114, 1114]


def test_psycopg_timestamp_is_timestamptz(server):
    """A TIMESTAMP is PostgreSQL's timestamptz (OID 1184), as Spark's TIMESTAMP
    is an instant shown in the session time zone: an aware datetime of the
    same instant in text and in binary in any session zone, the text with the
    zone's offset as PostgreSQL writes it, and a timestamptz parameter (an
    aware datetime) binds in text and in binary."""
    sql = ("SELECT CAST('2024-05-06 07:08:09.25Z' AS TIMESTAMP) AS t, "
           "CAST('1890-01-01 12:00:00Z' AS TIMESTAMP) AS lmt")
    utc = datetime.timezone.utc
    want = (datetime.datetime(2024, 5, 6, 7, 8, 9, 250000, tzinfo=utc),
            datetime.datetime(1890, 1, 1, 12, 0, tzinfo=utc))
    texts = {"UTC": "2024-05-06 07:08:09.25+00|1890-01-01 12:00:00+00",
             "Asia/Kolkata": "2024-05-06 12:38:09.25+05:30|1890-01-01 17:21:10+05:21:10",
             "America/St_Johns": "2024-05-06 04:38:09.25-02:30|1890-01-01 08:29:08-03:30:52"}
    with server.connect() as conn:
        for zone, text in texts.items():
            conn.execute(f"SET TIME ZONE '{zone}'")
            for binary in (False, True):
                cur = conn.cursor(binary=binary)
                row = cur.execute(sql).fetchone()
                assert row == want, (zone, binary, row)
                assert [d.type_code for d in cur.description] == [1184, 1184]
            # The text as a client without a timestamptz loader reads it.
            got = server.psql(f"SET TIME ZONE '{zone}'; {sql}").stdout.strip().splitlines()[-1]
            assert got == text, (zone, got)
            # An aware datetime binds as timestamptz, in text and in binary.
            at = datetime.datetime(2024, 3, 31, 3, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
            for placeholder in ("%t", "%b"):
                row = conn.execute(f"SELECT {placeholder} = CAST('2024-03-31 01:30:00Z' AS TIMESTAMP), "
                                   f"unix_seconds({placeholder})", (at, at)).fetchone()
                assert row == (True, 1711848600), (zone, placeholder, row)
        conn.execute("SET TIME ZONE 'UTC'")


def test_psycopg_small_types(server):
    """TINYINT and SMALLINT are int2 (PostgreSQL has no one-byte integer) and
    FLOAT is float4, in text and in binary; a FLOAT's text is the float's
    shortest (0.1, not 0.10000000149011612)."""
    sql = "SELECT tinyint(-7) AS t, smallint(300) AS s, float(0.1) AS f, float(2.5) AS g"
    with server.connect() as conn:
        for binary in (False, True):
            cur = conn.cursor(binary=binary)
            row = cur.execute(sql).fetchone()
            types = [conn.adapters.types.get(d.type_code).name for d in cur.description]
            assert types == ["int2", "int2", "float4", "float4"], (binary, types)
            assert row[0] == -7 and row[1] == 300 and row[3] == 2.5, (binary, row)
            assert abs(row[2] - 0.1) < 1e-7, (binary, row)
    assert server.psql("SELECT float(0.1), tinyint(1)").stdout.strip() == "0.1|1"


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


def run_jdbc(server, kafka, jdbc_classpath, url, java_props=()):
    """Runs JdbcSmoke against URL and checks what it reports and what the flow
    wrote to Kafka."""
    tag = unique("jdbc")
    in_topic, out_topic = unique("in"), unique("out")
    source, sink, flow = unique("src"), unique("snk"), unique("f")
    recs = records(tag)
    kafka.create_topic(in_topic)
    kafka.produce(in_topic, recs)
    p = subprocess.run(
        ["java", *java_props, "-cp", jdbc_classpath, "JdbcSmoke", url, kafka.options(), in_topic,
         out_topic, source, sink, flow, str(len(recs))],
        capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, f"JdbcSmoke failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
    lines = p.stdout.strip().splitlines()
    assert lines[-1] == "OK", p.stdout
    assert "LIVE 5" in lines, p.stdout
    progress = json.loads(next(line for line in lines if line.startswith("PROGRESS "))[9:])
    assert progress["name"] == flow
    assert progress["numInputRows"] == len(recs), progress
    want = expected_output(recs)
    got = output_rows(kafka.consume_json(out_topic, n=len(want), timeout=30, grace=1.0))
    assert got == want
    server.query(f"DROP FLOW {flow}")


def test_jdbc_driver(server, kafka, jdbc_classpath):
    run_jdbc(server, kafka, jdbc_classpath,
             f"jdbc:postgresql://{server.host}:{server.port}/rtsql")


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    """An rtsqld that requires TLS (a self-signed certificate for localhost)
    and SCRAM passwords."""
    s = SecureServer(tmp_path_factory.mktemp("rtsqld_jdbc_tls"))
    s.start()
    yield s
    code = s.stop()
    assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{s.log_tail()}"


def test_jdbc_over_tls_with_a_password(secure, jdbc_classpath):
    """The JDBC driver verifies the server's certificate against the test's
    self-signed one (sslmode=verify-full checks the name too: localhost) and
    logs in with SCRAM-SHA-256; --tls-required refuses anything else."""
    kafka = Kafka("embedded", "embedded", secure.embedded_bootstrap)
    # The certificate names localhost, which verify-full compares with the host.
    url = (f"jdbc:postgresql://localhost:{secure.port}/rtsql?ssl=true&sslmode=verify-full"
           f"&sslrootcert={secure.cert}")
    props = [f"-Drtsql.user={secure.user}", f"-Drtsql.password={secure.password}"]
    run_jdbc(secure, kafka, jdbc_classpath, url, props)

    # A wrong password, and a certificate the client does not trust, are refused.
    p = subprocess.run(
        ["java", f"-Drtsql.user={secure.user}", "-Drtsql.password=wrong", "-cp", jdbc_classpath,
         "JdbcSmoke", url, kafka.options(), "t", "t", "s", "k", "f", "1"],
        capture_output=True, text=True, timeout=120)
    assert p.returncode != 0
    assert "password authentication failed" in p.stderr + p.stdout
    p = subprocess.run(
        ["java", *props, "-cp", jdbc_classpath, "JdbcSmoke",
         f"jdbc:postgresql://localhost:{secure.port}/rtsql?ssl=true&sslmode=verify-full",
         kafka.options(), "t", "t", "s", "k", "f", "1"],
        capture_output=True, text=True, timeout=120)
    assert p.returncode != 0
