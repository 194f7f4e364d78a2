"""User errors over the wire: each bad statement gives its SQLSTATE (and a position
where one makes sense) to psycopg and to psql, the session goes on working, and
`rtsql -f` stops a script at the first error with FILE:LINE."""

import subprocess

import psycopg
import pytest

from conftest import PSQL, Kafka, unique


@pytest.fixture(scope="module")
def objects(server):
    """A source and a sink the bad statements can refer to."""
    names = {"source": unique("src"), "sink": unique("snk"), "topic": unique("t")}
    broker = Kafka("embedded", "embedded", server.embedded_bootstrap)
    # The topics exist, so that the only thing wrong with each bad statement is
    # the mistake it was written with.
    broker.create_topic(names["topic"])
    broker.create_topic("t1")
    server.psql(
        f"CREATE SOURCE {names['source']} (user_id STRING, amount DOUBLE) WITH ("
        f"connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded', "
        f"subscribe = '{names['topic']}', format = 'json')")
    server.psql(
        f"CREATE SINK {names['sink']} WITH (connector = 'kafka', "
        f"'kafka.bootstrap.servers' = 'embedded', topic = '{names['topic']}_out', format = 'json')")
    return names


def cases(o):
    """(label, statement, SQLSTATE, the text the error position must point at or None)."""
    src, snk = o["source"], o["sink"]
    kafka = "connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded'"
    return [
        ("syntax", f"CREATE SOURCE {unique('x')} (a STRING b DOUBLE) WITH (format = 'json')",
         "42601", ""),
        ("syntax-keyword", "SELEC user_id FROM x", "42601", ""),
        ("unknown-column",
         f"CREATE FLOW {unique('g')} INTO {snk} TRIGGER REALTIME AS "
         f"SELECT user_id, no_such_column FROM {src}", "42703", "no_such_column"),
        ("unknown-relation",
         f"CREATE FLOW {unique('g')} INTO {snk} TRIGGER REALTIME AS "
         f"SELECT user_id FROM no_such_source", "42P01", "no_such_source"),
        ("bad-starting-offsets",
         f"CREATE SOURCE {unique('x')} (a STRING) WITH ({kafka}, subscribe = 't1', "
         f"startingOffsets = 'middle', format = 'json')", "22023", None),
        ("bad-max-partitions",
         f"CREATE SOURCE {unique('x')} (a STRING) WITH ({kafka}, subscribe = 't1', "
         f"maxPartitions = 'abc', format = 'json')", "22023", None),
        ("duplicate-source",
         f"CREATE SOURCE {src} (a STRING) WITH ({kafka}, subscribe = 't1', format = 'json')",
         "42710", None),
    ]


def _ids(o=None):
    return [c[0] for c in cases({"source": "s", "sink": "k"})]


@pytest.mark.parametrize("index", range(len(_ids())), ids=_ids())
def test_error_through_psycopg(server, objects, index):
    label, sql, state, at = cases(objects)[index]
    with server.connect() as conn:
        with pytest.raises(psycopg.Error) as info:
            conn.execute(sql)
        err = info.value
        assert err.sqlstate == state, f"{label}: {err.sqlstate} {err}"
        assert str(err).strip(), "an error needs a message"
        if at is not None:
            pos = err.diag.statement_position
            assert pos is not None, f"{label}: no position in the error"
            pos = int(pos)
            # The wire's position is 1-based, in characters.
            assert 1 <= pos <= len(sql) + 1, f"{label}: position {pos} outside the statement"
            if at:
                assert sql[pos - 1:].startswith(at), \
                    f"{label}: position {pos} points at {sql[pos - 1:pos + 15]!r}, not {at!r}"
        # The same session keeps working after the error.
        rows = conn.execute("SHOW SOURCES").fetchall()
        assert any(objects["source"] in map(str, r) for r in rows), rows


@pytest.mark.parametrize("index", range(len(_ids())), ids=_ids())
def test_error_through_psql(server, objects, index):
    label, sql, state, at = cases(objects)[index]
    # One psql session: the bad statement, then SHOW SOURCES, which must still run.
    p = subprocess.run(
        [PSQL, "-h", server.host, "-p", str(server.port), "-U", "rtsql", "-d", "rtsql",
         "-X", "-A", "-t", "-v", "VERBOSITY=verbose", "-f", "-"],
        input=sql + ";\nSHOW SOURCES;\n", capture_output=True, text=True, timeout=60)
    assert f"ERROR:  {state}:" in p.stderr, f"{label}: {p.stderr}"
    if at is not None:
        # psql draws the statement with a caret under the position it was given.
        assert "LINE 1:" in p.stderr and "^" in p.stderr, f"{label}: {p.stderr}"
    assert objects["source"] in p.stdout, f"{label}: session did not go on: {p.stdout}"


def test_script_stops_at_first_error(server, objects, tmp_path):
    good_source, good_sink = unique("s_ok"), unique("k_ok")
    bad_source, after_sink = unique("s_bad"), unique("k_after")
    kafka = "connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded'"
    lines = [
        "-- a deployment script with a mistake on line 7",
        f"CREATE SOURCE {good_source} (a STRING, b DOUBLE)",
        f"  WITH ({kafka}, subscribe = '{objects['topic']}', format = 'json');",
        "",
        f"CREATE SINK {good_sink} WITH ({kafka}, topic = '{unique('t')}', format = 'json');",
        "",
        f"CREATE SOURCE {bad_source} (a STRING) WITH ({kafka}, subscribe = 't1', startingOffsets = 'middle', format = 'json');",
        "",
        f"CREATE SINK {after_sink} WITH ({kafka}, topic = '{unique('t')}', format = 'json');",
    ]
    (tmp_path / "bad.sql").write_text("\n".join(lines) + "\n")
    p = server.rtsql("-f", "bad.sql", check=False, cwd=str(tmp_path))
    assert p.returncode != 0, p.stdout + p.stderr
    assert "bad.sql:7:" in p.stdout + p.stderr, p.stdout + p.stderr
    sources = server.psql("SHOW SOURCES").stdout
    sinks = server.psql("SHOW SINKS").stdout
    assert good_source in sources and good_sink in sinks, "statements before the error lost"
    assert bad_source not in sources
    assert after_sink not in sinks, "the script went on after its first error"


def test_rtsql_command_error_exit_code(server):
    p = server.rtsql("-c", "SHOW PROGRESS no_such_flow_here", check=False)
    assert p.returncode != 0
    assert "no_such_flow_here" in p.stdout + p.stderr


def test_too_many_result_columns(server, objects):
    """A select list longer than PostgreSQL's 1664 entries is refused with 54011 at
    the first entry beyond the limit, on a constant SELECT and on a live query,
    and the session goes on. 40,000 columns would overflow the wire's 16-bit
    column count."""
    constant = "SELECT " + ", ".join(["1"] * 40000)
    live = "SELECT " + ", ".join(["amount"] * 2000) + f" FROM {objects['source']}"
    with server.connect() as conn:
        for sql, item in ((constant, "1"), (live, "amount")):
            with pytest.raises(psycopg.Error) as info:
                conn.execute(sql)
            err = info.value
            assert err.sqlstate == "54011", f"{err.sqlstate} {err}"
            assert "at most 1664 entries" in str(err)
            # The 1665th entry: "SELECT " then 1664 entries of `item, `.
            assert int(err.diag.statement_position) == len("SELECT ") + 1664 * len(item + ", ") + 1
        assert conn.execute("SELECT 2").fetchone() == (2,)
        # 1664 columns are fine.
        row = conn.execute("SELECT " + ", ".join(["3"] * 1664)).fetchone()
        assert len(row) == 1664
