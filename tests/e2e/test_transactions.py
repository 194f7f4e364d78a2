"""Transaction blocks and cursors with the real clients: psycopg 3 in its
default mode (autocommit off: every statement inside BEGIN ... COMMIT), a
server-side cursor's fetchmany over a live query, psql's warnings and its
FETCH_COUNT (which declares a cursor), `rtsql -f --single-transaction`, and
a kill -9 during COMMIT, after which the catalog is as before the block or as
after it, never between. The live queries read datagen sources: no broker."""

import subprocess
import threading
import time

import psycopg
import pytest
from psycopg.pq import TransactionStatus

from conftest import PSQL, Server, unique, wait_for


def gen_source(name, rate=50):
    return (f"CREATE SOURCE {name} (a BIGINT) "
            f"WITH (connector = 'datagen', rowsPerSecond = '{rate}')")


def source_names(server):
    return {r[0] for r in server.query("SHOW SOURCES")}


def default_mode(server):
    """A psycopg connection as an application opens it: autocommit off."""
    return psycopg.connect(host=server.host, port=server.port, user="rtsql", dbname="rtsql",
                           connect_timeout=10)


def test_psycopg_default_mode_commit_and_rollback(server):
    kept, dropped = unique("kept"), unique("dropped")
    with default_mode(server) as conn:
        assert conn.info.transaction_status == TransactionStatus.IDLE
        assert conn.execute("SELECT 1").fetchone()[0] == 1
        assert conn.info.transaction_status == TransactionStatus.INTRANS
        assert conn.execute("SHOW statement_timeout").fetchone()[0] == "0"
        conn.execute(gen_source(kept))
        # Not there for anyone else until COMMIT.
        assert kept not in source_names(server)
        conn.commit()
        assert conn.info.transaction_status == TransactionStatus.IDLE
        assert kept in source_names(server)
        conn.execute(gen_source(dropped))
        conn.rollback()
        assert dropped not in source_names(server)


def test_psycopg_failed_block_answers_25p02_until_rollback(server):
    name = unique("failed")
    with default_mode(server) as conn:
        conn.execute(gen_source(name))
        with pytest.raises(psycopg.errors.SyntaxError):
            conn.execute("SELEC 1")
        assert conn.info.transaction_status == TransactionStatus.INERROR
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT 1")
        conn.rollback()
        assert conn.execute("SELECT 2").fetchone()[0] == 2
        conn.commit()
    assert name not in source_names(server)


def test_psycopg_named_cursor_fetchmany_over_a_live_query(server):
    src = unique("live")
    server.query(gen_source(src))
    with default_mode(server) as conn:
        # FETCH waits for rows up to this bound: generous, for a loaded machine.
        conn.execute("SET rtsql.fetch_wait = '120s'")
        with conn.cursor(name=unique("cur")) as cur:
            cur.execute(f"SELECT a FROM {src}")
            assert [d.name for d in cur.description] == ["a"]
            first = cur.fetchmany(3)
            assert len(first) == 3
            second = cur.fetchmany(2)
            assert len(second) == 2
            assert all(isinstance(r[0], int) for r in first + second)
        conn.commit()


def test_psql_warnings_and_fetch_count(server):
    src = unique("psqlsrc")
    server.query(gen_source(src))
    p = server.psql("COMMIT")
    assert "WARNING:  there is no transaction in progress" in p.stderr
    p = server.psql("BEGIN; BEGIN; ROLLBACK")
    assert "WARNING:  there is already a transaction in progress" in p.stderr
    # FETCH_COUNT: psql declares a cursor and fetches 2 rows at a time.
    p = subprocess.run(
        [PSQL, "-h", server.host, "-p", str(server.port), "-U", "rtsql", "-d", "rtsql", "-X",
         "-A", "-t", "-v", "ON_ERROR_STOP=1", "-v", "FETCH_COUNT=2",
         "-c", f"SELECT a FROM {src} LIMIT 5"],
        capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert len(p.stdout.split()) == 5, p.stdout


def test_single_transaction_script_is_all_or_nothing(server, tmp_path):
    good, half = unique("good"), unique("half")
    bad = tmp_path / "bad.sql"
    bad.write_text(f"{gen_source(half)};\nCREATE SOURCE {half}_2 (a BIGINT) WITH "
                   f"(connector = 'nosuch');\n")
    p = server.rtsql("-f", str(bad), "--single-transaction", check=False)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "rolled back" in p.stderr
    assert half not in source_names(server)
    ok = tmp_path / "ok.sql"
    ok.write_text(f"{gen_source(good)};\nCREATE TABLE {good}_t (a BIGINT);\n")
    server.rtsql("-f", str(ok), "-1")
    assert good in source_names(server)


def test_kill_during_commit_leaves_the_catalog_before_or_after(tmp_path):
    """Each round opens a block of many CREATE SOURCEs, sends COMMIT, and
    kills rtsqld with SIGKILL a little later (a later moment each round);
    after a restart the block's sources are all there or none is."""
    n = 120
    srv = Server(tmp_path).start()
    try:
        seen = set()
        for delay_ms in (0, 2, 5, 10, 20, 40, 80, 200):
            prefix = unique("blk")
            conn = default_mode(srv)
            for i in range(n):
                conn.execute(gen_source(f"{prefix}_{i}"))
            done = threading.Event()

            def commit():
                try:
                    conn.commit()
                    done.set()
                except psycopg.Error:
                    pass

            t = threading.Thread(target=commit)
            t.start()
            time.sleep(delay_ms / 1000)
            srv.proc.kill()
            srv.proc.wait(timeout=10)
            t.join(timeout=30)
            srv = Server(tmp_path).start()
            names = {s for s in source_names(srv) if s.startswith(prefix)}
            assert len(names) in (0, n), f"{len(names)} of {n} sources after a kill at {delay_ms} ms"
            if done.is_set():
                assert len(names) == n  # COMMIT answered: it was durable
            seen.add(len(names))
        # Both outcomes are legal; which ones the rounds met depends on the machine.
        print(f"sources after each kill: {sorted(seen)} of {n}")
        assert seen <= {0, n}
    finally:
        srv.stop()


def test_flow_created_in_a_block_starts_at_commit_and_survives_a_restart(tmp_path):
    src, sink, flow = unique("fsrc"), unique("fsink"), unique("fflow")
    srv = Server(tmp_path).start()
    try:
        with default_mode(srv) as conn:
            conn.execute(gen_source(src))
            conn.execute(f"CREATE SINK {sink} WITH (connector = 'blackhole')")
            conn.execute(f"CREATE FLOW {flow} INTO {sink} AS SELECT a FROM {src}")
            # Planned, not started, until COMMIT.
            assert flow not in {r[0] for r in srv.query("SHOW FLOWS")}
            conn.commit()
        wait_for(lambda: srv.progress(flow)["sink"]["numOutputRows"] > 0, 60,
                 f"flow {flow} writing rows after COMMIT")
        srv.stop()
        srv = Server(tmp_path).start()
        wait_for(lambda: srv.progress(flow)["sink"]["numOutputRows"] > 0, 60,
                 f"flow {flow} writing rows after a restart")
    finally:
        srv.stop()
