"""Two clusters on one Kafka, each with an exactly-once GROUP BY flow of the
same name (`cnt`), each on its own topics. A flow's Kafka ids carry its
cluster's name (`rtsql-<cluster>-cnt`: its source group, its transactional
id, its epoch group; connectors/kafka/flow_ids.h), so neither flow fences the
other: both run their first run throughout while records stream into both,
and a read_committed consumer of each sink sees every count of every key
once (1, 2, ..., n). With shared ids each start of one would fence the
other's transactions, failing its run.

Apache Kafka only: the embedded broker refuses exactly-once.
"""

import json
from collections import defaultdict

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from cluster import start_node, wait_for  # noqa: F401 (start_node is a fixture)
from conftest import unique

KEYS = 5
BATCHES = 6


def test_same_named_flows_of_two_clusters_do_not_fence_each_other(broker, start_node):
    if broker.name == "embedded":
        pytest.skip("exactly-once needs Apache Kafka (RTSQL_KAFKA_BOOTSTRAP)")
    clusters = [unique("clida"), unique("clidb")]
    nodes = []
    opts = broker.options()
    for uid, name in zip(clusters, "xy"):
        for t in ("ev", "counts"):
            broker.create_topic(f"{uid}_{t}")
        node = start_node(uid, broker, name)
        node.run_script(f"""
            CREATE SOURCE ev (k STRING) WITH ({opts}, subscribe = '{uid}_ev',
                startingOffsets = 'earliest', format = 'json');
            CREATE SINK counts WITH ({opts}, topic = '{uid}_counts', format = 'json');
            CREATE FLOW cnt INTO counts CHECKPOINT INTERVAL '1 second'
                WITH ('delivery' = 'exactly-once')
                AS SELECT k, count(*) AS n FROM ev GROUP BY k;
        """)
        nodes.append(node)
    runs = [wait_for(f"cnt runs on {n.name}",
                     lambda n=n: n.progress("cnt")["status"]["state"] == "running"
                     and n.progress("cnt")["runId"]) for n in nodes]

    def counts(uid):
        out = defaultdict(list)
        for m in broker.consume_to_end(f"{uid}_counts", timeout=10):
            r = json.loads(m.value())
            out[r["k"]].append(r["n"])
        return out

    # Batches into both clusters' topics, each once both flows committed the
    # one before, so that their transactions interleave.
    for b in range(1, BATCHES + 1):
        for uid in clusters:
            broker.produce(f"{uid}_ev", [json.dumps({"k": f"k{i}"}) for i in range(KEYS)])
        for uid in clusters:
            wait_for(f"{uid} counts batch {b}",
                     lambda uid=uid, b=b: all(max(v, default=0) >= b
                                              for v in [counts(uid)[f"k{i}"]
                                                        for i in range(KEYS)]))
    for uid, node, run in zip(clusters, nodes, runs):
        got = counts(uid)
        assert {k: v for k, v in got.items()} == {f"k{i}": list(range(1, BATCHES + 1))
                                                   for i in range(KEYS)}, (
            f"{uid}: each count once, in order\n{node.log_tail(20)}")
        p = node.progress("cnt")
        assert p["runId"] == run and p["status"]["state"] == "running", (
            f"{uid}: cnt ran again (fenced?): {p['status']}\n{node.log_tail(20)}")
        assert "fenced" not in node.log_path.read_text(errors="replace").lower(), node.log_tail(20)


def test_a_cluster_flow_goes_on_from_its_unscoped_exactly_once_ids(broker, start_node):
    """A flow of a cluster whose scoped ids hold nothing yet (it ran before its
    ids named the cluster) first fences its unscoped transactional id
    `rtsql-<flow>`, aborting the transaction a run under it left open, and
    goes on after the epoch its unscoped epoch group recorded."""
    if broker.name == "embedded":
        pytest.skip("exactly-once needs Apache Kafka (RTSQL_KAFKA_BOOTSTRAP)")
    uid = unique("clidl")
    flow = f"cnt_{uid.split('_')[-1]}"
    for t in ("ev", "counts"):
        broker.create_topic(f"{uid}_{t}")
    sink_topic = f"{uid}_counts"
    # The run before: epoch 40 committed, and a transaction left open.
    zombie = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": f"rtsql-{flow}",
                       "transaction.timeout.ms": 300000})
    zombie.init_transactions(30)
    zombie.begin_transaction()
    zombie.produce(sink_topic, json.dumps({"k": "zombie", "n": 99}).encode())
    zombie.flush(30)
    marker = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"rtsql-{flow}-epochs",
                       "enable.auto.commit": False})
    marker.commit(offsets=[TopicPartition(sink_topic, 0, 41)], asynchronous=False)
    marker.close()

    node = start_node(uid, broker, "z")
    opts = broker.options()
    node.run_script(f"""
        CREATE SOURCE ev (k STRING) WITH ({opts}, subscribe = '{uid}_ev',
            startingOffsets = 'earliest', format = 'json');
        CREATE SINK counts WITH ({opts}, topic = '{sink_topic}', format = 'json');
        CREATE FLOW {flow} INTO counts CHECKPOINT INTERVAL '1 second'
            WITH ('delivery' = 'exactly-once')
            AS SELECT k, count(*) AS n FROM ev GROUP BY k;
    """)
    broker.produce(f"{uid}_ev", [json.dumps({"k": f"k{i}"}) for i in range(KEYS)])
    # The open transaction no longer holds read_committed readers back: the
    # counts are seen, the zombie's row is not.
    rows = wait_for("the flow's counts", lambda: [
        json.loads(m.value()) for m in broker.consume_to_end(sink_topic, timeout=5)])
    assert all(r["k"] != "zombie" for r in rows), rows
    wait_for("every key counted", lambda: {json.loads(m.value())["k"] for m in
                                           broker.consume_to_end(sink_topic, timeout=5)}
             == {f"k{i}" for i in range(KEYS)})
    with pytest.raises(KafkaException):
        zombie.commit_transaction(30)
    # Epochs go on after the one recorded under the unscoped ids.
    p = wait_for("a checkpoint", lambda: node.progress(flow).get("checkpoint"))
    assert p["epoch"] > 40, p
