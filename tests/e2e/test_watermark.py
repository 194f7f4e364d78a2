"""The watermark over several partitions does not depend on when records are
read. After a lull longer than the source's idle timeout, records come back to
every partition; whichever partition is read first must not move the watermark
past the others' on-time records. Every record is counted in its window and
none is dropped as late.

The topic has the partitions the broker gives a new topic (four on the
embedded broker), and the source's 'watermark.idle.timeout' is short, so the
lull takes seconds, not minutes.
"""

import json
import time
from datetime import datetime, timedelta, timezone

import pytest

from conftest import unique, wait_for

ROWS = 200                  # per partition
# Short, but well above what the partitions read after the first wait while it
# delivers (each counts as at most a tenth of the timeout plus its delivery).
IDLE_TIMEOUT_S = 3
LULL_S = 4                  # longer than the idle timeout: the input pauses
T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)
WAIT_S = 60                 # bound on every wait for the flow


def iso(ms):
    t = T0 + timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def create_window_count(server, kafka, topic, src, sink, flow):
    """A flow counting each key's rows per 10-second window of event time,
    emitted when the window closes, from TOPIC into the topic SINK."""
    with server.connect() as conn:
        conn.execute(f"""CREATE SOURCE {src} (k STRING, ts TIMESTAMP,
                         WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
                         WITH ({kafka.options()}, subscribe = '{topic}',
                               startingOffsets = 'earliest', format = 'json',
                               'watermark.idle.timeout' = '{IDLE_TIMEOUT_S} seconds')""")
        conn.execute(f"CREATE SINK {sink}_s WITH ({kafka.options()}, topic = '{sink}', format = 'json')")
        conn.execute(f"""CREATE FLOW {flow} INTO {sink}_s WITH ('shuffle.partitions' = '2') AS
            SELECT window.start AS ws, k, count(*) AS n FROM {src}
            GROUP BY window(ts, '10 seconds'), k EMIT ON WINDOW CLOSE""")


@pytest.mark.parametrize("order", ["interleaved", "one_partition_first"])
def test_lull_then_burst_counts_every_row(server, kafka, order):
    topic, src, sink, flow = unique("wm_in"), unique("wm_src"), unique("wm_out"), unique("wm_flow")
    partitions = kafka.create_topic(topic)
    if partitions < 2:
        pytest.skip(f"the broker made {topic} with {partitions} partition")
    create_window_count(server, kafka, topic, src, sink, flow)
    try:
        # Every partition delivers once, and the flow reads it all.
        for p in range(partitions):
            kafka.produce(topic, [{"k": "warm", "ts": iso(-60_000)}], partition=p)
        last = server.wait_progress(
            flow, lambda pr: pr.get("numInputRows", 0) >= partitions, timeout=WAIT_S)
        assert last.get("numInputRows", 0) >= partitions, f"the flow did not read them: {last}"
        # The input pauses for longer than the idle timeout.
        time.sleep(LULL_S)
        # Then ordered rows come back to every partition, 100 ms of event time apart.
        rows = {p: [{"k": f"k{i % 3}", "ts": iso(i * 100)} for i in range(ROWS)]
                for p in range(partitions)}
        if order == "interleaved":
            # Row i of every partition, then row i + 1 of every partition...
            targets = iter([p for _ in range(ROWS) for p in range(partitions)])
            kafka.produce(topic, [rows[p][i] for i in range(ROWS) for p in range(partitions)],
                          partition=lambda _r: next(targets))
        else:
            for p in range(partitions):
                kafka.produce(topic, rows[p], partition=p)
        # An hour later on every partition: every window above closes.
        for p in range(partitions):
            kafka.produce(topic, [{"k": "end", "ts": iso(3_600_000)}], partition=p)

        want = {}
        for p in range(partitions):
            for r in rows[p]:
                ms = int((datetime.fromisoformat(r["ts"].replace("Z", "+00:00")) - T0)
                         / timedelta(milliseconds=1))
                key = (iso(ms // 10_000 * 10_000), r["k"])
                want[key] = want.get(key, 0) + 1
        want[(iso(-60_000), "warm")] = partitions
        last = server.wait_progress(
            flow, lambda pr: pr.get("sink", {}).get("numOutputRows", 0) >= len(want), timeout=WAIT_S)
        out = kafka.consume_json(sink, n=len(want), timeout=WAIT_S, grace=0.5)
        got = {(r["ws"], r["k"]): r["n"] for r in out}
        st = server.progress(flow)["stateOperators"][0]
        counted = sum(n for (_, k), n in got.items() if k != "warm")
        assert counted == partitions * ROWS and st["numRowsDroppedByWatermark"] == 0, (
            f"{counted} of {partitions * ROWS} rows counted, "
            f"{st['numRowsDroppedByWatermark']} dropped by the watermark")
        assert got == want
    finally:
        with server.connect() as conn:
            conn.execute(f"DROP FLOW IF EXISTS {flow}")


def test_partition_ending_in_transaction_markers_turns_idle(server, kafka):
    """A partition whose last records came in transactions ends in a marker
    (an offset with no record): the source's client passes it without handing
    it over. The partition must still count as read to its end, or it would
    hold the watermark forever once it goes quiet. Partition 1 gets a committed
    transaction and then an aborted one; partition 0 keeps delivering later
    event times, so the window of partition 1's rows closes only once
    partition 1 is idle. (The embedded broker writes no markers; Apache Kafka,
    with RTSQL_KAFKA_BOOTSTRAP, does.)"""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic, src, sink, flow = unique("wm_tx"), unique("wm_tx_src"), unique("wm_tx_out"), unique("wm_tx_flow")
    if kafka.name == "real":
        # Apache Kafka makes topics of one partition unless asked.
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap})
        for f in admin.create_topics([NewTopic(topic, 2, 1)]).values():
            f.result(timeout=30)
    partitions = kafka.create_topic(topic)
    if partitions < 2:
        pytest.skip(f"the broker made {topic} with {partitions} partition")
    create_window_count(server, kafka, topic, src, sink, flow)
    try:
        tx = Producer({"bootstrap.servers": kafka.bootstrap, "transactional.id": unique("wm_tx_id")})
        tx.init_transactions(30)
        tx.begin_transaction()
        for i in range(5):
            tx.produce(topic, value=json.dumps({"k": "committed", "ts": iso(i * 100)}), partition=1)
        tx.commit_transaction(30)
        tx.begin_transaction()
        for i in range(3):
            tx.produce(topic, value=json.dumps({"k": "aborted", "ts": iso(i * 100)}), partition=1)
        tx.flush(30)
        tx.abort_transaction(30)

        # Partition 0 delivers later and later event times, every 100 ms, so
        # that the flow's delivery time runs past the idle timeout.
        ticks = Producer({"bootstrap.servers": kafka.bootstrap, "linger.ms": 0})
        start = time.monotonic()

        def found():
            for _ in range(5):
                ms = 60_000 + int((time.monotonic() - start) * 1000)
                ticks.produce(topic, value=json.dumps({"k": "tick", "ts": iso(ms)}), partition=0)
                ticks.flush(10)
                time.sleep(0.1)
            out = [json.loads(m.value()) for m in kafka.consume_to_end(sink, timeout=5)]
            return [r for r in out if r["k"] == "committed"]

        rows = wait_for(found, WAIT_S,
                        "partition 1 never turned idle: its window did not close "
                        f"({server.progress(flow)['sources']})")
        assert rows == [{"ws": iso(0), "k": "committed", "n": 5}], rows
        if kafka.name == "real":
            # The embedded broker does not hide an aborted transaction's records.
            out = [json.loads(m.value()) for m in kafka.consume_to_end(sink, timeout=5)]
            assert not [r for r in out if r["k"] == "aborted"], out
    finally:
        with server.connect() as conn:
            conn.execute(f"DROP FLOW IF EXISTS {flow}")
