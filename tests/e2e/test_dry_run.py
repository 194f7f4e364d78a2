"""`rtsql -f FILE --dry-run`: every statement is parsed, bound and planned
against the server's catalog (objects the script creates earlier included),
and nothing is created or started."""

from conftest import SOURCE_DIR, unique


def catalog_snapshot(server):
    return {kind: server.query(f"SHOW {kind}") for kind in ("SOURCES", "SINKS", "TABLES", "FLOWS")}


def test_quickstart_validates_without_creating_anything(server):
    before = catalog_snapshot(server)
    p = server.rtsql("-f", str(SOURCE_DIR / "examples" / "quickstart.sql"), "--dry-run")
    assert "dry run: every statement is valid; nothing was created" in p.stdout, p.stdout
    assert catalog_snapshot(server) == before
    assert server.query("SHOW slots")[0][0].startswith("0 used")


def test_dry_run_reports_the_first_invalid_statement(server):
    src, sink = unique("dry_src"), unique("dry_sink")
    script = f"""
CREATE SOURCE {src} (user_id STRING, amount DOUBLE)
    WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
          subscribe = '{src}', format = 'json');
CREATE SINK {sink} WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
                         topic = '{sink}', format = 'json');
CREATE FLOW ok_{src} INTO {sink} AS SELECT user_id FROM {src};
CREATE FLOW bad_{src} INTO {sink} AS SELECT amout FROM {src};
"""
    before = catalog_snapshot(server)
    # The fourth statement's error is reported at its place, and the three
    # valid statements before it created nothing.
    p = server.rtsql("-f", str(write(server, script)), "--dry-run", check=False)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "42703" in p.stderr or "does not exist" in p.stderr, p.stderr
    assert ":8:" in p.stderr, p.stderr  # FILE:LINE of the bad flow
    assert "dry run: every statement is valid" not in p.stdout
    assert catalog_snapshot(server) == before


def write(server, text):
    path = server.tmp / f"{unique('dry')}.sql"
    path.write_text(text)
    return path
