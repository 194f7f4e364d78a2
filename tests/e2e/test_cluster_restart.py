"""The node of a cluster (`--cluster`) that runs a flow is killed with SIGKILL
mid-stream and started again under its name on its data directory: the
catalog comes back from the cluster's topic, the flow from its checkpoint, and
its GROUP BY counts end exact (at-least-once output, state restored exactly).
Meanwhile the other node still answers for the cluster.

The broker outlives every node: the embedded broker of an rtsqld outside the
cluster, and Apache Kafka too when RTSQL_KAFKA_BOOTSTRAP is set.
"""

import json
import threading
import time
from collections import defaultdict

from cluster import (WAIT_S, flows, run_again_on_40001, start_node, stop_all,
                     two_nodes_reading_a_topic, wait_for)


def test_the_node_running_a_flow_comes_back_after_kill_9(broker, start_node):
    uid, a, b = two_nodes_reading_a_topic(start_node, broker, "clk", "counts")
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    wait_for("b sees the sink", lambda: [r for r in b.query("SHOW SINKS") if r[0] == "counts"])
    run_again_on_40001(b, "CREATE FLOW c INTO counts CHECKPOINT INTERVAL '1 second' "
                       "AS SELECT k, count(*) AS cnt FROM ev GROUP BY k")

    total, keys = 1500, 10
    done = threading.Event()
    errors = []

    def produce():
        try:
            for start in range(0, total, 50):
                broker.produce(topic_in, [{"k": f"k{i % keys}", "n": i}
                                          for i in range(start, start + 50)])
                time.sleep(0.05)
        except Exception as e:  # reported in the test's thread
            errors.append(e)
        finally:
            done.set()

    producer = threading.Thread(target=produce)
    producer.start()
    wait_for("the flow writes counts", lambda: broker.consume_to_end(topic_out, timeout=3))
    b.kill()
    # a still answers for the cluster while b is away.
    assert flows(a)["c"][0] == "remote"
    b = start_node(uid, broker, "b")
    producer.join(timeout=WAIT_S * 2)
    assert done.is_set() and not errors, errors

    def exact():
        last = defaultdict(int)
        for m in broker.consume_to_end(topic_out, timeout=5):
            r = json.loads(m.value())
            last[r["k"]] = max(last[r["k"]], r["cnt"])
        return dict(last) == {f"k{j}": total // keys for j in range(keys)} and last
    wait_for("the counts end exact after kill -9", exact, timeout=WAIT_S * 2)
    assert flows(b)["c"][0] == "running"
    stop_all(a, b)
