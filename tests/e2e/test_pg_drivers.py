"""Drivers' metadata calls against the real rtsqld, run through the real
tools: SQLAlchemy 2's inspector (table, view and materialized view names,
has_table, columns, primary keys, indexes, unique and foreign keys), pandas'
read_sql of a materialized view and read_sql_table, and the PostgreSQL JDBC
driver's DatabaseMetaData (getTables, getColumns, getPrimaryKeys and
getIndexInfo of a table and of a view) and a JDBC transaction, from a small Java program
(tests/e2e/jdbc/JdbcMetadata.java). Each reads the catalog as PostgreSQL shows
it with its own queries (tests/data/pg_clients/catalog_queries.sql);
docs/operations.md ("Clients and tools") says what works with each tool."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import unique, wait_for

JDBC_DIR = Path(__file__).resolve().parent / "jdbc"
WAIT_S = 60  # bound on the wait for a view's rows


@pytest.fixture(scope="module")
def objects(server, kafka):
    """A static table, a Kafka source with records, and a materialized view
    over it whose rows are known: (table, source, view, expected view rows)."""
    table, source, view = unique("pgd_codes"), unique("pgd_orders"), unique("pgd_totals")
    topic = unique("pgd_in")
    kafka.create_topic(topic)
    recs = [{"user_id": f"u{i % 3}", "qty": i} for i in range(12)]
    kafka.produce(topic, recs)
    server.query(f"CREATE TABLE {table} (code STRING, label STRING)")
    server.query(f"INSERT INTO {table} VALUES ('a', 'alpha'), ('b', 'beta')")
    server.query(f"CREATE SOURCE {source} (user_id STRING, qty INT) WITH ({kafka.options()}, "
                 f"subscribe = '{topic}', startingOffsets = 'earliest', format = 'json')")
    server.query(f"CREATE MATERIALIZED VIEW {view} AS SELECT user_id, count(*) AS n, "
                 f"sum(qty) AS total FROM {source} GROUP BY user_id")
    want = sorted((f"u{k}", 4, sum(i for i in range(12) if i % 3 == k)) for k in range(3))
    return table, source, view, want


def engine_of(server):
    sqlalchemy = pytest.importorskip("sqlalchemy")
    return sqlalchemy.create_engine(
        f"postgresql+psycopg://rtsql@{server.host}:{server.port}/rtsql",
        connect_args={"connect_timeout": 10})


def test_sqlalchemy_inspector_lists_tables_and_views(server, objects):
    import sqlalchemy
    table, source, view, _ = objects
    engine = engine_of(server)
    try:
        inspector = sqlalchemy.inspect(engine)
        # Sources and static tables are tables; a materialized view is one.
        tables = inspector.get_table_names()
        assert table in tables and source in tables, tables
        assert view not in tables, tables
        assert inspector.get_view_names() == []
        assert view in inspector.get_materialized_view_names()
        assert inspector.has_table(table)
        assert inspector.has_table(view)
        assert not inspector.has_table(unique("pgd_missing"))
        schemas = inspector.get_schema_names()
        assert "public" in schemas, schemas
    finally:
        engine.dispose()


def test_sqlalchemy_columns_of_a_table_and_a_view(server, objects):
    """get_columns sends a query with correlated subqueries in its select list
    whose columns carry their schema (pg_catalog.pg_attribute.atthasdef)."""
    import sqlalchemy
    table, _, view, _ = objects
    engine = engine_of(server)
    try:
        inspector = sqlalchemy.inspect(engine)
        cols = inspector.get_columns(table)
        assert [(c["name"], c["nullable"], c["default"]) for c in cols] == [
            ("code", True, None), ("label", True, None)], cols
        assert all(isinstance(c["type"], sqlalchemy.types.Text) for c in cols), cols
        wait_for(lambda: [c["name"] for c in inspector.get_columns(view)] ==
                 ["user_id", "n", "total"], WAIT_S, f"the columns of {view}")
    finally:
        engine.dispose()


def test_sqlalchemy_keys_and_indexes(server, objects):
    """get_pk_constraint and get_indexes send unnest(indkey) and
    generate_subscripts(indkey, 1) in a select list: a view's key is its
    primary key, its index the key's; a table has none, and nothing has
    foreign keys or unique constraints."""
    import sqlalchemy
    table, _, view, _ = objects
    engine = engine_of(server)
    try:
        inspector = sqlalchemy.inspect(engine)
        wait_for(lambda: inspector.get_pk_constraint(view)["constrained_columns"] == ["user_id"],
                 WAIT_S, f"the primary key of {view}")
        inspector = sqlalchemy.inspect(engine)
        assert inspector.get_pk_constraint(view)["name"] == f"{view}_pkey"
        # get_indexes leaves out the primary key's index, as PostgreSQL's is.
        assert inspector.get_indexes(view) == []
        assert inspector.get_unique_constraints(view) == []
        assert inspector.get_foreign_keys(view) == []
        assert inspector.get_pk_constraint(table)["constrained_columns"] == []
        assert inspector.get_indexes(table) == []
        assert inspector.get_foreign_keys(table) == []
    finally:
        engine.dispose()


def test_pandas_reads_a_table_by_name(server, objects):
    """read_sql_table reflects the table (its columns, keys and indexes) and
    reads it all."""
    pandas = pytest.importorskip("pandas")
    table, _, view, want = objects
    engine = engine_of(server)
    try:
        frame = pandas.read_sql_table(table, engine)
        assert list(frame.columns) == ["code", "label"]
        assert sorted(map(tuple, frame.values.tolist())) == [("a", "alpha"), ("b", "beta")]
        last = []

        def converged():
            frame = pandas.read_sql_table(view, engine)
            last[:] = [frame]
            return sorted((r.user_id, int(r.n), int(r.total)) for r in frame.itertuples()) == want

        wait_for(converged, WAIT_S, f"read_sql_table of {view} to give {want} (last: {last})")
    finally:
        engine.dispose()


def test_pandas_reads_a_materialized_view(server, objects):
    pandas = pytest.importorskip("pandas")
    _, _, view, want = objects
    engine = engine_of(server)
    try:
        last = []

        def converged():
            frame = pandas.read_sql(f"SELECT * FROM {view}", engine)
            last[:] = [frame]
            rows = sorted((r.user_id, int(r.n), int(r.total)) for r in frame.itertuples())
            return list(frame.columns) == ["user_id", "n", "total"] and rows == want

        wait_for(converged, WAIT_S, f"read_sql of {view} to give {want} (last: {last})")
        # A bounded query over the view, in a transaction as SQLAlchemy runs it.
        frame = pandas.read_sql(
            f"SELECT user_id, total FROM {view} WHERE n > 0 ORDER BY total DESC", engine)
        assert list(frame["total"]) == sorted((t for _, _, t in want), reverse=True)
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def jdbc_classpath(tmp_path_factory):
    """The driver jar (fetched once by jdbc/fetch.sh, cached, within a time
    limit) and the compiled JdbcMetadata; skips when Java is absent."""
    javac, java = shutil.which("javac"), shutil.which("java")
    if not javac or not java:
        pytest.skip("the JDBC check needs a JDK (javac and java)")
    fetch = subprocess.run(["bash", str(JDBC_DIR / "fetch.sh")], capture_output=True, text=True,
                           timeout=600)
    assert fetch.returncode == 0, f"the PostgreSQL JDBC driver was not fetched:\n{fetch.stderr}"
    jar = fetch.stdout.strip().splitlines()[-1]
    out = tmp_path_factory.mktemp("jdbc_metadata")
    subprocess.run([javac, "-cp", jar, "-d", str(out), str(JDBC_DIR / "JdbcMetadata.java")],
                   check=True, timeout=300)
    return f"{jar}{os.pathsep}{out}"


def test_jdbc_database_metadata_and_a_transaction(server, objects, jdbc_classpath):
    table, source, view, want = objects
    # The view's columns come from its running plan: there once it is created.
    p = subprocess.run(
        ["java", "-cp", jdbc_classpath, "JdbcMetadata",
         f"jdbc:postgresql://{server.host}:{server.port}/rtsql", table, view],
        capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, f"JdbcMetadata failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
    lines = p.stdout.strip().splitlines()
    assert lines[-1] == "OK", p.stdout
    assert f"TABLE TABLE|public|{table}" in lines, lines
    assert f"TABLE TABLE|public|{source}" in lines, lines
    assert f"TABLE MATERIALIZED VIEW|public|{view}" in lines, lines
    assert "TABLE SYSTEM TABLE|pg_catalog|pg_class" in lines, lines
    columns = [line for line in lines if line.startswith("COLUMN ")]
    assert columns == [
        f"COLUMN {table}|code|text|1|YES",
        f"COLUMN {table}|label|text|2|YES",
        f"COLUMN {view}|user_id|text|1|YES",
        f"COLUMN {view}|n|int8|2|YES",
        f"COLUMN {view}|total|int8|3|YES",
    ], columns
    # A view's key is its primary key; a table has none.
    assert [line for line in lines if line.startswith("PK ")] == [
        f"PK {view}|user_id|1|{view}_pkey"], lines
    # getIndexInfo (its query reads indoption[n] & 1): the view's key is its
    # unique index, ascending; a table has none.
    assert [line for line in lines if line.startswith("INDEX ")] == [
        f"INDEX {view}|{view}_pkey|false|1|user_id|A"], lines
    # setAutoCommit(false), a query, commit().
    assert "TX 2" in lines, lines


def test_a_subquery_of_more_than_one_row_is_postgresqls_error(server, objects):
    """A scalar subquery that gives two rows fails as PostgreSQL's does: 21000,
    its message as PostgreSQL words it (no prefix of rtsql's) and a hint."""
    import psycopg
    table, _, _, _ = objects
    with server.connect() as conn:
        with pytest.raises(psycopg.errors.CardinalityViolation) as caught:
            conn.execute(f"SELECT code, (SELECT t.label FROM {table} t) AS any_label "
                         f"FROM {table}").fetchall()
    diag = caught.value.diag
    assert diag.sqlstate == "21000"
    assert diag.message_primary == "more than one row returned by a subquery used as an expression"
    assert diag.message_hint == "add a condition or LIMIT 1 so that the subquery returns one row"
