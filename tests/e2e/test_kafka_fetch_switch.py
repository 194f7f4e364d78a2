"""A Kafka source moves its partitions to a client that fetches in batches when
its records come fast, and back when they come slowly again
('fetchBatchingRate', connectors/kafka/fetch_rate.h). Each move hands the
partitions over at the offsets after the last records read, so a flow across
such moves, and across a kill -9 and restore taken while batching, counts
every record exactly once: the highest count written for each key equals the
true count (a record lost makes it lower, one read twice higher).

The source's rate threshold is 1 record a second here, so that a steady
trickle switches it whatever the machine's load; every wait is on a line of
the server's log or on the output, with generous bounds.
"""

import json
import threading
import time
from collections import defaultdict

from conftest import unique, wait_for, start_server

KEYS = 20
BATCH = 20            # records per send of the steady producer
PERIOD_S = 0.1        # between sends
SWITCH_TIMEOUT_S = 90
CONVERGE_TIMEOUT_S = 120
MAX_RECORDS = 200_000  # a bound on the producer, whatever happens

BATCHING = "now fetching in batches"
PROMPT = "now fetching each record at once"


class Trickle:
    """Sends BATCH records to TOPIC every PERIOD_S from a thread of its own
    until stop(); remembers what it sent."""

    def __init__(self, broker, topic, first_id):
        self.sent = []
        self.errors = []
        self.next_id = first_id
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(broker, topic))
        self.thread.start()

    def _run(self, broker, topic):
        try:
            while not self.stopping.is_set() and self.next_id < MAX_RECORDS:
                t0 = time.monotonic()
                records = [{"k": f"k{i % KEYS}", "id": i}
                           for i in range(self.next_id, self.next_id + BATCH)]
                broker.produce(topic, records)
                self.sent.extend(records)
                self.next_id += BATCH
                time.sleep(max(0.0, PERIOD_S - (time.monotonic() - t0)))
        except Exception as e:  # reported by stop(), in the test's thread
            self.errors.append(e)

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=60)
        assert not self.thread.is_alive(), "the producer did not stop"
        assert not self.errors, self.errors
        return self.sent


def log_count(server, line):
    server.log.flush()
    return server.log_path.read_text(errors="replace").count(line)


def fetch_mode(progress):
    """The flow's one source's fetch mode in PROGRESS (SHOW PROGRESS)."""
    (source,) = progress["sources"]
    return source.get("fetchMode")


def test_fetch_mode_switches_lose_and_repeat_nothing_across_a_restore(broker, tmp_path):
    uid = unique("fetchswitch")
    topic_in, topic_out = f"{uid}_in", f"{uid}_counts"
    for t in (topic_in, topic_out):
        broker.create_topic(t)

    server = start_server(tmp_path, 0)
    opts = broker.options()
    server.run_script(f"""
        CREATE SOURCE ev (k STRING, id BIGINT)
            WITH ({opts}, subscribe = '{topic_in}', startingOffsets = 'earliest',
                  format = 'json', fetchBatchingRate = '1');
        CREATE SINK counts WITH ({opts}, topic = '{topic_out}', format = 'json');
        CREATE FLOW c INTO counts CHECKPOINT INTERVAL '1 second' WITH ('shuffle.partitions' = '2')
            AS SELECT k, count(*) AS n FROM ev GROUP BY k;
    """)

    sent = []
    # While records come, the source switches to batching fetches; once they
    # stop, back to prompt ones.
    trickle = Trickle(broker, topic_in, 0)
    try:
        wait_for(lambda: log_count(server, BATCHING) >= 1, SWITCH_TIMEOUT_S,
                 "the source to fetch in batches")
        # The progress says so too.
        assert fetch_mode(server.wait_progress("c", lambda p: fetch_mode(p) == "batching",
                                               SWITCH_TIMEOUT_S)) == "batching"
    finally:
        sent += trickle.stop()
    wait_for(lambda: log_count(server, PROMPT) >= 1, SWITCH_TIMEOUT_S,
             "the source to fetch each record at once again")
    assert fetch_mode(server.wait_progress("c", lambda p: fetch_mode(p) == "prompt",
                                           SWITCH_TIMEOUT_S)) == "prompt"

    # Batching again, then killed while records keep coming, and restored from
    # its last checkpoint.
    trickle = Trickle(broker, topic_in, len(sent))
    try:
        wait_for(lambda: log_count(server, BATCHING) >= 2, SWITCH_TIMEOUT_S,
                 "the source to fetch in batches a second time")
        server.proc.kill()
        server.proc.wait(timeout=10)
        server = start_server(tmp_path, 1)
        wait_for(lambda: log_count(server, BATCHING) >= 1, SWITCH_TIMEOUT_S,
                 "the restored source to fetch in batches")
    finally:
        sent += trickle.stop()

    try:
        truth = defaultdict(int)
        for r in sent:
            truth[r["k"]] += 1
        assert len({r["id"] for r in sent}) == len(sent)

        def highest():
            best = defaultdict(int)
            for m in broker.consume_to_end(topic_out, timeout=5):
                row = json.loads(m.value())
                best[row["k"]] = max(best[row["k"]], row["n"])
            return best

        last = {}

        def converged():
            nonlocal last
            last = highest()
            return all(last.get(k, 0) >= n for k, n in truth.items())

        wait_for(converged, CONVERGE_TIMEOUT_S, "every key's count to reach its true count")
        # No key counted a record twice, none lost one.
        assert dict(last) == dict(truth)
    finally:
        server.stop()
