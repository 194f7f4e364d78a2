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
