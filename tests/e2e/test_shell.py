"""The rtsql shell's \\i and \\d against a real rtsqld: \\i runs a file's
statements and commands (nested, relative to the current directory, stopping
at the file's first error with its name and line, refusing endless nesting),
in a script and at the interactive prompt; \\d lists every object or describes
one (columns and types, options with credentials masked, a flow's plan)."""

import os
import pty
import select
import time

import pytest

from conftest import RTSQL, unique

KAFKA = "connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded'"


def names_in(server, show):
    return {row[0] for row in server.query(show)}


def test_include_runs_nested_files_relative_to_the_current_directory(server, tmp_path):
    src, sink, table = unique("inc_src"), unique("inc_snk"), unique("inc_tab")
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "sources.sql").write_text(
        f"CREATE SOURCE {src} (a STRING) WITH ({KAFKA}, subscribe = '{unique('t')}', format = 'json');\n"
        # Relative to where rtsql runs, as psql's \i: not to this file.
        "\\i inc/sinks.sql\n")
    (tmp_path / "inc" / "sinks.sql").write_text(
        f"CREATE SINK {sink} WITH ({KAFKA}, topic = '{unique('t')}', format = 'json');\n")
    (tmp_path / "main.sql").write_text(
        "\\i inc/sources.sql\n"
        f"CREATE TABLE {table} (id INT);\n"
        f"INSERT INTO {table} VALUES (1), (2);\n")
    p = server.rtsql("-f", "main.sql", cwd=str(tmp_path))
    assert src in names_in(server, "SHOW SOURCES"), p.stdout
    assert sink in names_in(server, "SHOW SINKS"), p.stdout
    assert dict((r[0], r[2]) for r in server.query("SHOW TABLES"))[table] == 2


def test_include_stops_at_the_files_first_error(server, tmp_path):
    before, after, later = unique("ok_snk"), unique("never_snk"), unique("later_snk")
    (tmp_path / "bad.sql").write_text(
        f"CREATE SINK {before} WITH ({KAFKA}, topic = '{unique('t')}', format = 'json');\n"
        "\n"
        "SELECT nope FROM no_such_source;\n"
        f"CREATE SINK {after} WITH ({KAFKA}, topic = '{unique('t')}', format = 'json');\n")
    (tmp_path / "main.sql").write_text(
        "\\i bad.sql\n"
        f"CREATE SINK {later} WITH ({KAFKA}, topic = '{unique('t')}', format = 'json');\n")
    p = server.rtsql("-f", "main.sql", check=False, cwd=str(tmp_path))
    assert p.returncode == 1, p.stdout + p.stderr
    # The error names the included file and the line of the failed statement.
    assert "bad.sql:3:" in p.stderr, p.stderr
    assert "no_such_source" in p.stderr, p.stderr
    sinks = names_in(server, "SHOW SINKS")
    assert before in sinks
    assert after not in sinks, "the included file went on after its error"
    assert later not in sinks, "the script went on after its included file failed"


def test_include_refuses_endless_nesting_and_missing_files(server, tmp_path):
    (tmp_path / "loop.sql").write_text("SELECT 1;\n\\i loop.sql\n")
    p = server.rtsql("-f", "loop.sql", check=False, cwd=str(tmp_path))
    assert p.returncode == 1, p.stdout + p.stderr
    assert "nested more than 16 deep" in p.stderr, p.stderr
    assert "loop.sql:2:" in p.stderr, p.stderr
    # Each level ran its statement before going deeper: 16 levels plus the script.
    assert p.stdout.count("(1 row)") == 17, p.stdout

    (tmp_path / "missing.sql").write_text("\\i nowhere.sql\n")
    p = server.rtsql("-f", "missing.sql", check=False, cwd=str(tmp_path))
    assert p.returncode == 1
    assert "missing.sql:1: \\i: cannot read nowhere.sql" in p.stderr, p.stderr


def run_interactive(lines, cwd, server, timeout=30):
    """Types LINES at rtsql's prompt on a pseudo-terminal, then \\q; returns
    everything the shell wrote."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the shell on the terminal
        os.chdir(cwd)
        os.environ["HOME"] = str(cwd)  # its history file goes there
        os.execv(str(RTSQL), [str(RTSQL), "-h", server.host, "-p", str(server.port)])
    out = b""
    try:
        for line in list(lines) + ["\\q"]:
            os.write(fd, (line + "\n").encode())
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if not ready:
                if os.waitpid(pid, os.WNOHANG) != (0, 0):
                    break
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the shell closed the terminal when it exited
                break
            if not chunk:
                break
            out += chunk
    finally:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        os.close(fd)
    return out.decode(errors="replace").replace("\r\n", "\n")


def test_include_at_the_prompt_reports_and_goes_on(server, tmp_path):
    made, skipped, after = unique("tty_snk"), unique("tty_never"), unique("tty_after")
    (tmp_path / "part.sql").write_text(
        f"CREATE SINK {made} WITH ({KAFKA}, topic = '{unique('t')}', format = 'json');\n"
        "SELECT broken FROM nowhere_at_all;\n"
        f"CREATE SINK {skipped} WITH ({KAFKA}, topic = '{unique('t')}', format = 'json');\n")
    out = run_interactive(
        ["\\i part.sql",
         f"CREATE SINK {after} WITH ({KAFKA}, topic = '{unique('t')}', format = 'json');",
         "SELECT 'still here' AS mark;",
         f"\\d {made}"], tmp_path, server)
    assert "part.sql:2:" in out, out
    assert "still here" in out, out
    # \d at the prompt describes the sink the file created.
    assert any(r[:2] == ["format", "json"] for r in table_rows(out, 3)), out
    sinks = names_in(server, "SHOW SINKS")
    assert made in sinks and after in sinks, out
    assert skipped not in sinks, out


@pytest.fixture(scope="module")
def objects(server):
    """One object of each kind, with a credential among the source's options."""
    names = {"source": unique("d_src"), "sink": unique("d_snk"), "table": unique("d_tab"),
             "flow": unique("d_flow")}
    with server.connect() as conn:
        conn.execute(
            f"CREATE SOURCE {names['source']} (user_id STRING, amount DOUBLE, ts TIMESTAMP) "
            f"WITH ({KAFKA}, subscribe = '{unique('t')}', format = 'json', "
            "'kafka.sasl.username' = 'alice', 'kafka.sasl.password' = 'hunter2-secret')")
        conn.execute(f"CREATE SINK {names['sink']} WITH ({KAFKA}, topic = '{unique('t')}', format = 'json')")
        conn.execute(f"CREATE TABLE {names['table']} (code STRING, label STRING)")
        conn.execute(
            f"CREATE FLOW {names['flow']} INTO {names['sink']} AS "
            f"SELECT user_id, amount * 2 AS doubled FROM {names['source']} WHERE amount > 10")
    return names


def table_rows(text, width):
    """The rows of the aligned tables in TEXT that have WIDTH columns, as lists
    of stripped cells (headers included)."""
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) == width:
            rows.append(cells)
    return rows


def test_describe_lists_every_object(server, objects):
    p = server.run_script("\\d\n")
    rows = dict(table_rows(p.stdout, 2))
    assert rows.get("name") == "type", p.stdout
    for kind in ("source", "sink", "table", "flow"):
        assert rows.get(objects[kind]) == kind, p.stdout


def test_describe_source_shows_columns_and_masks_credentials(server, objects):
    p = server.run_script(f"\\d {objects['source']}\n")
    table = {name: (t, kind) for name, t, kind in table_rows(p.stdout, 3)}
    assert table["user_id"] == ("STRING", "column")
    assert table["amount"] == ("DOUBLE", "column")
    assert table["ts"] == ("TIMESTAMP", "column")
    assert table["subscribe"][1] == "option"
    assert table["kafka.sasl.username"] == ("alice", "option")
    assert table["kafka.sasl.password"] == ("********", "option")
    assert "hunter2" not in p.stdout


def test_describe_table_and_sink(server, objects):
    p = server.run_script(f"\\d {objects['table']}\n\\d {objects['sink']}\n")
    rows = table_rows(p.stdout, 3)
    assert ["code", "STRING", "column"] in rows, p.stdout
    assert ["label", "STRING", "column"] in rows, p.stdout
    assert ["format", "json", "option"] in rows, p.stdout
    # Neither is a flow: no plan follows.
    assert "QUERY PLAN" not in p.stdout


def test_describe_flow_shows_its_plan(server, objects):
    p = server.run_script(f"\\d {objects['flow']}\n")
    lines = [l.strip() for l in p.stdout.splitlines()]
    assert any(l.startswith("doubled") and "DOUBLE" in l and "output column" in l for l in lines), p.stdout
    assert "QUERY PLAN" in p.stdout
    assert any(l.startswith(f"Flow {objects['flow']} INTO {objects['sink']}") for l in lines), p.stdout
    assert any(l.startswith("Filter (amount > 10") for l in lines), p.stdout


def test_describe_unknown_name_is_an_error_with_its_place(server, tmp_path):
    p = server.run_script("\\d no_such_object_here\n", check=False)
    assert p.returncode == 1
    assert ":1: in \\d no_such_object_here" in p.stderr, p.stderr
    assert "42P01" in p.stderr, p.stderr
