"""DROP FLOW deletes a stateful flow's state copy on the cluster's Apache Kafka
for good, whichever node the statement runs on and whatever the node that ran
the flow is doing at that moment:

- the runner is dead (SIGKILL): the node that takes the flow's slot over once
  the group gives up on the dead one deletes the copy;
- the runner is frozen (SIGSTOP) in the middle of its stream, between two
  writes of its copy: the copy is deleted as above, and when the runner goes on
  its next write does not bring the topic back (rtsql's clients never ask the
  broker to create a topic on its own: auto.create.topics.enable is on in the
  broker these tests run, as it is by default).

An embedded broker takes no admin requests and keeps every topic: these tests
run on Apache Kafka only (RTSQL_KAFKA_BOOTSTRAP).
"""

import os
import signal
import threading

import pytest
from confluent_kafka import Producer

from cluster import (WAIT_S, run_again_on_40001, runner, start_kind,  # noqa: F401
                     two_nodes_reading_a_topic, wait_for)


def copies(broker, uid):
    """The state copy topics of cluster UID on BROKER (a listing of every topic,
    which creates none)."""
    topics = Producer({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10).topics
    return sorted(t for t in topics if t.startswith(f"_rtsql-{uid}-state-"))


def counting_flow(start_kind, broker, prefix):
    """Nodes a and b of a new cluster, the GROUP BY flow cnt running on one of
    them with a state copy that holds a checkpoint, and a producer that keeps
    the flow busy until the returned event is set. Returns (uid, runner, other,
    stop event, producer thread)."""
    uid, a, b = two_nodes_reading_a_topic(start_kind, broker, prefix, "counts")
    run_again_on_40001(b, "CREATE FLOW cnt INTO counts CHECKPOINT INTERVAL '1 second' "
                       "AS SELECT k, count(*) AS cnt FROM ev GROUP BY k")
    stop = threading.Event()

    def produce():
        n = 0
        while not stop.is_set() and n < 100_000:
            broker.produce(f"{uid}_in", [{"k": f"k{i % 10}", "n": i} for i in range(n, n + 20)])
            n += 20
            stop.wait(0.05)

    feeder = threading.Thread(target=produce, daemon=True)
    feeder.start()
    holder = runner("cnt", a, b, timeout=WAIT_S * 2)
    other = b if holder is a else a
    wait_for("two checkpoints of cnt",
             lambda: (holder.progress("cnt").get("checkpoint") or {}).get("epoch", 0) >= 2)
    wait_for("cnt's state copy on Kafka", lambda: copies(broker, uid))
    return uid, holder, other, stop, feeder


@pytest.fixture
def real_broker(broker):
    if broker.name == "embedded":
        pytest.skip("an embedded broker takes no admin requests: it keeps every topic")
    return broker


def test_drop_flow_while_its_runner_is_dead_deletes_the_copy(real_broker, start_kind):
    broker = real_broker
    uid, holder, other, stop, feeder = counting_flow(start_kind, broker, "dropdead")
    holder.kill()
    # Before the group gives up on the dead node: no live node runs cnt.
    run_again_on_40001(other, "DROP FLOW cnt")
    stop.set()
    feeder.join(timeout=WAIT_S)
    # The survivor takes the dead node's slots, cnt's among them, and with
    # them the deletion of the copy.
    wait_for("the state copy deleted", lambda: not copies(broker, uid), timeout=WAIT_S * 2)
    assert other.stop() == 0, other.log_tail()


def test_drop_flow_while_its_runner_is_frozen_deletes_the_copy_for_good(real_broker, start_kind):
    broker = real_broker
    uid, holder, other, stop, feeder = counting_flow(start_kind, broker, "dropfrozen")
    os.kill(holder.proc.pid, signal.SIGSTOP)
    try:
        run_again_on_40001(other, "DROP FLOW cnt")
        # The other node takes the frozen node's slots once the group gives up
        # on it, and deletes the copy.
        wait_for("the state copy deleted", lambda: not copies(broker, uid), timeout=WAIT_S * 2)
    finally:
        os.kill(holder.proc.pid, signal.SIGCONT)
    # The frozen node goes on: its flow checkpoints (the records kept coming),
    # writes its copy, learns that it lost its slots and that cnt was dropped.
    wait_for("the frozen node applies the drop",
             lambda: "applied drop of 'flow/cnt'" in holder.log_path.read_text(),
             timeout=WAIT_S * 2)
    wait_for("cnt gone on the frozen node",
             lambda: "cnt" not in {r[0] for r in holder.query("SHOW FLOWS")})
    stop.set()
    feeder.join(timeout=WAIT_S)
    # Whatever it wrote meanwhile did not create the topic again.
    assert not copies(broker, uid), holder.log_tail()
    assert holder.stop() == 0, holder.log_tail()
    assert other.stop() == 0, other.log_tail()
