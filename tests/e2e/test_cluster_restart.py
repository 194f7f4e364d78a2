"""Failover in a cluster (`--cluster`): the node that runs a GROUP BY flow and
a stateless flow is killed with SIGKILL mid-stream. Within the group's session
timeout (`--node-timeout 6`) another node takes the flows' slots and runs them:
the stateless flow goes on from the offsets the dead node committed (every
record comes out at least once), the GROUP BY flow restores the dead node's
last checkpoint from its state copy in Kafka (its counts end exact). The killed node is then started again
under its name: it rejoins, the flows still run on exactly one node each, and
the counts stay exact.

The broker outlives every node: the embedded broker of an rtsqld outside the
cluster, and Apache Kafka too when RTSQL_KAFKA_BOOTSTRAP is set.
"""

import json
import threading
import time
from collections import defaultdict

from confluent_kafka import Producer

from cluster import (WAIT_S, flows, readers, run_again_on_40001, runner, start_node, stop_all,
                     two_nodes_reading_a_topic, wait_for)


def test_flows_of_a_killed_node_move_to_another_and_end_exact(broker, start_node):
    uid, a, b = two_nodes_reading_a_topic(start_node, broker, "clk", "counts")
    topic_in, topic_out, topic_copy = f"{uid}_in", f"{uid}_out", f"{uid}_copy"
    broker.create_topic(topic_copy)
    c = start_node(uid, broker, "c")
    nodes = {"a": a, "b": b, "c": c}
    run_again_on_40001(a, f"CREATE SINK copy WITH ({broker.options()}, topic = '{topic_copy}', "
                       "format = 'json')")
    wait_for("b sees the sinks", lambda: {"counts", "copy"} <= {r[0] for r in b.query("SHOW SINKS")})
    run_again_on_40001(b, "CREATE FLOW cnt INTO counts CHECKPOINT INTERVAL '1 second' "
                       "AS SELECT k, count(*) AS cnt FROM ev GROUP BY k")
    run_again_on_40001(c, "CREATE FLOW cp INTO copy CHECKPOINT INTERVAL '1 second' "
                       "AS SELECT k, n FROM ev")

    total, keys = 2000, 10
    done = threading.Event()
    errors = []

    def produce():
        try:
            for start in range(0, total, 50):
                broker.produce(topic_in, [{"k": f"k{i % keys}", "n": i}
                                          for i in range(start, start + 50)])
                time.sleep(0.1)
        except Exception as e:  # reported in the test's thread
            errors.append(e)
        finally:
            done.set()

    producer = threading.Thread(target=produce)
    producer.start()
    wait_for("the flow writes counts", lambda: broker.consume_to_end(topic_out, timeout=3))
    # Three nodes joining one after another move slots (and so flows) a few
    # times before the group settles; each move restores the state copy.
    victim = runner("cnt", a, b, c, timeout=WAIT_S * 2)
    # A checkpoint is copied before the next one is taken: with two taken,
    # the copy holds one.
    wait_for("two checkpoints of cnt", lambda: (victim.progress("cnt").get("checkpoint") or {})
             .get("epoch", 0) >= 2)
    victim.kill()
    alive = [n for n in nodes.values() if n is not victim]
    # Another node takes the flows of the dead one, once the group has given
    # up on it.
    heir = runner("cnt", *alive, timeout=WAIT_S * 2)
    assert heir is not victim
    # It restored the dead node's last checkpoint from the flow's state copy
    # in Kafka (the counts below would end exact from the source alone too).
    wait_for("the heir restores the state copy",
             lambda: "flow \"cnt\": restoring the state copy of epoch" in heir.log_path.read_text())
    readers("cp", *alive, timeout=WAIT_S * 2)

    # The dead node comes back under its name and rejoins.
    back = start_node(uid, broker, victim.name)
    nodes[victim.name] = back
    producer.join(timeout=WAIT_S * 2)
    assert done.is_set() and not errors, errors

    def exact():
        last = defaultdict(int)
        for m in broker.consume_to_end(topic_out, timeout=5):
            r = json.loads(m.value())
            last[r["k"]] = max(last[r["k"]], r["cnt"])
        return dict(last) == {f"k{j}": total // keys for j in range(keys)} and last
    wait_for("the counts end exact after kill -9", exact, timeout=WAIT_S * 2)

    def every_record():
        seen = {json.loads(m.value())["n"] for m in broker.consume_to_end(topic_copy, timeout=5)}
        return seen == set(range(total)) or None
    wait_for("every record copied at least once", every_record, timeout=WAIT_S * 2)

    # Each flow runs once over the three nodes (the stateless one may be
    # spread over them, a share of its partitions on each), and the counts
    # stay exact.
    everyone = list(nodes.values())
    runner("cnt", *everyone)
    readers("cp", *everyone)
    assert exact()

    # SHOW PROGRESS on the nodes that do not run cnt answers with its
    # runner's progress (shared through the cluster's progress topic): the
    # runner's current run, named in the per-node breakdown. The runner is
    # asked again at every poll: a late rebalance may still move cnt.
    def from_runner():
        holder = runner("cnt", *everyone)
        for n in everyone:
            if n is holder:
                continue
            p = n.progress("cnt")
            listed = [(x["node"], x["here"]) for x in p.get("cluster", {}).get("nodes", [])]
            if not (p["status"]["state"] == "remote" and listed == [(holder.name, False)]
                    and p["runId"] == holder.progress("cnt")["runId"]):
                return None
        return holder
    wait_for("SHOW PROGRESS cnt on every other node from its runner", from_runner,
             timeout=WAIT_S * 2)

    # EXPLAIN FLOW on every node names the runner.
    def explained():
        holder = runner("cnt", *everyone)
        return all(any(f"runs on node {holder.name}{' (here)' if n is holder else ''}" in r[0]
                       for r in n.query("EXPLAIN FLOW cnt")) for n in everyone)
    wait_for("EXPLAIN FLOW cnt on every node naming its runner", explained, timeout=WAIT_S * 2)

    # DROP FLOW (from any node) deletes the flow's state copy on Apache Kafka;
    # an embedded broker takes no admin requests and keeps it.
    def copies():
        topics = Producer({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10).topics
        return [t for t in topics if t.startswith(f"_rtsql-{uid}-state-")]
    assert copies(), "the GROUP BY flow has a state copy"
    run_again_on_40001(everyone[0], "DROP FLOW cnt")
    if broker.name != "embedded":
        wait_for("the state copy deleted", lambda: not copies())
    stop_all(*everyone)
