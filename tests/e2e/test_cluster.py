"""A cluster of rtsqld (`--cluster NAME --kafka BOOTSTRAP`): one catalog for
every node, kept in the cluster's Kafka topic.

- DDL on any node is seen by every node, and a node that starts later replays
  it; a flow runs on one node, the one the cluster's group gave its slot to,
  and only there (its output is not duplicated), while the others show it as
  remote on that node; STOP, START and DROP from any node reach it.
- Statements run at the same moment on two nodes end with the same catalog on
  both; on Apache Kafka, whose transactions fence, at most one of two clashing
  CREATEs succeeds and the other fails with 40001 or 42710. (The embedded
  broker shows aborted transactions' records to their readers, so there a
  statement that failed with 40001 may still reach the catalog: on every node
  alike, which is what is checked there.)
(test_cluster_restart.py kills the node that runs a flow.)

The broker outlives every node: the embedded broker of an rtsqld outside the
cluster, and Apache Kafka too when RTSQL_KAFKA_BOOTSTRAP is set.
"""

import subprocess
import threading

import psycopg
import pytest

from cluster import (WAIT_S, Node, flows, readers, run_again_on_40001, running_anywhere,
                     sources, start_node, stop_all, two_nodes_reading_a_topic, wait_for)
from conftest import RTSQLD, unique

def test_catalog_is_shared_and_each_flow_runs_on_one_node(broker, start_node):
    uid, a, b = two_nodes_reading_a_topic(start_node, broker, "cl", "out")
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    a.run_script("""
        CREATE TABLE names (k STRING, name STRING);
        INSERT INTO names VALUES ('k0', 'zero'), ('k1', 'one');
    """)
    # b sees a's statements, in order: the table with both rows.
    wait_for("b sees the source", lambda: [s for s in sources(b) if s[0] == "ev"])
    wait_for("b sees the table's rows",
             lambda: [r for r in b.query("SHOW TABLES") if r[0] == "names" and str(r[2]) == "2"])

    # A flow created on b runs where the group says: whole on one node (the
    # other shows it as remote there) or, over a topic of several partitions
    # (the embedded broker makes 4), each partition read on one node.
    run_again_on_40001(b, "CREATE FLOW f INTO out AS "
                       "SELECT e.k, e.n, t.name FROM ev e LEFT JOIN names t ON e.k = t.k")
    readers("f", a, b)

    n = 200
    broker.produce(topic_in, [{"k": f"k{i % 3}", "n": i} for i in range(n)])
    got = broker.consume_json(topic_out, n=n, timeout=WAIT_S, grace=3)
    # Each record read once, joined with the table's rows.
    assert sorted(r["n"] for r in got) == list(range(n)), f"{len(got)} records"
    names = {r["k"]: r["name"] for r in got}
    assert names == {"k0": "zero", "k1": "one", "k2": None}, names

    # A node that starts later replays the whole catalog.
    c = start_node(uid, broker, "c")
    assert [s for s in sources(c) if s[0] == "ev"]
    assert [r for r in c.query("SHOW TABLES") if r[0] == "names" and str(r[2]) == "2"]
    # c takes a share of the slots: f may move, and still runs once.
    where = readers("f", a, b, c)
    # STOP, START and DROP from nodes that do not run the flow reach it (from
    # any two, when every node reads a share of it).
    others = [n for n in (a, b, c) if n.name not in where]
    if len(others) < 2:
        others = [a, b]

    run_again_on_40001(others[0], "STOP FLOW f")
    wait_for("the runners stop f", lambda: not running_anywhere("f", a, b, c))
    run_again_on_40001(others[1], "START FLOW f")
    readers("f", a, b, c)
    # One right after the other from two nodes: the later statement wins on
    # the nodes that run the flow, even when the node it was run on had not
    # applied the earlier one yet (that node answers 40001: run it again).
    for _ in range(4):
        run_again_on_40001(others[0], "STOP FLOW f")
        run_again_on_40001(others[1], "START FLOW f")
        readers("f", a, b, c)
    run_again_on_40001(a, "INSERT INTO names VALUES ('k2', 'two')")
    wait_for("c gets the new row",
             lambda: [r for r in c.query("SHOW TABLES") if r[0] == "names" and str(r[2]) == "3"])
    run_again_on_40001(others[0], "DROP FLOW f")
    wait_for("b drops f", lambda: "f" not in flows(b))
    wait_for("c drops f", lambda: "f" not in flows(c))
    run_again_on_40001(c, "DROP SOURCE ev")
    wait_for("a drops ev", lambda: not [s for s in sources(a) if s[0] == "ev"])
    wait_for("b drops ev", lambda: not [s for s in sources(b) if s[0] == "ev"])
    stop_all(a, b, c)

    # A node restarted on its data directory takes the catalog from the topic.
    b2 = start_node(uid, broker, "b")
    assert "f" not in flows(b2) and not [s for s in sources(b2) if s[0] == "ev"]
    assert [r for r in b2.query("SHOW TABLES") if r[0] == "names" and str(r[2]) == "3"]
    stop_all(b2)


def test_statements_at_the_same_moment_leave_one_catalog(broker, start_node):
    uid = unique("clc")
    a = start_node(uid, broker, "a")
    b = start_node(uid, broker, "b")
    rounds = 6
    outcomes = []
    for i in range(rounds):
        results = {}

        def create(node, rate):
            try:
                node.query(f"CREATE SOURCE x{i} (k BIGINT) WITH (connector = 'datagen', "
                           f"'rows-per-second' = '{rate}')")
                results[node.name] = "ok"
            except psycopg.Error as e:
                results[node.name] = e.sqlstate

        threads = [threading.Thread(target=create, args=(a, 1)),
                   threading.Thread(target=create, args=(b, 2))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=WAIT_S)
        assert len(results) == 2, results
        assert set(results.values()) <= {"ok", "40001", "42710"}, results
        outcomes.append(results)
    # Every node ends with the same catalog, and a statement nobody clashes
    # with still reaches the other node (so agreement is not that of two
    # empty catalogs).
    run_again_on_40001(a, "CREATE SOURCE settled (k BIGINT) WITH (connector = 'datagen')")
    wait_for("b sees the settled source", lambda: "settled" in dict(sources(b)))
    wait_for("both nodes hold the same sources", lambda: sources(a) == sources(b))
    if broker.name == "real":
        # Kafka's transactions fence the second writer: at most one CREATE of
        # each pair succeeds (both fail, and the source is not there, when
        # each fenced the other), and the catalog holds its definition.
        for i, results in enumerate(outcomes):
            oks = list(results.values()).count("ok")
            assert oks <= 1, (i, outcomes)
            assert (f"x{i}" in dict(sources(a))) == (oks == 1), (i, outcomes, sources(a))
            if oks == 0:
                continue
            winner = a if results["a"] == "ok" else b
            rate = "1" if winner is a else "2"
            assert f"'rows-per-second' = '{rate}'" in dict(sources(a))[f"x{i}"], (i, sources(a))
    stop_all(a, b)


def test_a_second_node_with_the_same_name_fences_the_first(broker, start_node, tmp_path):
    """The group's static membership: a node started under a name a live node
    already has takes the slots, and the first one says why it runs nothing.
    (The embedded broker does not keep instance ids: Apache Kafka only.)"""
    if broker.name != "real":
        pytest.skip("static membership needs Apache Kafka")
    uid = unique("cld")
    first = start_node(uid, broker, "x")
    home = tmp_path / "x-again"
    home.mkdir()
    second = Node(home, uid, broker, "x").start()
    try:
        wait_for("the first node says it was fenced",
                 lambda: "left the cluster's group and runs no flow any more"
                 in first.log_path.read_text(errors="replace"))
        assert "another node running under the name \"x\"" in first.log_path.read_text()
        wait_for("the second node holds the slots",
                 lambda: "holds 0," in second.log_path.read_text(errors="replace"))
    finally:
        second.kill()


def test_command_line_refusals(tmp_path):
    """A cluster needs both --cluster and --kafka, names Kafka can carry (in a
    topic name, in the group's instance id), a node timeout the group can keep
    (6 s at least), and a Kafka that answers (port 9 on loopback: nothing
    listens); each refusal says why."""
    cases = [
        (["--cluster", "c"], 2, "--cluster and --kafka go together"),
        (["--kafka", "127.0.0.1:9"], 2, "--cluster and --kafka go together"),
        (["--node-name", "a"], 2, "give --cluster and --kafka too"),
        (["--cluster", "c", "--kafka", "embedded"], 2, "--kafka embedded needs --embedded-kafka"),
        (["--cluster", "a/b", "--kafka", "127.0.0.1:9"], 1, "invalid cluster name 'a/b'"),
        (["--cluster", "c", "--kafka", "127.0.0.1:9", "--node-name", "x:1"], 2,
         "a node's name is 1 to 200 letters"),
        (["--cluster", "c", "--kafka", "127.0.0.1:9", "--node-timeout", "2"], 105,
         "--node-timeout: Value 2 not in range"),
        (["--cluster", "c", "--kafka", "127.0.0.1:9"], 1, "fatal: cannot reach Kafka at 127.0.0.1:9"),
    ]
    for args, code, message in cases:
        p = subprocess.run([str(RTSQLD), "--port", "0", "--data-dir", str(tmp_path / "d"), *args],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == code, (args, p.returncode, p.stderr)
        assert message in p.stderr, (args, p.stderr)


def test_a_flow_over_a_materialized_view_is_refused_in_a_cluster(broker, start_node):
    """A flow reads a view's changes from the view's checkpoints on its own
    node; a cluster could place it on another node, where it would read
    nothing, so a cluster refuses it with 0A000 and the catalog stays as it
    was."""
    uid = unique("clv")
    a = start_node(uid, broker, "a")
    run_again_on_40001(a, "CREATE SOURCE ev (k BIGINT) WITH (connector = 'datagen', "
                          "'rows-per-second' = '5', 'fields.k.max' = '3')")
    run_again_on_40001(a, "CREATE MATERIALIZED VIEW per_k AS SELECT k, count(*) AS n "
                          "FROM ev GROUP BY k")
    with pytest.raises(psycopg.errors.FeatureNotSupported, match="materialized view"):
        a.query("CREATE MATERIALIZED VIEW per_n AS SELECT n, count(*) AS c FROM per_k GROUP BY n")
    assert "per_n" not in flows(a), flows(a)
    stop_all(a)
