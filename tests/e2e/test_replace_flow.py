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
import time

import duckdb

from conftest import Server, unique, wait_for

KEYS = 12
BEFORE = 600
AFTER = 600
CONVERGE_TIMEOUT_S = 120


def start_server(tmp, run):
    s = Server(tmp)
    s.log_path = tmp / f"rtsqld.{run}.log"
    return s.start()


def highest_rows(broker, topic):
    """The row with the highest n per key: delivery is at-least-once, so a
    row may be written again, never with a higher count than the truth."""
    best = {}
    for m in broker.consume_to_end(topic, timeout=3):
        r = json.loads(m.value())
        if r["k"] not in best or r["n"] >= best[r["k"]]["n"]:
            best[r["k"]] = r
    return best


def test_replace_keeps_group_by_state_across_kill_9(broker, tmp_path):
    uid = unique("replace")
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    broker.create_topic(topic_in)
    broker.create_topic(topic_out)
    opts = broker.options()
    rng = random.Random(46)
    before = [{"k": f"k{rng.randrange(KEYS)}", "v": rng.randrange(0, 100), "phase": 0}
              for _ in range(BEFORE)]
    after = [{"k": f"k{rng.randrange(KEYS)}", "v": rng.randrange(-50, 100), "phase": 1}
             for _ in range(AFTER)]

    db = duckdb.connect()
    db.execute("CREATE TABLE input (k VARCHAR, v BIGINT, phase INT)")

    def truth(rows):
        db.execute("DELETE FROM input")
        db.executemany("INSERT INTO input VALUES (?, ?, ?)",
                       [(r["k"], r["v"], r["phase"]) for r in rows])
        counts = dict(db.execute(
            "SELECT k, count(*) FROM input WHERE v >= 0 GROUP BY k").fetchall())
        sums = dict(db.execute(
            "SELECT k, sum(v) FROM input WHERE v >= 0 AND phase = 1 GROUP BY k").fetchall())
        return counts, sums

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
        want_counts, want_sums = truth(before + after)
        deadline = time.monotonic() + CONVERGE_TIMEOUT_S
        while True:
            best = highest_rows(broker, topic_out)
            counts = {k: r["n"] for k, r in best.items()}
            over = {k: (n, want_counts.get(k)) for k, n in counts.items() if n > want_counts.get(k, 0)}
            assert not over, f"records counted twice: {over}"
            if counts == want_counts:
                break
            assert time.monotonic() < deadline, (
                f"counts {counts} did not reach {want_counts}\n{server.log_tail()}")
            time.sleep(1)
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
