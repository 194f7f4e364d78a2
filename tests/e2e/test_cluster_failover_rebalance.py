"""A kill during a rebalance, with the three stateful flows of
cluster_flows.py (a GROUP BY count, a tumbling-window count, an interval
join of two streams) on three nodes of a cluster while keyed records stream
in, delivery at least once: a fourth node starts (its join makes the group
reassign the slots, cooperatively: in two rounds, the slots that move first
given up, then taken), and at once, before that can have settled, the node
that runs the GROUP BY flow is killed with SIGKILL. The group must end with
every slot on one live node: each flow runs on exactly one node, the flows
of the dead one restored their state copies, and the results end exact
against what was written (the highest count of each key and each (window,
key) is the true count, never more, every count below it was written too,
and the join's pairs are the true ones).

The same with the flows sharded in three copies (`'shards' = '3'`, inputs
of 4 partitions: test_cluster_shards.py): every copy on exactly one node.

Apache Kafka only (RTSQL_KAFKA_BOOTSTRAP), which outlives every node.
"""

import pytest

from cluster import start_node  # noqa: F401 (a fixture flows_cluster uses)
from cluster_flows import flows_cluster  # noqa: F401 (a fixture)


@pytest.mark.parametrize("shards", [0, 3])
def test_a_kill_during_a_rebalance_leaves_each_flow_on_one_node_and_exact(flows_cluster, shards):
    fc = flows_cluster("clfr", shards=shards, partitions=4 if shards else 0)
    fc.start_input()
    fc.wait_output()
    before = fc.checkpointed_runners()
    victim = before["cnt"]
    logged = fc.restored()

    # The fourth node's join starts a rebalance; the kill comes before it can
    # have settled (the group hears of the dead node only after its session
    # timeout, in the middle of or after the reassignment).
    d = fc.start("d")
    fc.kill(victim)

    # d has a share of the slots, and each flow runs on exactly one of the
    # three live nodes.
    fc.wait_holds_slots(d)
    after = fc.runners()
    fc.check_restored(before, after, victim, logged)
    fc.end_exact()
