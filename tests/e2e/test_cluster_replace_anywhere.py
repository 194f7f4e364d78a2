"""CREATE OR REPLACE FLOW issued on a node of a 3-node cluster that does not
run the flow (server/remote_replace.h): checked there (EXPLAIN prints the
state plan, an incompatible change is refused with its reason), carried out
by the node that runs the flow at an epoch boundary, its state kept: the
count per key after the replace is DuckDB's over all the input the queries
admit, the new sum DuckDB's over what came after (nothing lost, nothing
counted twice).

Then the node that runs the flow is killed with SIGKILL and another replace
is issued at once on a node that survives: the statement waits until the
cluster has given the flow to another node (--node-timeout), which restores
the flow's state and carries the replace out; the counts stay exact.

The broker outlives every node: the embedded broker of an rtsqld outside the
cluster, and Apache Kafka too when RTSQL_KAFKA_BOOTSTRAP is set.
"""

import json
import random
import time

import duckdb
import psycopg

from cluster import WAIT_S, runner, run_again_on_40001, start_node, wait_for  # noqa: F401
from conftest import unique

KEYS = 6
CONVERGE_TIMEOUT_S = 180

FIRST = "SELECT k, count(*) AS n FROM ev GROUP BY k"
SECOND = "SELECT k, count(*) AS n, sum(v) AS total FROM ev WHERE v >= 0 GROUP BY k"
THIRD = ("SELECT k, count(*) AS n, sum(v) AS total, max(v) AS top FROM ev WHERE v >= 0 "
         "GROUP BY k")


def flow_sql(query, replace=True):
    head = "CREATE OR REPLACE FLOW" if replace else "CREATE FLOW"
    return f"{head} cnt INTO out AS {query}"


def highest_rows(broker, topic):
    """The row with the highest n per key (delivery is at least once)."""
    best = {}
    for m in broker.consume_to_end(topic, timeout=3):
        r = json.loads(m.value())
        if r["k"] not in best or r["n"] >= best[r["k"]]["n"]:
            best[r["k"]] = r
    return best


def truth(rows, query):
    db = duckdb.connect()
    db.execute("CREATE TABLE ev (k VARCHAR, v BIGINT, phase INT)")
    db.executemany("INSERT INTO ev VALUES (?, ?, ?)", [(r["k"], r["v"], r["phase"]) for r in rows])
    return {r[0]: r[1:] for r in db.execute(query).fetchall()}


def wait_exact(nodes, broker, topic, rows):
    """Waits until the highest count per key is DuckDB's over ROWS (every row
    before phase 1 is admitted by every query), failing at once on a count
    above it; returns the rows written."""
    want = {k: v[0] for k, v in truth(rows, "SELECT k, count(*) FROM ev WHERE v >= 0 "
                                            "GROUP BY k").items()}
    deadline = time.monotonic() + CONVERGE_TIMEOUT_S
    while True:
        best = highest_rows(broker, topic)
        counts = {k: r["n"] for k, r in best.items()}
        over = {k: (n, want.get(k)) for k, n in counts.items() if n > want.get(k, 0)}
        assert not over, f"records counted twice: {over}"
        if counts == want:
            return best
        if time.monotonic() > deadline:
            logs = "\n".join(f"--- {n.name}\n{n.log_tail(30)}" for n in nodes)
            raise AssertionError(f"counts {counts} did not reach {want}\n{logs}")
        time.sleep(1)


def rows_of(rng, phase, n, low):
    return [{"k": f"k{rng.randrange(KEYS)}", "v": rng.randrange(low, 100), "phase": phase}
            for _ in range(n)]


def test_replace_from_a_node_that_does_not_run_the_flow(broker, start_node):
    uid = unique("crep")
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    for t in (topic_in, topic_out):
        broker.create_topic(t)
    nodes = [start_node(uid, broker, name) for name in ("a", "b", "c")]
    a = nodes[0]
    opts = broker.options()
    a.run_script(f"""
        CREATE SOURCE ev (k STRING, v BIGINT, phase INT)
            WITH ({opts}, subscribe = '{topic_in}', startingOffsets = 'earliest', format = 'json');
        CREATE SINK out WITH ({opts}, topic = '{topic_out}', format = 'json');
    """)
    wait_for("every node has the sink",
             lambda: all("out" in [r[0] for r in n.query("SHOW SINKS")] for n in nodes))
    run_again_on_40001(a, flow_sql(FIRST, replace=False))
    holder = runner("cnt", *nodes)
    other = next(n for n in nodes if n is not holder)

    rng = random.Random(46)
    rows = rows_of(rng, 0, 400, 0)
    broker.produce(topic_in, rows)
    wait_exact(nodes, broker, topic_out, rows)

    # Checked on the node that does not run it: the state plan, and a refusal.
    plan = [r[0] for r in other.query("EXPLAIN " + flow_sql(SECOND))]
    assert any("state kept" in line for line in plan), plan
    try:
        other.query(flow_sql("SELECT v AS k, count(*) AS n FROM ev GROUP BY v"))
        raise AssertionError("a replace with another GROUP BY key was not refused")
    except psycopg.Error as e:
        assert e.sqlstate == "55000", e
        assert "GROUP BY key changed" in str(e), e

    # Carried out by the flow's node; the statement answers once it is.
    run_again_on_40001(other, flow_sql(SECOND))
    wait_for("every node has the new query",
             lambda: all("sum(v) AS total" in n.query("SHOW CREATE FLOW cnt")[0][0]
                         for n in nodes))
    assert "replace request" in holder.log_tail(400)
    after = rows_of(rng, 1, 400, -50)
    broker.produce(topic_in, after)
    best = wait_exact(nodes, broker, topic_out, rows + after)
    want_sums = {k: v[0] for k, v in truth(rows + after, "SELECT k, sum(v) FROM ev WHERE v >= 0 "
                                                         "AND phase = 1 GROUP BY k").items()}
    assert {k: r["total"] for k, r in best.items() if "total" in r} == want_sums
    rows += after

    # The flow's node is killed; a replace issued at once on another node
    # waits until a node that survives runs the flow, which carries it out.
    holder = runner("cnt", *nodes)
    holder.kill()
    survivors = [n for n in nodes if n is not holder]
    run_again_on_40001(survivors[0], flow_sql(THIRD))
    runner("cnt", *survivors, timeout=WAIT_S * 2)
    for n in survivors:
        assert "max(v) AS top" in n.query("SHOW CREATE FLOW cnt")[0][0]
    later = rows_of(rng, 2, 300, -50)
    broker.produce(topic_in, later)
    best = wait_exact(survivors, broker, topic_out, rows + later)
    # max(v) starts empty at the replace and covers every row the new plan
    # reads: all of phase 2, and those rows before it that the node which
    # took the flow over read again after its restored checkpoint but after
    # the replace too (which ones depends on that checkpoint, so only the
    # bounds are exact).
    low = {k: v[0] for k, v in truth(rows + later, "SELECT k, max(v) FROM ev WHERE v >= 0 "
                                                    "AND phase = 2 GROUP BY k").items()}
    high = {k: v[0] for k, v in truth(rows + later, "SELECT k, max(v) FROM ev WHERE v >= 0 "
                                                     "GROUP BY k").items()}
    tops = {k: r["top"] for k, r in best.items() if r.get("top") is not None}
    for k in low:
        assert low[k] <= tops[k] <= high[k], (k, tops[k], low[k], high[k])
