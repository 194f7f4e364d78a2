"""A stateless flow spread over the nodes of a cluster: its source's partitions
belong to slots of their own, so every node reads the partitions of the
slots it holds, and SHOW FLOWS on each says which. Every partition is read on
exactly one node; when a node is killed with SIGKILL, the others take its
partitions over (after the group's session timeout) and go on from the
offsets it committed, and when it comes back it takes a share again. Every
record reaches the sink at least once throughout.

Apache Kafka only: the source topic needs as many partitions as the cluster
has slots (16), which the embedded broker of another rtsqld does not create on
request.
"""

import json
import re

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from cluster import (WAIT_S, placement, run_again_on_40001, running_anywhere,  # noqa: F401
                     start_node, stop_all, wait_for)
from conftest import unique

PARTITIONS = 16  # one per slot of the cluster: every node that holds slots reads some


def produce(broker, topic, first, count):
    """Records n = first .. first + count - 1, record n to partition n % 16."""
    broker.produce(topic, [{"k": f"k{n % 7}", "n": n} for n in range(first, first + count)],
                   partition=lambda r: r["n"] % PARTITIONS)



def test_a_stateless_flow_reads_its_partitions_on_every_node(broker, start_node):
    if broker.name == "embedded":
        pytest.skip("needs a topic of 16 partitions: Apache Kafka (RTSQL_KAFKA_BOOTSTRAP)")
    uid = unique("spread")
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for f in admin.create_topics([NewTopic(topic_in, PARTITIONS, 1),
                                  NewTopic(topic_out, 1, 1)]).values():
        f.result(timeout=30)

    nodes = {name: start_node(uid, broker, name) for name in "abc"}
    a = nodes["a"]
    opts = broker.options()
    a.run_script(f"""
        CREATE SOURCE ev (k STRING, n BIGINT)
            WITH ({opts}, subscribe = '{topic_in}', startingOffsets = 'earliest', format = 'json');
        CREATE SINK out WITH ({opts}, topic = '{topic_out}', format = 'json');
    """)
    run_again_on_40001(a, "CREATE FLOW cp INTO out CHECKPOINT INTERVAL '1 second' "
                       "AS SELECT k, n FROM ev")
    # Each node holds slots, so each reads some of the partitions.
    got = wait_for("the partitions spread over the three nodes",
                   lambda: (s := placement("cp", nodes.values())) and len(s) == 3 and s)
    assert sorted(p for ps in got.values() for p in ps) == list(range(PARTITIONS)), got

    def delivered(upto):
        def check():
            seen = {json.loads(m.value())["n"] for m in broker.consume_to_end(topic_out, timeout=5)}
            missing = set(range(upto)) - seen
            return not missing or None
        return check

    produce(broker, topic_in, 0, 320)
    wait_for("every record of every partition in the sink", delivered(320))

    # SHOW PROGRESS on any node covers every node's share: the per-node
    # breakdown lists the partitions each reads, this node's first.
    def covers_every_share(node):
        def check():
            p = node.progress("cp")
            listed = p["cluster"]["nodes"]
            shares = {x["node"]: set(x["partitions"].get(topic_in, [])) for x in listed}
            return (shares == got and listed[0]["node"] == node.name and listed[0]["here"]
                    and p["cluster"]["numOutputRows"] == sum(x["numOutputRows"] for x in listed)
                    and p)
        return check
    for name, node in nodes.items():
        wait_for(f"SHOW PROGRESS cp on {name} covering every node's share", covers_every_share(node))

    # EXPLAIN FLOW on any node says which node reads which partitions.
    def explained(node):
        def check():
            text = "\n".join(r[0] for r in node.query("EXPLAIN FLOW cp"))
            shown = {m.group(1): {int(p) for p in m.group(2).split(", ")}
                     for m in re.finditer(r"node (\w+)(?: \(here\))?: partitions ([0-9, ]+)", text)}
            return shown == got and f"node {node.name} (here): partitions" in text and text
        return check
    for name, node in nodes.items():
        wait_for(f"EXPLAIN FLOW cp on {name} naming every node's partitions", explained(node))

    # The node reading the most partitions is killed: the others take them.
    victim_name = max(got, key=lambda name: len(got[name]))
    victim = nodes.pop(victim_name)
    victim.kill()
    produce(broker, topic_in, 320, 320)
    wait_for("the survivors read every partition",
             lambda: (s := placement("cp", nodes.values())) and len(s) == 2 and s,
             timeout=WAIT_S * 2)
    wait_for("every record in the sink after the kill", delivered(640), timeout=WAIT_S * 2)
    # A survivor took more partitions: it stopped its share and started again on
    # the larger one.
    assert any("flow \"cp\" stops here: its share of the source's partitions changed"
               in n.log_path.read_text() for n in nodes.values())

    # The killed node comes back under its name and takes a share again.
    nodes[victim_name] = start_node(uid, broker, victim_name)
    wait_for("the partitions spread over the three nodes again",
             lambda: (s := placement("cp", nodes.values())) and len(s) == 3 and s,
             timeout=WAIT_S * 2)
    produce(broker, topic_in, 640, 320)
    wait_for("every record in the sink after the restart", delivered(960), timeout=WAIT_S * 2)

    # STOP FLOW on one node stops every share; START FLOW on another starts them.
    others = [name for name in nodes if name != victim_name]
    run_again_on_40001(nodes[others[0]], "STOP FLOW cp")
    wait_for("every node stopped its share", lambda: not running_anywhere("cp", *nodes.values()))
    produce(broker, topic_in, 960, 160)
    run_again_on_40001(nodes[victim_name], "START FLOW cp")
    wait_for("the shares run again", lambda: (s := placement("cp", nodes.values())) and len(s) == 3)
    wait_for("what came while stopped in the sink", delivered(1120))
    stop_all(*nodes.values())
