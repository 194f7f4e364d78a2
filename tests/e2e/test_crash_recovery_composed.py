"""Crash recovery of a composed flow: an aggregation over an aggregation, whose
inner groups move between the outer groups as their counts grow, so the outer
aggregation lives on retractions. rtsqld is killed with SIGKILL at random
moments while input streams in and restarted on the same data directory; the
upsert topic the flow writes must end as exactly the table the input defines:
every outer group with its true number of keys, and every group that emptied
on the way deleted by a tombstone.

Delivery is at-least-once: after a crash the flow writes again what it wrote
since its last checkpoint, so a key may be written several times, but the last
write of each key is what its state says, and its state is restored exactly.
"""

import json
import os
import random
import time
from collections import Counter

from conftest import SteadyProducer, start_server, unique
from test_crash_recovery import RATE, kill_storm

KEYS = 40
CONVERGE_TIMEOUT_S = 120


def records_for(seed):
    """Key i gets 5 + (i * 7) % 60 records; all of them shuffled."""
    rng = random.Random(seed)
    out = []
    for i in range(KEYS):
        out += [{"k": f"k{i}"}] * (5 + (i * 7) % 60)
    rng.shuffle(out)
    return out


def upsert_table(messages):
    """Applies an upsert topic: the last value of each Kafka key, a tombstone
    (no value) deleting it."""
    last = {}
    for m in messages:
        last[m.key()] = None if m.value() is None else json.loads(m.value())
    return [v for v in last.values() if v is not None]


def test_kill_9_recovery_keeps_an_aggregate_over_an_aggregate_exact(broker, tmp_path):
    uid = unique("composed")
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    for t in (topic_in, topic_out):
        broker.create_topic(t)
    server = start_server(tmp_path, 0)
    opts = broker.options()
    server.run_script(f"""
        CREATE SOURCE ev (k STRING)
            WITH ({opts}, subscribe = '{topic_in}', startingOffsets = 'earliest', format = 'json');
        CREATE SINK sizes WITH ({opts}, topic = '{topic_out}', format = 'json', 'mode' = 'upsert');
        CREATE FLOW f INTO sizes CHECKPOINT INTERVAL '1 second' WITH ('shuffle.partitions' = '2') AS
        SELECT n, count(*) AS keys, min(k) AS first_key
        FROM (SELECT k, count(*) AS n FROM ev GROUP BY k)
        GROUP BY n;
    """)
    records = records_for(os.getpid())
    per_key = Counter(r["k"] for r in records)
    truth = {}
    for k, n in per_key.items():
        keys, first = truth.get(n, (0, None))
        truth[n] = (keys + 1, k if first is None or k < first else first)

    producer = SteadyProducer(broker, topic_in, len(records), RATE, lambda a, b: records[a:b])
    try:
        server = kill_storm(server, tmp_path, seed=os.getpid() + 2)
        producer.finish()
        deadline = time.monotonic() + CONVERGE_TIMEOUT_S
        while True:
            table = {r["n"]: (r["keys"], r["first_key"])
                     for r in upsert_table(broker.consume_to_end(topic_out, timeout=3))}
            if table == truth:
                break
            if time.monotonic() > deadline:
                wrong = {n: (table.get(n), truth.get(n)) for n in set(table) | set(truth)
                         if table.get(n) != truth.get(n)}
                raise AssertionError(
                    f"the composed flow did not reach the true table within "
                    f"{CONVERGE_TIMEOUT_S}s: {len(wrong)} groups differ (got, true): "
                    f"{sorted(wrong.items())[:8]}\n{server.log_tail()}")
            time.sleep(1)
        # The output may be complete before the last restart's flow has
        # reported its recovery: wait for that report.
        progress = server.wait_progress("f", lambda p: p.get("recovery") is not None, timeout=60)
        assert progress["recovery"] is not None and progress["recovery"]["fromEpoch"] >= 0, progress
        # Both aggregations keep state, and both restored it.
        assert len(progress["stateOperators"]) == 2, progress["stateOperators"]
    finally:
        code = server.stop()
        assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{server.log_tail()}"
