"""A transaction block of DDL (`BEGIN; ... COMMIT;`) on any node of a 3-node
cluster: COMMIT writes the block to the catalog topic as one block record
and its changes in one transaction, and every other node applies the block
whole (its log says so), never one object of it without the others.

- A block on a node that does not run the flow creates a sink and a flow over
  it; every node shows both, one node runs the flow, and its counts per key
  are exact against DuckDB.
- A block that fails at a statement, and one rolled back, change nothing on
  any node.
- A block that replaces a flow another node runs is refused (0A000).
- A block that drops the flow and its sink drops both everywhere.

The broker outlives every node: the embedded broker of an rtsqld outside the
cluster, and Apache Kafka too when RTSQL_KAFKA_BOOTSTRAP is set.
"""

import json

import duckdb
import psycopg

from cluster import WAIT_S, flows, runner, start_node, wait_for  # noqa: F401
from conftest import unique

KEYS = 5
ROWS = 300


def run_block(node, statements, attempts=50):
    """Runs STATEMENTS between BEGIN and COMMIT on NODE in one session, the
    whole block again while COMMIT fails with 40001 (another node's change
    not applied there yet), at most ATTEMPTS times."""
    for _ in range(attempts):
        with node.connect() as conn:
            conn.execute("BEGIN")
            for sql in statements:
                conn.execute(sql)
            try:
                conn.execute("COMMIT")
                return
            except psycopg.Error as e:
                if e.sqlstate != "40001":
                    raise
    raise AssertionError(f"block on {node.name}: 40001 {attempts} times")


def sinks(node):
    return sorted(r[0] for r in node.query("SHOW SINKS"))


def highest_counts(broker, topic):
    best = {}
    for m in broker.consume_to_end(topic, timeout=3):
        r = json.loads(m.value())
        best[r["k"]] = max(best.get(r["k"], 0), r["c"])
    return best


def test_ddl_block_on_any_node_of_three(broker, start_node):
    uid = unique("cblk")
    for t in (f"{uid}_in", f"{uid}_out"):
        broker.create_topic(t)
    a = start_node(uid, broker, "a")
    b = start_node(uid, broker, "b")
    c = start_node(uid, broker, "c")
    nodes = (a, b, c)
    opts = broker.options()
    a.query(f"CREATE SOURCE ev (k STRING, n BIGINT) WITH ({opts}, subscribe = '{uid}_in', "
            "startingOffsets = 'earliest', format = 'json')")
    wait_for("every node has the source",
             lambda: all("ev" in [r[0] for r in n.query("SHOW SOURCES")] for n in nodes))

    # The block, on b: a sink and the flow that writes it.
    run_block(b, [
        f"CREATE SINK out WITH ({opts}, topic = '{uid}_out', format = 'json')",
        "CREATE FLOW cnt INTO out AS SELECT k, count(*) AS c FROM ev GROUP BY k",
    ])
    wait_for("every node has the sink and the flow",
             lambda: all(sinks(n) == ["out"] and "cnt" in flows(n) for n in nodes))
    runner("cnt", *nodes)
    # The nodes that did not write it applied it as one block.
    for n in (a, c):
        wait_for(f"{n.name} logs the block",
                 lambda n=n: "applied a block of 2 changes" in n.log_tail(400))

    rows = [{"k": f"k{i % KEYS}", "n": i} for i in range(ROWS)]
    broker.produce(f"{uid}_in", rows)
    db = duckdb.connect()
    db.execute("CREATE TABLE input (k VARCHAR, n BIGINT)")
    db.executemany("INSERT INTO input VALUES (?, ?)", [(r["k"], r["n"]) for r in rows])
    want = dict(db.execute("SELECT k, count(*) FROM input GROUP BY k").fetchall())
    wait_for("the counts reach DuckDB's",
             lambda: highest_counts(broker, f"{uid}_out") == want, timeout=WAIT_S * 2)

    # A block that fails at a statement changes nothing, on any node.
    with c.connect() as conn:
        conn.execute("BEGIN")
        conn.execute(f"CREATE SINK other WITH ({opts}, topic = '{uid}_out', format = 'json')")
        try:
            conn.execute("CREATE FLOW bad INTO other AS SELECT k FROM no_such_source")
            raise AssertionError("a flow over a missing source was created")
        except psycopg.Error as e:
            assert e.sqlstate == "42P01", e
        conn.execute("COMMIT")
    # And one rolled back.
    with a.connect() as conn:
        conn.execute("BEGIN")
        conn.execute(f"CREATE SINK other WITH ({opts}, topic = '{uid}_out', format = 'json')")
        conn.execute("ROLLBACK")
    # A later change reaches every node after anything those blocks wrote.
    a.query("CREATE TABLE marker (k STRING)")
    wait_for("every node has the marker",
             lambda: all("marker" in [r[0] for r in n.query("SHOW TABLES")] for n in nodes))
    for n in nodes:
        assert sinks(n) == ["out"], (n.name, sinks(n))
        assert "bad" not in flows(n)

    # A block replaces only flows that run on its node: the replace of
    # another node's flow is refused in it (run on its own, it is carried out
    # by the flow's node: test_cluster_replace_anywhere.py).
    holder = runner("cnt", *nodes)
    other = next(n for n in nodes if n is not holder)
    with other.connect() as conn:
        conn.execute("BEGIN")
        try:
            conn.execute("CREATE OR REPLACE FLOW cnt INTO out AS "
                         "SELECT k, count(*) AS c FROM ev WHERE n >= 0 GROUP BY k")
            raise AssertionError("a block replaced another node's flow")
        except psycopg.Error as e:
            assert e.sqlstate == "0A000", e
            assert "runs on another node" in str(e), e
        conn.execute("ROLLBACK")

    # A block that drops the flow and its sink, on a node that does not run it.
    run_block(other, ["DROP FLOW cnt", "DROP SINK out"])
    wait_for("no node has the flow or the sink",
             lambda: all(sinks(n) == [] and "cnt" not in flows(n) for n in nodes))
