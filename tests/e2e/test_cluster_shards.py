"""Sharded stateful flows in a cluster (`'shards' = '3'`): the GROUP BY count,
the tumbling-window count and the interval join of cluster_flows.py each run
as three copies, `cnt`, `cnt#1` and `cnt#2` (and so on), each on the node
that holds its own slot (CREATE FLOW chose the copies' slots on the three
nodes, one each). The inputs have 4 partitions: copy i reads the partitions p with
p % 3 == i and sends each row, through the flow's exchange topic (3
partitions), to the copy that keeps its key, which reads only its own
partition of it. So each copy reads a part of the input and holds a part of
the keys, and together they hold every key once.

While keyed records stream in, the node that runs `cnt` (copy 0) is killed
with SIGKILL; the copies it ran move to the other nodes, each restored from
its own state copy in Kafka (its exchange position with it), and the killed
node comes back. The results end exact as in test_cluster_failover.py: at
least once, every count 1..n of every key and (window, key) and the true
join pairs, none above; exactly once, each seen once by a read_committed
consumer.

Apache Kafka only (RTSQL_KAFKA_BOOTSTRAP).
"""

import re

import psycopg
import pytest
from confluent_kafka.admin import AdminClient

from cluster import WAIT_S, flows, runner, wait_for
from cluster import start_node  # noqa: F401 (a fixture flows_cluster uses)
from cluster_flows import flows_cluster  # noqa: F401 (a fixture)
from test_crash_recovery import KEYS

SHARDS = 3
PARTITIONS = 4


def state_rows(fc, runners, flow):
    """The keys (rows) each copy of FLOW holds in its first stateful
    operator's state, as its runner's SHOW PROGRESS says."""
    out = {}
    for i in range(SHARDS):
        name = flow + (f"#{i}" if i else "")
        p = runners[name].progress(name)
        out[name] = p["stateOperators"][0]["numRowsTotal"]
    return out


@pytest.mark.parametrize("delivery", ["at-least-once", "exactly-once"])
def test_sharded_flows_divide_their_keys_over_the_nodes_and_survive_a_kill(flows_cluster,
                                                                           delivery):
    fc = flows_cluster("clsh", delivery, shards=SHARDS, partitions=PARTITIONS)
    fc.start_input()
    fc.wait_output()
    # One exchange topic per input of each flow's stateful stage (the join
    # has two), of one partition per copy.
    want = {"cnt": [SHARDS], "win": [SHARDS], "pay": [SHARDS, SHARDS]}
    wait_for("the flows' exchange topics", lambda: exchange_topics(fc) == want,
             timeout=WAIT_S * 2)

    # Each copy reads its share of the input's partitions, and its own
    # partition of the exchange topic.
    def reads_its_share():
        runners = fc.runners()
        for i, name in enumerate(copies_of("cnt")):
            sources = runners[name].progress(name)["sources"]
            read = {int(p) for parts in sources[0]["endOffset"].values() for p in parts}
            exchanged = {int(p) for parts in sources[1]["endOffset"].values() for p in parts}
            if read != {p for p in range(PARTITIONS) if p % SHARDS == i} or exchanged != {i}:
                return None
        return True
    wait_for("each copy of cnt reads its own partitions", reads_its_share, timeout=WAIT_S * 2)
    before = fc.checkpointed_runners()
    # CREATE FLOW put each flow's three copies on the three nodes, one each.
    for f in ("cnt", "win", "pay"):
        assert len({before[c].name for c in copies_of(f)}) == SHARDS, \
            {c: before[c].name for c in copies_of(f)}
    # Each node lists every copy, running here or remote on its runner.
    for node in fc.alive():
        listed = flows(node)
        for f in fc.flows:
            assert listed[f][0] in ("running", "remote"), (node.name, f, listed[f])

    # EXPLAIN FLOW on each node names each copy's slot and node, as the
    # copies' runners are (asked again while a slot may still move).
    def explained():
        runners = fc.runners()
        for node in fc.alive():
            text = "\n".join(r[0] for r in node.query("EXPLAIN FLOW cnt"))
            for i in range(SHARDS):
                name = "cnt" + (f"#{i}" if i else "")
                where = runners[name].name
                here = " (here)" if where == node.name else ""
                if not re.search(rf"copy {i} of {SHARDS} \({re.escape(name)}\): slot \d+, "
                                 rf"on node {where}{re.escape(here)}\n", text + "\n"):
                    return None
        return True
    wait_for("EXPLAIN FLOW names each copy's node", explained, timeout=WAIT_S * 2)

    # The keys are divided: every copy of cnt holds fewer than all of them,
    # and together exactly all (KEYS keys, all written within the first
    # seconds of input).
    wait_for("the copies of cnt hold every key once between them",
             lambda: sum(state_rows(fc, fc.runners(), "cnt").values()) == KEYS,
             timeout=WAIT_S * 2)
    held = state_rows(fc, fc.runners(), "cnt")
    assert all(0 < n < KEYS for n in held.values()), held

    # SHOW PROGRESS of the flow's name, on any node, answers for every copy
    # in its cluster object: one entry per copy, on the node that runs it,
    # and their input summed.
    def progress_of_every_copy():
        runners = fc.runners()
        for node in fc.alive():
            c = node.progress("cnt")["cluster"]
            listed = {x["flow"]: x["node"] for x in c["nodes"]}
            if listed != {f: runners[f].name for f in copies_of("cnt")}:
                return None
            if c["numInputRows"] != sum(x["numInputRows"] for x in c["nodes"]):
                return None
        return True
    wait_for("SHOW PROGRESS cnt lists every copy on its node", progress_of_every_copy,
             timeout=WAIT_S * 2)

    # Every copy the dead node ran restarts elsewhere from its own state
    # copy. The runners are asked again: the checks above took a while, and
    # a copy may have moved meanwhile.
    before = fc.checkpointed_runners()
    fc.fail_over_and_back(before, before["cnt"])


def copies_of(flow):
    return [flow + (f"#{i}" if i else "") for i in range(SHARDS)]


def exchange_topics(fc):
    """Each sharded flow's exchange topics' partition counts, by flow (told by
    the flow id of copy 0, as a node's EXPLAIN FLOW prints the topic)."""
    admin = AdminClient({"bootstrap.servers": fc.broker.bootstrap})
    topics = admin.list_topics(timeout=10).topics
    node = fc.alive()[0]
    out = {}
    for f in ("cnt", "win", "pay"):
        text = "\n".join(r[0] for r in node.query(f"EXPLAIN FLOW {f}"))
        names = sorted(set(re.findall(rf"_rtsql-{re.escape(fc.uid)}-exchange-[0-9a-f-]+-\d+",
                                      text)))
        out[f] = [len(topics[t].partitions) if t in topics else 0 for t in names]
    return out


def state_topics(fc):
    """The cluster's state copy topics (one per copy of a stateful flow)."""
    admin = AdminClient({"bootstrap.servers": fc.broker.bootstrap})
    return {t for t in admin.list_topics(timeout=10).topics
            if t.startswith(f"_rtsql-{fc.uid}-state-")}


def test_statements_on_a_sharded_flow_act_on_every_copy_from_any_node(flows_cluster):
    """STOP FLOW on one node stops every copy wherever it runs; START FLOW on
    another starts them all again; DROP FLOW on a third forgets every copy on
    every node and deletes each copy's state copy. A copy is not a flow of the
    catalog: it cannot be dropped on its own."""
    fc = flows_cluster("clsc", shards=SHARDS)
    a, b, c = (fc.nodes[n] for n in "abc")
    fc.runners()
    wait_for("a state copy topic for each copy of each flow",
             lambda: len(state_topics(fc)) == len(fc.flows), timeout=WAIT_S * 2)
    # EXPLAIN FLOW takes a copy's name.
    text = "\n".join(r[0] for r in b.query('EXPLAIN FLOW "cnt#1"'))
    assert "Flow cnt#1 INTO counts" in text, text

    cnt_exchange = set(re.findall(r"_rtsql-\S+-exchange-\S+-\d+",
                                  "\n".join(r[0] for r in b.query("EXPLAIN FLOW cnt"))))
    assert len(cnt_exchange) == 1, cnt_exchange
    # RESET STATE would take in again what the exchange holds: refused.
    with pytest.raises(psycopg.errors.FeatureNotSupported, match="exchange"):
        fc.runners()["cnt"].query("START FLOW cnt RESET STATE")

    b.query("STOP FLOW cnt")

    def all_stopped():
        for node in fc.alive():
            listed = flows(node)
            for f in copies_of("cnt"):
                state, reason = listed[f]
                if not (state == "stopped" or (state == "remote" and reason.startswith("stopped"))):
                    return None
        return True
    wait_for("every copy of cnt stopped on every node", all_stopped, timeout=WAIT_S * 2)
    # The other flows' copies were not touched.
    for f in copies_of("win") + copies_of("pay"):
        runner(f, *fc.alive(), timeout=WAIT_S * 2)

    c.query("START FLOW cnt")
    for f in copies_of("cnt"):
        runner(f, *fc.alive(), timeout=WAIT_S * 2)

    with pytest.raises(psycopg.errors.UndefinedObject):
        a.query('DROP FLOW "cnt#1"')
    a.query("DROP FLOW cnt")
    wait_for("no node lists a copy of cnt",
             lambda: all(not set(copies_of("cnt")) & set(flows(n)) for n in fc.alive()),
             timeout=WAIT_S * 2)
    wait_for("the copies' state copies deleted",
             lambda: len(state_topics(fc)) == len(fc.flows) - SHARDS, timeout=WAIT_S * 2)
    wait_for("its exchange topic deleted", lambda: not [
        t for t in AdminClient({"bootstrap.servers": fc.broker.bootstrap})
        .list_topics(timeout=10).topics if t in cnt_exchange], timeout=WAIT_S * 2)
    fc.stop_all()
