"""Processor timers after kill -9: a TRANSFORM flow whose Python processor
counts a key's rows and registers one timer per key, which yields the count
and clears it. rtsqld is killed with SIGKILL while the timers are pending,
and started again on the same data directory with no statement.

Timers are state: they are checkpointed with the flow's epoch and restored
with the states. What the tests assert follows from that and from
at-least-once delivery:
- a timer pending at the checkpoint fires after the restart, with the count
  the checkpoint holds; one that fired after the last checkpoint may fire
  again after the restart (its firing was not checkpointed), and one that
  fired before a checkpoint never fires again;
- a count a timer cleared stays cleared: the key's next row counts from 1.

Event-time timers fire when the watermark reaches them (records with a later
event time on every partition move it); processing-time timers on the clock,
with no input at all after the restart. The broker outlives the killed
server (conftest.py, `broker`).
"""

import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone

from conftest import start_server, unique
from test_crash_recovery import to_end

KEYS = 20
ROWS_PER_KEY = 3
TIMEOUT_S = 90
# Processing-time timers are registered this far ahead of the rows: time for
# the rows and a checkpoint to be taken before the kill.
PROCESSING_DELAY_MS = 15000

EVENT_PROCESSOR = """
CREATE PROCESSOR session_close RETURNS (what STRING, n BIGINT) LANGUAGE PYTHON AS $$
class SessionClose:
    time_mode = "event"
    def init(self, handle):
        self.handle = handle
        self.count = handle.value_state("count")
    def handle_input_rows(self, key, rows, timer_values):
        for row in rows:
            n = (self.count.get() or 0) + 1
            self.count.update(n)
            for t in self.handle.list_timers():
                self.handle.delete_timer(t)
            self.handle.register_timer(int(row["ts"].timestamp() * 1000) + 10000)
            yield ("seen", n)
    def handle_expired_timer(self, key, timer_values, expired):
        yield ("fired", self.count.get())
        self.count.clear()
$$
"""

PROCESSING_PROCESSOR = """
CREATE PROCESSOR reminder RETURNS (what STRING, n BIGINT) LANGUAGE PYTHON AS $$
class Reminder:
    def init(self, handle):
        self.handle = handle
        self.count = handle.value_state("count")
    def handle_input_rows(self, key, rows, timer_values):
        for row in rows:
            n = (self.count.get() or 0) + 1
            self.count.update(n)
            if not self.handle.list_timers():
                self.handle.register_timer(row["due_ms"])
            yield ("seen", n)
    def handle_expired_timer(self, key, timer_values, expired):
        yield ("fired", self.count.get())
        self.count.clear()
$$
"""


def rows_by_key(broker, topic, what):
    """Per key, the n of every `what` row in TOPIC, in the topic's order."""
    out = defaultdict(list)
    for r in to_end(broker, topic):
        if r["what"] == what:
            out[r["k"]].append(r["n"])
    return out


def wait_until(cond, what, server):
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} within {TIMEOUT_S}s\n{server.log_tail()}")
        time.sleep(0.5)


def checkpoint_epoch(progress):
    cp = progress.get("checkpoint")
    return cp["epoch"] if cp else -1


def wait_for_checkpoint(server, flow):
    """Waits until the flow's state as it is now is in a complete checkpoint:
    the changes made so far are in the epoch in progress or the one before
    it, so the checkpoint two epochs past the newest one holds them."""
    start = checkpoint_epoch(server.progress(flow))
    wait_until(lambda: checkpoint_epoch(server.progress(flow)) >= start + 2,
               f"flow {flow}: a checkpoint past epoch {start + 1}", server)


def kill_9_and_restart(server, tmp_path, run):
    server.proc.kill()
    server.proc.wait(timeout=10)
    return start_server(tmp_path, run)


def wait_running(server, flow):
    wait_until(lambda: {r[0]: r[2] for r in server.query("SHOW FLOWS")}.get(flow) == "running",
               f"flow {flow} running again", server)


def setup_flow(broker, tmp_path, uid, processor, name, columns):
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    partitions = broker.create_topic(topic_in)
    broker.create_topic(topic_out)
    server = start_server(tmp_path, 0)
    opts = broker.options()
    server.run_script(processor + f""";
        CREATE SOURCE ev ({columns})
            WITH ({opts}, subscribe = '{topic_in}', startingOffsets = 'earliest', format = 'json');
        CREATE SINK out WITH ({opts}, topic = '{topic_out}', format = 'json');
        CREATE FLOW t INTO out CHECKPOINT INTERVAL '1 second' WITH ('shuffle.partitions' = '2')
            AS SELECT * FROM TRANSFORM(ev PARTITION BY k USING PROCESSOR {name});
    """)
    return server, topic_in, topic_out, partitions


def ts_text(t):
    return t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def test_kill_9_event_time_timers_fire_once_and_stay_cleared(broker, tmp_path):
    uid = unique("ptimer_ev")
    server, topic_in, topic_out, partitions = setup_flow(
        broker, tmp_path, uid, EVENT_PROCESSOR, "session_close", "k STRING, ts TIMESTAMP, "
        "WATERMARK FOR ts AS ts")
    keys = [f"k{i}" for i in range(KEYS)]
    base = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def closer(at, run):
        # One record per partition, so that every partition moves the watermark.
        broker.produce(topic_in, [{"k": f"z{run}_{p}", "ts": ts_text(at)} for p in range(partitions)],
                       partition=lambda r: int(r["k"].rsplit("_", 1)[1]))

    try:
        # Rows within the first second of event time: every key's timer is at
        # its last row + 10 s, which the watermark does not reach yet.
        broker.produce(topic_in, [{"k": k, "ts": ts_text(base + timedelta(milliseconds=j * KEYS + i))}
                                  for j in range(ROWS_PER_KEY) for i, k in enumerate(keys)])
        wait_until(lambda: all(set(rows_by_key(broker, topic_out, "seen")[k]) >=
                               set(range(1, ROWS_PER_KEY + 1)) for k in keys),
                   "every row seen", server)
        wait_for_checkpoint(server, "t")
        assert not rows_by_key(broker, topic_out, "fired"), "a timer fired before the watermark"

        # Killed with every timer pending; after the restart the watermark
        # passes them: each fires with the count the checkpoint held.
        server = kill_9_and_restart(server, tmp_path, 1)
        closer(base + timedelta(hours=1), 1)
        wait_until(lambda: all(k in rows_by_key(broker, topic_out, "fired") for k in keys),
                   "every key's timer fired after the restart", server)
        wait_for_checkpoint(server, "t")

        # Killed again after the firings were checkpointed: they do not come
        # back, and the counts they cleared stay cleared.
        server = kill_9_and_restart(server, tmp_path, 2)
        wait_running(server, "t")
        broker.produce(topic_in, [{"k": k, "ts": ts_text(base + timedelta(hours=1, seconds=1))}
                                  for k in keys])
        closer(base + timedelta(hours=2), 2)
        wait_until(lambda: all(len(rows_by_key(broker, topic_out, "fired")[k]) >= 2 for k in keys),
                   "every key's second timer fired", server)
        # Give a third firing the time to show: the closers' own timers fire
        # at the same watermark, after the keys'.
        wait_until(lambda: all(f"z1_{p}" in rows_by_key(broker, topic_out, "fired")
                               for p in range(partitions)), "the first closers' timers fired", server)

        fired = rows_by_key(broker, topic_out, "fired")
        seen = rows_by_key(broker, topic_out, "seen")
        for k in keys:
            # Once with the checkpointed count, once with the row after it
            # (a key's rows may sit in several partitions of the output).
            assert sorted(fired[k]) == [1, ROWS_PER_KEY], (k, fired[k])
            # The first rows were checkpointed before the kill, so none is
            # written twice; the row after the firing counts from 1.
            assert sorted(seen[k]) == [1] + list(range(1, ROWS_PER_KEY + 1)), (k, seen[k])
        for p in range(partitions):
            assert fired[f"z1_{p}"] == [1], (p, fired[f"z1_{p}"])
    finally:
        code = server.stop()
        assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{server.log_tail()}"


def test_kill_9_processing_time_timers_fire_on_the_clock_after_restart(broker, tmp_path):
    uid = unique("ptimer_pt")
    server, topic_in, topic_out, _ = setup_flow(
        broker, tmp_path, uid, PROCESSING_PROCESSOR, "reminder", "k STRING, due_ms BIGINT")
    keys = [f"k{i}" for i in range(KEYS)]
    try:
        due = int(time.time() * 1000) + PROCESSING_DELAY_MS
        broker.produce(topic_in, [{"k": k, "due_ms": due} for _ in range(ROWS_PER_KEY) for k in keys])
        wait_until(lambda: all(set(rows_by_key(broker, topic_out, "seen")[k]) >=
                               set(range(1, ROWS_PER_KEY + 1)) for k in keys),
                   "every row seen", server)
        wait_for_checkpoint(server, "t")

        # Killed with the timers pending (normally: a slow machine may have
        # fired some already, and the kill may have come before the
        # checkpoint of those firings). No input comes after the restart:
        # the restored timers fire on the clock.
        server.proc.kill()
        server.proc.wait(timeout=10)
        fired_before = set(rows_by_key(broker, topic_out, "fired"))
        server = start_server(tmp_path, 1)
        wait_until(lambda: all(k in rows_by_key(broker, topic_out, "fired") for k in keys),
                   "every key's timer fired after the restart, with no input", server)

        fired = rows_by_key(broker, topic_out, "fired")
        for k in keys:
            if k in fired_before:
                # Fired before the kill: again after it unless a checkpoint
                # took the firing first.
                assert fired[k] in ([ROWS_PER_KEY], [ROWS_PER_KEY] * 2), (k, fired[k])
            else:
                assert fired[k] == [ROWS_PER_KEY], (k, fired[k])

        # The counts the timers cleared stay cleared.
        broker.produce(topic_in, [{"k": k, "due_ms": due + 3600 * 1000} for k in keys])
        wait_until(lambda: all(len(rows_by_key(broker, topic_out, "seen")[k]) > ROWS_PER_KEY
                               for k in keys), "every key's new row seen", server)
        seen = rows_by_key(broker, topic_out, "seen")
        for k in keys:
            assert sorted(seen[k]) == [1] + list(range(1, ROWS_PER_KEY + 1)), (k, seen[k])
    finally:
        code = server.stop()
        assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{server.log_tail()}"
