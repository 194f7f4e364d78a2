"""Standby replicas (`'standby.replicas' = '2'`): in a cluster of three nodes,
each stateful flow's two other nodes keep a warm copy of its state, read from
its state copy in Kafka while the flow runs elsewhere. The node that runs the
GROUP BY flow is killed with SIGKILL mid-stream; whichever node the group
gives each of its flows to keeps a standby of it (both others do), so the
flow starts there from that standby, read on to the copy's newest
checkpoint, and not from a read of the whole copy. EXPLAIN FLOW on each node
names the standbys and the epoch the node's own has reached. The killed node
comes back, and the results end exact as in test_cluster_failover.py
(at-least-once: every count 1..n, none above; exactly-once: each seen once).

Apache Kafka only (RTSQL_KAFKA_BOOTSTRAP), as the other failover tests.
"""

import re

import pytest

from cluster import wait_for
from cluster import start_node  # noqa: F401 (a fixture flows_cluster uses)
from cluster_flows import FLOWS, flows_cluster  # noqa: F401 (a fixture)

FROM_STANDBY = "starting from this node's standby copy of epoch"


def standby_epoch(node, flow):
    """The epoch NODE's standby of FLOW holds, as its EXPLAIN FLOW says (None:
    it keeps none, or has read no checkpoint yet)."""
    text = "\n".join(r[0] for r in node.query(f"EXPLAIN FLOW {flow}"))
    m = re.search(rf"standby copies \(2 asked\):.*\bnodes? .*{re.escape(node.name)} "
                  rf"\(here, at epoch (\d+)\)", text)
    return int(m.group(1)) if m else None


@pytest.mark.parametrize("delivery", ["at-least-once", "exactly-once"])
def test_a_killed_nodes_flows_start_from_a_standby_and_end_exact(flows_cluster, delivery):
    fc = flows_cluster("clsb", delivery, standbys=2)
    fc.start_input()
    fc.wait_output()
    before = fc.checkpointed_runners()
    victim = before["cnt"]

    # Every other node keeps a standby of every flow it does not run, and has
    # read a checkpoint of it.
    for f, node in before.items():
        for other in fc.alive():
            if other is node:
                continue
            wait_for(f"{other.name} keeps a standby of {f} at some epoch",
                     lambda other=other, f=f: standby_epoch(other, f))
    warm = fc.restored(FROM_STANDBY)
    cold = fc.restored()
    fc.kill(victim)

    # Each flow the dead node ran starts on its heir from the heir's standby,
    # without reading the copy.
    after = fc.runners()
    moved = [f for f in FLOWS if before[f] is victim]
    assert moved, "the victim ran cnt"
    for f in moved:
        heir = after[f]
        assert heir is not victim
        wait_for(f"{heir.name} starts {f} from its standby",
                 lambda f=f, heir=heir: fc.restored(FROM_STANDBY)[(heir.name, f)]
                 > warm.get((heir.name, f), 0))
        assert fc.restored()[(heir.name, f)] == cold.get((heir.name, f), 0), (
            f"{heir.name} read the whole state copy of {f} although it kept a standby\n"
            f"{fc.diagnosis()}")

    # The dead node comes back under its name and takes a share of the slots.
    back = fc.restart(victim.name)
    fc.wait_holds_slots(back)
    fc.runners()
    fc.end_exact()
