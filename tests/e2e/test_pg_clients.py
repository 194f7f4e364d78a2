"""What PostgreSQL's own clients ask rtsqld when they connect and look around:
psycopg's and SQLAlchemy's connect-time queries (version(), current_schema(),
SHOW standard_conforming_strings), psql with a database of its choosing, the
session's user and process ID, PostgreSQL's spellings (pg_catalog.f(),
::regclass, ~, COLLATE), and psql's \\dt, \\dn, \\df and \\l, which read the
catalog as PostgreSQL shows it through bounded queries (docs/sql.md, "Bounded
queries"). tests/data/pg_clients/ keeps the exact queries the tools send."""

import psycopg
import psycopg.sql
import pytest

from conftest import unique


def test_psycopg_connect_time_queries(server):
    with psycopg.connect(host=server.host, port=server.port, user="rtsql", dbname="shop",
                         autocommit=True, connect_timeout=10) as conn:
        db, schema, version = conn.execute(
            "SELECT current_database(), current_schema(), version()").fetchone()
        assert db == "shop"
        assert schema == "public"
        # Drivers parse "PostgreSQL <major>.<minor>" out of it.
        assert version.startswith("PostgreSQL 15.0 on x86_64-pc-linux-gnu, rtsql ")
        assert conn.execute("select pg_catalog.version()").fetchone()[0] == version
        # Off: string literals read backslash escapes, as Spark's.
        assert conn.execute("show standard_conforming_strings").fetchone()[0] == "off"
        assert conn.execute("show transaction isolation level").fetchone()[0] == "read committed"
        assert conn.execute("SHOW server_version_num").fetchone()[0] == "150000"
        user, session_user, pid = conn.execute(
            "SELECT current_user, session_user, pg_backend_pid()").fetchone()
        assert user == session_user == "rtsql"
        # The process ID BackendKeyData gave the client, which cancel requests name.
        assert pid == conn.info.backend_pid


def test_psycopg_parameters_in_pg_spellings(server):
    with server.connect() as conn:
        table = unique("pgc_rates")
        conn.execute(f"CREATE TABLE {table} (currency STRING, rate DOUBLE)")
        oid = conn.execute("SELECT %s::regclass", (table,)).fetchone()[0]
        assert oid >= 16384
        assert conn.execute("SELECT %s::regclass", (oid,)).fetchone()[0] == table
        assert conn.execute(
            "SELECT obj_description(%s::regclass, 'pg_class')", (table,)).fetchone()[0] == \
            "rtsql static table"
        # psycopg's TypeInfo.fetch() relies on 42704 for a type that is not there.
        with pytest.raises(psycopg.errors.UndefinedObject):
            conn.execute("SELECT %s::regtype", ("hstore",))
        assert conn.execute("SELECT %s::regtype", ("int4",)).fetchone()[0] == 23
        assert conn.execute("SELECT %s = ANY(%s)", ("p", ["r", "p"])).fetchone()[0] is True
        assert conn.execute("SELECT %s IS DISTINCT FROM NULL", (1,)).fetchone()[0] is True
        conn.execute(f"DROP TABLE {table}")


def test_backslashes_in_parameters_and_client_quoting(server):
    """String literals read backslash escapes (standard_conforming_strings is
    off): a parameter holding backslashes, and a value the client quotes into
    the text itself, read back as they were."""
    values = ["a\\d", "C:\\", "it's \\'", "\\\\"]
    with server.connect() as conn:
        assert conn.info.parameter_status("standard_conforming_strings") == "off"
        for v in values:
            assert conn.execute("SELECT %s, regexp_extract('x12y', %s, 1)",
                                (v, "(\\d+)")).fetchone() == (v, "12")
            # psycopg's own quoting, as a driver that quotes on the client does.
            literal = psycopg.sql.Literal(v).as_string(conn)
            assert conn.execute(f"SELECT {literal}").fetchone()[0] == v
        conn.execute("SET rtsql.escaped_string_literals = on")
        assert conn.info.parameter_status("standard_conforming_strings") == "on"
        assert conn.execute("SELECT %s", ("a\\d",)).fetchone()[0] == "a\\d"
        assert conn.execute("SELECT '\\d'").fetchone()[0] == "\\d"


def test_psql_pg_spellings(server):
    p = server.psql(
        "SELECT pg_catalog.pg_get_userbyid(10) AS owner, "
        "'clicks' OPERATOR(pg_catalog.~) '^(clicks)$' COLLATE pg_catalog.default AS matches, "
        "pg_catalog.pg_encoding_to_char(6) AS encoding, "
        "pg_catalog.format_type(1700, 655366) AS type")
    assert p.returncode == 0, p.stderr
    row = p.stdout.strip().splitlines()[-1]
    assert row == "rtsql|t|UTF8|numeric(10,2)", p.stdout


def test_psql_lists_relations_schemas_functions_databases(server):
    table = unique("pgc_codes")
    source = unique("pgc_clicks")
    function = unique("pgc_twice")
    server.psql(f"CREATE TABLE {table} (code STRING, label STRING)")
    server.psql(f"CREATE SOURCE {source} (user_id STRING, amount DOUBLE) "
                "WITH ('connector' = 'datagen')")
    server.psql(f"CREATE FUNCTION {function}(x INT) RETURNS INT AS x * 2")
    try:
        # psql's \\dt joins pg_class with pg_namespace, filters with regexes
        # and pg_table_is_visible, and sorts: a bounded query over the
        # catalog as PostgreSQL shows it.
        rows = server.psql("\\dt").stdout.splitlines()
        assert f"public|{table}|table|rtsql" in rows, rows
        assert f"public|{source}|table|rtsql" in rows, rows
        assert rows == sorted(rows), rows
        assert "public|rtsql" in server.psql("\\dn").stdout.splitlines()
        functions = server.psql("\\df").stdout.splitlines()
        assert any(line.startswith(f"public|{function}|integer|") for line in functions), functions
        databases = server.psql("\\l").stdout.splitlines()
        assert any(line.startswith("rtsql|rtsql|UTF8|") for line in databases), databases
    finally:
        server.psql(f"DROP FUNCTION {function}")
        server.psql(f"DROP SOURCE {source}")
        server.psql(f"DROP TABLE {table}")


def test_psycopg_reads_a_year_month_interval(server):
    """A YEAR-MONTH INTERVAL goes out as PostgreSQL's interval (OID 1186) in its
    text form, which psycopg reads with its own interval loader (a year as 365
    days, a month as 30, as PostgreSQL's justify rules count them)."""
    import datetime

    with server.connect() as conn:
        cur = conn.execute("SELECT INTERVAL '1-2' YEAR TO MONTH, INTERVAL -'3' MONTH, "
                           "make_ym_interval(2, 0), CAST(INTERVAL '1-2' YEAR TO MONTH AS STRING)")
        assert [d.type_code for d in cur.description] == [1186, 1186, 1186, 25]
        one_two, minus_three, two, text = cur.fetchone()
        assert one_two == datetime.timedelta(days=365 + 2 * 30)
        assert minus_three == datetime.timedelta(days=-3 * 30)
        assert two == datetime.timedelta(days=2 * 365)
        assert text == "INTERVAL '1-2' YEAR TO MONTH"
