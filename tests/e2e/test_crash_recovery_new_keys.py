"""Crash recovery of a GROUP BY whose every record is a new group of about a
kilobyte (query B of the Databricks shape): its state outgrows the memory
budget and the bound of the writes a table lets wait, so the writes held while
each checkpoint is taken pile up and are written over the polls after it,
evicted entries are read back through RocksDB, and rtsqld is killed with
SIGKILL in the middle of it, three times.

Each record is its own group, so every count the flow writes must be 1: a 2 is
a record counted twice (a checkpoint that held a write made after its barrier,
then the record read again); a key never written, or a state that counts fewer
groups than records, is a record lost (a checkpoint that missed a write made
before its barrier while the offsets moved past it). With Apache Kafka
(RTSQL_KAFKA_BOOTSTRAP) the flow is exactly-once and a read_committed consumer
must see every key exactly once.

The embedded broker keeps about 5 MB per partition, so a restarted flow
behind by more than that would find its records gone: on it the test sends
30,000 records at 4,000 per second; on Apache Kafka 80,000 at 10,000 per
second, whose state (about 95 MB) also outgrows the memory budget.
"""

import json
import os
import random
import time

from conftest import unique, wait_for, start_server, SteadyProducer

PAD = 1000             # bytes of the pad that is part of the group key
# Records produced in all (each a new group) and per second, by broker.
VOLUME = {"embedded": (30000, 4000), "real": (80000, 10000)}
KILLS = 3
CONVERGE_TIMEOUT_S = 180


def record(i):
    letters = "abcdefghijklmnopqrstuvwxyz"
    pad = (letters[i % 26:] + letters[:i % 26]) * (PAD // 26 + 1)
    return {"k": i, "pad": pad[:PAD]}


def test_kill_9_new_key_per_record_counts_each_record_once(broker, tmp_path):
    uid = unique("newkeys")
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    for t in (topic_in, topic_out):
        broker.create_topic(t)
    exactly_once = broker.name == "real"
    events, rate = VOLUME[broker.name]
    delivery = ", 'delivery' = 'exactly-once'" if exactly_once else ""

    server = start_server(tmp_path, 0)
    opts = broker.options()
    server.run_script(f"""
        CREATE SOURCE ev (k BIGINT, pad STRING)
            WITH ({opts}, subscribe = '{topic_in}', startingOffsets = 'earliest', format = 'json');
        CREATE SINK out WITH ({opts}, topic = '{topic_out}', format = 'json');
        CREATE FLOW g INTO out CHECKPOINT INTERVAL '1 second'
            WITH ('shuffle.partitions' = '2'{delivery})
            AS SELECT k, count(*) AS n FROM ev GROUP BY k, pad;
    """)
    producer = SteadyProducer(broker, topic_in, events, rate,
                              lambda a, b: [record(i) for i in range(a, b)])
    try:
        rng = random.Random(os.getpid())
        for run in range(1, KILLS + 1):
            time.sleep(rng.uniform(1.5, 2.5))
            server.proc.kill()
            server.proc.wait(timeout=10)
            server = start_server(tmp_path, run)
        producer.finish()

        deadline = time.monotonic() + CONVERGE_TIMEOUT_S
        while True:
            seen = {}
            twice = []
            for m in broker.consume_to_end(topic_out, timeout=30):
                r = json.loads(m.value())
                if r["k"] in seen:
                    twice.append(r["k"])
                seen[r["k"]] = max(seen.get(r["k"], 0), r["n"])
            # Counting a record twice never heals: fail on it at once.
            over = {k: n for k, n in seen.items() if n != 1}
            assert not over, f"records counted twice: {list(over.items())[:5]}"
            assert set(seen) <= set(range(events)), "keys never produced"
            if exactly_once:
                assert not twice, f"a read_committed consumer saw keys twice: {twice[:5]}"
            if len(seen) == events:
                break
            if time.monotonic() > deadline:
                missing = sorted(set(range(events)) - set(seen))
                raise AssertionError(
                    f"the flow wrote {len(seen)} of {events} keys within {CONVERGE_TIMEOUT_S}s; "
                    f"missing {missing[:5]}\n{server.log_tail()}")
            time.sleep(1)

        # The state counts every record once: none lost from a checkpoint.
        def groups(p):
            return sum(o.get("numRowsTotal", 0) for o in p.get("stateOperators", []))

        try:
            wait_for(lambda: groups(server.progress("g")) == events, 60, "every group in state")
        except AssertionError as e:
            raise AssertionError(f"{e}: {server.progress('g')}\n{server.log_tail()}") from None
        progress = server.progress("g")
        assert progress["recovery"] is not None and progress["recovery"]["fromEpoch"] >= 0, progress
    finally:
        code = server.stop()
        assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{server.log_tail()}"
