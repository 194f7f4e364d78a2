"""Two failovers in a row of stateful flows in a cluster (`--cluster`), with
the three flows of cluster_flows.py (a GROUP BY count, a tumbling-window
count, an interval join of two streams) on three nodes while keyed records
stream in, delivery at least once. The node that runs the GROUP BY flow is
killed with SIGKILL; once another node runs its flows (restored from their
state copies) and has taken checkpoints of its own, that node is killed
too, and the last node runs every flow, restoring the copies the second
node wrote. Both killed nodes then come back under their names and rejoin.

The results end exact against what was written: the highest count written
for each key and each (window, key) is the true count, never more (a record
counted twice fails at once), every count below it was written too, and the
join's pairs are the true ones.

The same with the flows sharded in three copies (`'shards' = '3'`, inputs
of 4 partitions: test_cluster_shards.py), each copy exchanging the rows of
other copies' keys through Kafka and keeping its own in process: the last
node runs all nine copies.

Apache Kafka only (RTSQL_KAFKA_BOOTSTRAP), which outlives every node.
(test_cluster_failover_rebalance.py kills a node during a rebalance.)
"""

import pytest

from cluster import start_node  # noqa: F401 (a fixture flows_cluster uses)
from cluster_flows import flows_cluster  # noqa: F401 (a fixture)


@pytest.mark.parametrize("shards", [0, 3])
def test_two_nodes_killed_in_turn_leave_the_flows_exact_on_the_third(flows_cluster, shards):
    fc = flows_cluster("clf2", shards=shards, partitions=4 if shards else 0)
    fc.start_input()
    fc.wait_output()
    first = fc.checkpointed_runners()
    victim = first["cnt"]
    logged = fc.restored()
    fc.kill(victim)
    second = fc.runners()
    fc.check_restored(first, second, victim, logged)

    # The heir has taken checkpoints of its own (copied to Kafka) before it
    # dies too: the last node restores those, not the first node's.
    ready = fc.checkpointed_runners()
    heir = ready["cnt"]
    logged = fc.restored()
    fc.kill(heir)
    third = fc.runners()
    [last] = fc.alive()
    assert set(third.values()) == {last}, {f: n.name for f, n in third.items()}
    fc.check_restored(ready, third, heir, logged)

    # Both come back under their names and rejoin while records stream in.
    for back in [fc.restart(victim.name), fc.restart(heir.name)]:
        fc.wait_holds_slots(back)
    fc.runners()
    fc.end_exact()
