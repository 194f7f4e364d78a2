"""Failover of stateful flows in a cluster (`--cluster`): three nodes run a
GROUP BY count, a tumbling-window count and an interval join of two streams
(cluster_flows.py), each on the node that holds its slot, while keyed records
stream in. The node that runs the GROUP BY flow is killed with SIGKILL
mid-stream, once each flow has taken two checkpoints (so its state copy in
Kafka holds one). Within the group's session timeout (`--node-timeout 6`)
the other nodes take its slots: each flow it ran restores the dead node's
last checkpoint from the copy and goes on from that checkpoint's source
positions; flows on the other nodes may move or not. The killed node is
then started again under its name: it rejoins, takes a share of the slots
(flows may move back to it, restoring the copy again), and each flow still
runs on exactly one node.

The results end exact against what was written:
- at-least-once (the default): rows after the last checkpoint may be written
  again, but no record is counted twice and none is lost: the highest count
  written for each key and each (window, key) is the true count, never more,
  every count below it was written too, and the join's pairs are the true
  ones;
- exactly-once (`'delivery' = 'exactly-once'`, Apache Kafka only: the
  embedded broker refuses it): each epoch's rows commit with its checkpoint,
  so a read_committed consumer sees each count of each key and of each
  (window, key) once (1, 2, ..., n) and each pair once, however the flows
  moved.

Apache Kafka only (RTSQL_KAFKA_BOOTSTRAP), which outlives every node.
(test_cluster_failover_twice.py kills two nodes in turn,
test_cluster_failover_rebalance.py one during a rebalance.)
"""

import pytest

from cluster import start_node  # noqa: F401 (a fixture flows_cluster uses)
from cluster_flows import flows_cluster  # noqa: F401 (a fixture)


@pytest.mark.parametrize("delivery", ["at-least-once", "exactly-once"])
def test_stateful_flows_of_a_killed_node_move_and_end_exact(flows_cluster, delivery):
    fc = flows_cluster("clfo", delivery)
    fc.start_input()
    fc.wait_output()
    before = fc.checkpointed_runners()
    fc.fail_over_and_back(before, before["cnt"])
