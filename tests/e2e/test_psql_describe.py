"""psql 15's \\d name, \\d+ name, \\du, \\dm and \\dv against rtsqld, checked as
psql prints them: the object's kind as PostgreSQL names it, then its columns
and their types. The queries psql sends (tests/data/pg_clients/
catalog_queries.sql) hold correlated scalar subqueries and ARRAY(SELECT ...)
in their select lists, which bounded queries evaluate per row over the
catalog as PostgreSQL shows it (docs/sql.md, "Subqueries in a bounded
query's select list"), sort by columns they do not select, and, for \\d
name, a UNION of publications (bounded UNION) and a comma join of pg_class
and pg_index for a view's key."""

import os
import subprocess

from conftest import PSQL, unique, wait_for


def run_psql(server, command):
    """psql -X -A (a title and a header, no alignment) running COMMAND."""
    return subprocess.run(
        [PSQL, "-h", server.host, "-p", str(server.port), "-U", "rtsql", "-d", "rtsql",
         "-X", "-A", "-v", "ON_ERROR_STOP=1", "-c", command],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "PGCONNECT_TIMEOUT": "10"})


def describe(server, command):
    """The lines psql prints for COMMAND. psql leaves a description it cannot
    finish without a word, so stderr and the exit code are both checked."""
    p = run_psql(server, command)
    assert p.returncode == 0, f"{command}: {p.stderr}"
    assert p.stderr == "", f"{command}: {p.stderr}"
    return p.stdout.splitlines()


def test_psql_describes_a_static_table_and_a_source(server):
    table = unique("pgd_codes")
    source = unique("pgd_clicks")
    server.psql(f"CREATE TABLE {table} (code STRING, label STRING, weight DOUBLE)")
    server.psql(f"CREATE SOURCE {source} (user_id STRING, amount DOUBLE, ts TIMESTAMP) "
                "WITH ('connector' = 'datagen')")
    try:
        assert describe(server, f"\\d {table}") == [
            f'Table "public.{table}"',
            "Column|Type|Collation|Nullable|Default",
            "code|text|||", "label|text|||", "weight|double precision|||"]
        assert describe(server, f"\\d {source}") == [
            f'Table "public.{source}"',
            "Column|Type|Collation|Nullable|Default",
            "user_id|text|||", "amount|double precision|||",
            "ts|timestamp with time zone|||"]
        # \d+ adds storage, compression, statistics target and description.
        assert describe(server, f"\\d+ {table}") == [
            f'Table "public.{table}"',
            "Column|Type|Collation|Nullable|Default|Storage|Compression|Stats target|Description",
            "code|text||||extended|||", "label|text||||extended|||",
            "weight|double precision||||plain|||",
            "Access method: heap"]
    finally:
        server.psql(f"DROP SOURCE {source}")
        server.psql(f"DROP TABLE {table}")


def test_psql_describes_a_sink_as_a_foreign_table(server):
    sink = unique("pgd_out")
    server.psql(f"CREATE SINK {sink} WITH (connector = 'kafka', "
                f"kafka.bootstrap.servers = 'embedded', topic = '{sink}', format = 'json')")
    try:
        # A sink has no columns of its own (its flow's are written); its
        # connector is its server, its format and topic its options.
        assert describe(server, f"\\d {sink}") == [
            f'Foreign table "public.{sink}"',
            "Column|Type|Collation|Nullable|Default|FDW options",
            "Server: kafka",
            f"FDW options: (format 'json', topic '{sink}')"]
    finally:
        server.psql(f"DROP SINK {sink}")


def test_psql_describes_and_lists_a_materialized_view(server):
    source = unique("pgd_src")
    view = unique("pgd_view")
    server.psql(f"CREATE SOURCE {source} (user_id STRING, amount DOUBLE) "
                "WITH ('connector' = 'datagen')")
    server.psql(f"CREATE MATERIALIZED VIEW {view} AS "
                f"SELECT user_id, count(*) AS n, sum(amount) AS total FROM {source} GROUP BY user_id")
    try:
        assert f"public|{view}|materialized view|rtsql" in describe(server, "\\dm")
        # Its columns are its running plan's, there once its flow is planned;
        # its key is its primary key's index, which psql finds through comma
        # joins of pg_class and pg_index.
        want = [f'Materialized view "public.{view}"',
                "Column|Type|Collation|Nullable|Default",
                "user_id|text|||", "n|bigint|||", "total|double precision|||",
                "Indexes:", f'    "{view}_pkey" PRIMARY KEY, btree (user_id)']
        wait_for(lambda: describe(server, f"\\d {view}") == want, timeout=60,
                 what=f"\\d {view} with the view's columns and key")
        # \d+ adds the view's query (pg_get_viewdef).
        assert describe(server, f"\\d+ {view}")[-3:] == [
            "View definition:",
            f"SELECT user_id, count(*) AS n, sum(amount) AS total FROM {source} GROUP BY user_id;",
            "Access method: heap"]
        # rtsql's views are all materialized: \dv lists none of them.
        p = run_psql(server, "\\dv")
        assert p.returncode == 0 and p.stdout == "", p.stdout
        assert p.stderr.strip() == "Did not find any relations.", p.stderr
    finally:
        server.psql(f"DROP MATERIALIZED VIEW {view}")
        server.psql(f"DROP SOURCE {source}")


def test_psql_lists_roles(server):
    # \du's "Member of" is an ARRAY(SELECT ...) per role, correlated with it,
    # in PostgreSQL's array form.
    lines = describe(server, "\\du")
    assert lines[:2] == ["List of roles", "Role name|Attributes|Member of"], lines
    assert "rtsql|Superuser, Create role, Create DB|{}" in lines, lines
