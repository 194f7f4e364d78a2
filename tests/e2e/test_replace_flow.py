"""CREATE OR REPLACE FLOW carries a flow's state over, also through a crash.

A GROUP BY count runs over seeded input; it is replaced by a query that adds a
filter before the aggregation (which moves the aggregate's operator id, and so
its state keys) and a sum after the count (which starts empty). rtsqld is then
killed with SIGKILL before the new plan has written any checkpoint of its own,
and started again on the same data directory with no statement: the catalog
brings the new plan, which must restore the replaced plan's checkpoint through
the recorded mapping. More input follows, and the highest count written per key
must equal DuckDB's count over all the input the queries admit, the sum DuckDB's
over what came after the replace: nothing lost, nothing counted twice.

The broker outlives the killed server (conftest's `broker`: a second rtsqld's
embedded broker, and Apache Kafka when RTSQL_KAFKA_BOOTSTRAP is set).
"""

import json
import random
import threading
import time

import duckdb
import psycopg
import pytest

from conftest import unique, wait_for, start_server

KEYS = 12
BEFORE = 600
AFTER = 600
CONVERGE_TIMEOUT_S = 120


def highest_rows(broker, topic):
    """The row with the highest n per key: delivery is at-least-once, so a
    row may be written again, never with a higher count than the truth."""
    best = {}
    for m in broker.consume_to_end(topic, timeout=3):
        r = json.loads(m.value())
        if r["k"] not in best or r["n"] >= best[r["k"]]["n"]:
            best[r["k"]] = r
    return best


def truth(rows):
    """DuckDB's answer for the replaced query over ROWS: the count per key of
    the rows it admits (v >= 0), and the sum of those after the replace."""
    db = duckdb.connect()
    db.execute("CREATE TABLE input (k VARCHAR, v BIGINT, phase INT)")
    db.executemany("INSERT INTO input VALUES (?, ?, ?)",
                   [(r["k"], r["v"], r["phase"]) for r in rows])
    counts = dict(db.execute(
        "SELECT k, count(*) FROM input WHERE v >= 0 GROUP BY k").fetchall())
    sums = dict(db.execute(
        "SELECT k, sum(v) FROM input WHERE v >= 0 AND phase = 1 GROUP BY k").fetchall())
    return counts, sums


def seeded_input():
    """Rows before the replace (all admitted by its filter) and after it."""
    rng = random.Random(46)
    before = [{"k": f"k{rng.randrange(KEYS)}", "v": rng.randrange(0, 100), "phase": 0}
              for _ in range(BEFORE)]
    after = [{"k": f"k{rng.randrange(KEYS)}", "v": rng.randrange(-50, 100), "phase": 1}
             for _ in range(AFTER)]
    return before, after


def wait_for_exact_counts(server, broker, topic, rows):
    """Waits until the highest count per key is DuckDB's over ROWS, failing at
    once on a count above it (a record counted twice); returns the rows."""
    want_counts, want_sums = truth(rows)
    deadline = time.monotonic() + CONVERGE_TIMEOUT_S
    while True:
        best = highest_rows(broker, topic)
        counts = {k: r["n"] for k, r in best.items()}
        over = {k: (n, want_counts.get(k)) for k, n in counts.items() if n > want_counts.get(k, 0)}
        assert not over, f"records counted twice: {over}"
        if counts == want_counts:
            return best, want_sums
        assert time.monotonic() < deadline, (
            f"counts {counts} did not reach {want_counts}\n{server.log_tail()}")
        time.sleep(1)


def test_replace_keeps_group_by_state_across_kill_9(broker, tmp_path):
    uid = unique("replace")
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    broker.create_topic(topic_in)
    broker.create_topic(topic_out)
    opts = broker.options()
    before, after = seeded_input()
    server = start_server(tmp_path, 0)
    try:
        server.run_script(f"""
            CREATE SOURCE ev (k STRING, v BIGINT, phase INT)
                WITH ({opts}, subscribe = '{topic_in}', startingOffsets = 'earliest', format = 'json');
            CREATE SINK counts WITH ({opts}, topic = '{topic_out}', format = 'json');
            CREATE FLOW c INTO counts CHECKPOINT INTERVAL '1 hour' WITH ('shuffle.partitions' = '2')
                AS SELECT k, count(*) AS n FROM ev GROUP BY k;
        """)
        broker.produce(topic_in, before)
        want_before, _ = truth(before)
        wait_for(lambda: {k: r["n"] for k, r in highest_rows(broker, topic_out).items()} == want_before,
                 CONVERGE_TIMEOUT_S, "the counts of the input before the replace")

        replacement = """CREATE OR REPLACE FLOW c INTO counts CHECKPOINT INTERVAL '1 hour'
            WITH ('shuffle.partitions' = '2')
            AS SELECT k, count(*) AS n, sum(v) AS total FROM ev WHERE v >= 0 GROUP BY k"""
        plan = [r[0] for r in server.query("EXPLAIN " + replacement)]
        assert any("state kept" in line and "(was" in line for line in plan), plan
        server.query(replacement)

        # Killed before the new plan's first checkpoint: only the replaced
        # plan's checkpoint is there to restore.
        server.proc.kill()
        server.proc.wait(timeout=10)
        server = start_server(tmp_path, 1)
        plan = [r[0] for r in server.query("EXPLAIN " + replacement)]
        assert plan == ["unchanged: the flow runs this plan already; nothing happens"], plan

        broker.produce(topic_in, after)
        best, want_sums = wait_for_exact_counts(server, broker, topic_out, before + after)
        sums = {k: r["total"] for k, r in best.items() if "total" in r}
        assert sums == want_sums
        assert {r[0]: r[2] for r in server.query("SHOW FLOWS")} == {"c": "running"}
    finally:
        code = server.stop()
        assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{server.log_tail()}"


def test_plan_prints_each_kind_of_change_and_apply_is_idempotent(server, kafka, tmp_path):
    """`rtsql -f deploy.sql --plan` on a script with one change of each kind:
    a source to create, a sink left alone, a flow to replace (with its state
    plan), one unchanged, one refused, a new one, and a running flow the script
    does not name. Nothing changes; --apply then applies it, and a second
    --plan finds nothing left to do."""
    uid = unique("deploy")
    opts = kafka.options()
    kafka.create_topic(f"{uid}_in")
    server.run_script(f"""
        CREATE SOURCE {uid}_ev (k STRING, a STRING, v BIGINT)
            WITH ({opts}, subscribe = '{uid}_in', startingOffsets = 'earliest', format = 'json');
        CREATE SINK {uid}_out WITH (connector = 'blackhole');
        CREATE FLOW {uid}_keep INTO {uid}_out AS SELECT k, count(*) AS n FROM {uid}_ev GROUP BY k;
        CREATE FLOW {uid}_same INTO {uid}_out AS SELECT k, v FROM {uid}_ev;
        CREATE FLOW {uid}_key INTO {uid}_out AS SELECT k, count(*) AS n FROM {uid}_ev GROUP BY k;
        CREATE FLOW {uid}_old INTO {uid}_out AS SELECT k FROM {uid}_ev;
    """)
    deploy = tmp_path / "deploy.sql"
    script = f"""
        CREATE SOURCE IF NOT EXISTS {uid}_ev (k STRING, a STRING, v BIGINT)
            WITH ({opts}, subscribe = '{uid}_in', startingOffsets = 'earliest', format = 'json');
        CREATE SOURCE IF NOT EXISTS {uid}_more (k STRING)
            WITH ({opts}, subscribe = '{uid}_in', startingOffsets = 'earliest', format = 'json');
        CREATE SINK IF NOT EXISTS {uid}_out WITH (connector = 'blackhole');
        CREATE OR REPLACE FLOW {uid}_keep INTO {uid}_out AS
            SELECT k, count(*) AS n FROM {uid}_ev WHERE v > 0 GROUP BY k;
        CREATE OR REPLACE FLOW {uid}_same INTO {uid}_out AS SELECT k, v FROM {uid}_ev;
        CREATE OR REPLACE FLOW {uid}_key INTO {uid}_out AS SELECT a, count(*) AS n FROM {uid}_ev GROUP BY a;
        CREATE OR REPLACE FLOW {uid}_new INTO {uid}_out AS SELECT k FROM {uid}_more;
    """
    deploy.write_text(script)
    p = server.rtsql("-f", str(deploy), "--plan", check=False)
    assert p.returncode == 1, p.stdout + p.stderr  # a replace is refused
    out = p.stdout.splitlines()
    assert f"unchanged source {uid}_ev (exists; IF NOT EXISTS leaves it as it is)" in out, p.stdout
    assert f"create    source {uid}_more" in out, p.stdout
    assert f"unchanged sink {uid}_out (exists; IF NOT EXISTS leaves it as it is)" in out, p.stdout
    assert f"replace   flow {uid}_keep" in out, p.stdout
    i = out.index(f"replace   flow {uid}_keep")
    assert "state kept" in out[i + 1] and "(was " in out[i + 1], p.stdout
    assert out[i + 2] == f"    source {uid}_ev: offsets kept", p.stdout
    assert f"unchanged flow {uid}_same" in out, p.stdout
    refused = [l for l in out if l.startswith(f"refused   flow {uid}_key ")]
    assert refused and "add RESET STATE" in refused[0], p.stdout
    assert any("the GROUP BY key changed from (k) to (a)" in l for l in out), p.stdout
    assert f"create    flow {uid}_new" in out, p.stdout
    assert f"not in the script: flow {uid}_old (left as it is)" in out, p.stdout
    # The plan changed nothing.
    flows = {r[0] for r in server.query("SHOW FLOWS")}
    assert f"{uid}_new" not in flows and f"{uid}_old" in flows
    assert not [r for r in server.query("SHOW SOURCES") if r[0] == f"{uid}_more"]

    # Without the refused change, --apply applies the rest; a second plan
    # finds everything unchanged.
    deploy.write_text(script.replace("SELECT a, count(*) AS n FROM", "SELECT k, count(*) AS n FROM")
                      .replace("GROUP BY a;", "GROUP BY k;"))
    server.rtsql("-f", str(deploy), "--apply")
    p = server.rtsql("-f", str(deploy), "--plan")
    out = p.stdout.splitlines()
    for name in ("keep", "same", "key", "new"):
        assert f"unchanged flow {uid}_{name}" in out, p.stdout
    assert f"unchanged source {uid}_more (exists; IF NOT EXISTS leaves it as it is)" in out, p.stdout
    assert not any(l.startswith(("create", "replace", "refused", "error")) for l in out), p.stdout


def test_replace_in_a_transaction_block_is_all_or_nothing_across_kill_9(broker, tmp_path):
    """A replace inside BEGIN ... COMMIT: a block whose other statement fails
    leaves the flow on its old plan with its state; a block committed while
    rtsqld is killed (SIGKILL a little later each round) comes back with both
    its statements or with neither. Once the replace is in, the counts over
    all the input are DuckDB's exactly, and the sums those after the replace."""
    uid = unique("blockrep")
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    broker.create_topic(topic_in)
    broker.create_topic(topic_out)
    opts = broker.options()
    before, after = seeded_input()
    replacement = """CREATE OR REPLACE FLOW c INTO counts CHECKPOINT INTERVAL '1 hour'
        WITH ('shuffle.partitions' = '2')
        AS SELECT k, count(*) AS n, sum(v) AS total FROM ev WHERE v >= 0 GROUP BY k"""

    def replaced(srv):
        plan = [r[0] for r in srv.query("EXPLAIN " + replacement)]
        if plan == ["unchanged: the flow runs this plan already; nothing happens"]:
            return True
        assert any("state kept" in line and "(was" in line for line in plan), plan
        return False

    def extra_exists(srv):
        return any(r[0] == f"{uid}_extra" for r in srv.query("SHOW SOURCES"))

    def read_all_before(srv):
        """The flow's state holds every row before the replace: its source
        has read them all (the sums count only rows read after it)."""
        seen = []

        def ends():
            try:
                seen[:] = [srv.progress("c")]
                parts = seen[0]["sources"][0]["endOffset"].get(topic_in, {})
            except (psycopg.Error, KeyError, IndexError, TypeError, AttributeError):
                return 0
            return sum(int(v) for v in parts.values())
        try:
            wait_for(lambda: ends() >= len(before), CONVERGE_TIMEOUT_S,
                     "the flow reading the input before the replace")
        except AssertionError as e:
            raise AssertionError(f"{e}: {seen}\n{srv.log_tail()}") from None

    def block(srv):
        conn = psycopg.connect(host=srv.host, port=srv.port, user="rtsql", dbname="rtsql",
                               connect_timeout=10)
        conn.execute(replacement)
        conn.execute(f"CREATE SOURCE {uid}_extra (a BIGINT) "
                     f"WITH (connector = 'datagen', rowsPerSecond = '1')")
        return conn

    server = start_server(tmp_path, 0)
    try:
        server.run_script(f"""
            CREATE SOURCE ev (k STRING, v BIGINT, phase INT)
                WITH ({opts}, subscribe = '{topic_in}', startingOffsets = 'earliest', format = 'json');
            CREATE SINK counts WITH ({opts}, topic = '{topic_out}', format = 'json');
            CREATE FLOW c INTO counts CHECKPOINT INTERVAL '1 hour' WITH ('shuffle.partitions' = '2')
                AS SELECT k, count(*) AS n FROM ev GROUP BY k;
        """)
        broker.produce(topic_in, before)
        wait_for_exact_counts(server, broker, topic_out, before)

        # A failing statement after the replace: nothing of the block.
        with block(server) as conn:
            with pytest.raises(psycopg.Error):
                conn.execute(f"CREATE SOURCE {uid}_bad (a BIGINT) WITH (connector = 'nosuch')")
            conn.rollback()
        assert not replaced(server) and not extra_exists(server)
        assert {r[0]: r[2] for r in server.query("SHOW FLOWS")} == {"c": "running"}

        # COMMIT with a kill close behind it: all of the block or none.
        run = 1
        for delay_ms in (0, 5, 20, 80, 300, 2000):
            read_all_before(server)
            conn = block(server)
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
            server.proc.kill()
            server.proc.wait(timeout=10)
            t.join(timeout=30)
            assert not t.is_alive(), "COMMIT did not end when the server was killed"
            server = start_server(tmp_path, run)
            run += 1
            now_replaced = replaced(server)
            assert now_replaced == extra_exists(server), (
                f"kill at {delay_ms} ms: replace {now_replaced}, source {extra_exists(server)}")
            if done.is_set():
                assert now_replaced, "COMMIT answered, and a restart lost it"
            if now_replaced:
                print(f"the block was in after the kill {delay_ms} ms after COMMIT")
                break
        else:
            # Every kill came before the write: the block applies without one.
            read_all_before(server)
            with block(server) as conn:
                conn.commit()
            assert replaced(server) and extra_exists(server)

        broker.produce(topic_in, after)
        best, want_sums = wait_for_exact_counts(server, broker, topic_out, before + after)
        sums = {k: r["total"] for k, r in best.items() if "total" in r}
        assert sums == want_sums
    finally:
        code = server.stop()
        assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{server.log_tail()}"
