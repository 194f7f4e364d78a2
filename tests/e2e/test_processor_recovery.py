"""Stateful processors after kill -9: a TRANSFORM flow whose Python processor
keeps a running count and sum per key in value states, a list state of the
amounts and a map state of counts per kind, while rtsqld is killed with
SIGKILL at random moments and started again on the same data directory with
no statement.

The processor's state is checkpointed with the flow's epoch and restored
exactly: delivery is at-least-once, so a row may be written again after a
crash, but the highest count written per key must equal the true count (no
record counted twice, none lost), and the sum, the list's length and sum,
and the counts per kind written with that count must be those of the input
(all independent of the order in which a key's records from several
partitions arrive).

The broker must outlive the killed server: it is the embedded broker of a
second rtsqld that is never killed (or Apache Kafka with RTSQL_KAFKA_BOOTSTRAP).
"""

import os
import time
from collections import defaultdict

from conftest import SteadyProducer, start_server, unique
from test_crash_recovery import RATE, kill_storm, to_end

KEYS = 20
EVENTS = 3000
CONVERGE_TIMEOUT_S = 120

PROCESSOR = """
CREATE PROCESSOR running_total RETURNS (n BIGINT, total BIGINT, listed STRING, kinds STRING)
LANGUAGE PYTHON AS $$
class RunningTotal:
    def init(self, handle):
        self.count = handle.value_state("count")
        self.total = handle.value_state("total")
        self.amounts = handle.list_state("amounts")
        self.kinds = handle.map_state("kinds")

    def handle_input_rows(self, key, rows, timer_values):
        for row in rows:
            n = (self.count.get() or 0) + 1
            self.count.update(n)
            self.total.update((self.total.get() or 0) + row["amount"])
            self.amounts.append(row["amount"])
            amounts = self.amounts.get()
            self.kinds.put(row["kind"], self.kinds.get(row["kind"], 0) + 1)
            kinds = ",".join("%s=%d" % kv for kv in sorted(self.kinds.items()))
            yield (n, self.total.get(), "%d:%d" % (len(amounts), sum(amounts)), kinds)
$$
"""


def record(i):
    return {"k": f"k{i % KEYS}", "amount": i % 7 + 1, "kind": "abc"[i % 3]}


def truth(records):
    """Per key, the row the processor writes for its last record."""
    out = {}
    state = defaultdict(lambda: {"n": 0, "total": 0, "kinds": defaultdict(int)})
    for r in records:
        s = state[r["k"]]
        s["n"] += 1
        s["total"] += r["amount"]
        s["kinds"][r["kind"]] += 1
        out[r["k"]] = {"k": r["k"], "n": s["n"], "total": s["total"],
                       "listed": "%d:%d" % (s["n"], s["total"]),
                       "kinds": ",".join("%s=%d" % kv for kv in sorted(s["kinds"].items()))}
    return out


def test_kill_9_restores_processor_state_exactly(broker, tmp_path):
    uid = unique("proc")
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    for t in (topic_in, topic_out):
        broker.create_topic(t)

    server = start_server(tmp_path, 0)
    opts = broker.options()
    server.run_script(PROCESSOR + f""";
        CREATE SOURCE ev (k STRING, amount BIGINT, kind STRING)
            WITH ({opts}, subscribe = '{topic_in}', startingOffsets = 'earliest', format = 'json');
        CREATE SINK totals WITH ({opts}, topic = '{topic_out}', format = 'json');
        CREATE FLOW t INTO totals CHECKPOINT INTERVAL '1 second' WITH ('shuffle.partitions' = '2')
            AS SELECT * FROM TRANSFORM(ev PARTITION BY k USING PROCESSOR running_total);
    """)

    records = [record(i) for i in range(EVENTS)]
    want = truth(records)
    producer = SteadyProducer(broker, topic_in, len(records), RATE, lambda a, b: records[a:b])
    try:
        server = kill_storm(server, tmp_path, seed=os.getpid())
        producer.finish()

        deadline = time.monotonic() + CONVERGE_TIMEOUT_S
        while True:
            latest = {}
            for r in to_end(broker, topic_out):
                if r["k"] not in latest or r["n"] > latest[r["k"]]["n"]:
                    latest[r["k"]] = r
            over = {k: (r["n"], want[k]["n"]) for k, r in latest.items() if r["n"] > want[k]["n"]}
            assert not over, f"records counted twice: {over}"
            if latest == want:
                break
            if time.monotonic() > deadline:
                off = {k: (latest.get(k), w) for k, w in want.items() if latest.get(k) != w}
                raise AssertionError(
                    f"the processor's rows did not reach the truth within {CONVERGE_TIMEOUT_S}s: "
                    f"{len(off)} keys off, e.g. {list(off.items())[:3]}\n{server.log_tail()}")
            time.sleep(1)

        # The last restart may still be bringing the flow back ("recovering",
        # "starting") after its rows reached the truth: wait for it to run.
        deadline = time.monotonic() + CONVERGE_TIMEOUT_S
        while True:
            rows = server.query("SHOW FLOWS")
            flows = {r[0]: r[2] for r in rows}
            if flows == {"t": "running"} or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert flows == {"t": "running"}, f"{rows}\n{server.log_tail()}"
        assert [r[0] for r in server.query("SHOW PROCESSORS")] == ["running_total"]
    finally:
        code = server.stop()
        assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{server.log_tail()}"
