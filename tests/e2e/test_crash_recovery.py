"""Crash recovery: rtsqld is killed with SIGKILL at random moments while keyed
input streams in, restarted on the same data directory without any statement,
and every flow must end with exactly the results of the input.

Three flows read the same input: a GROUP BY count, a tumbling-window count, and
a DISTINCT ON dedup. Delivery is at-least-once, so a flow may write a row again
after a crash, but its state is restored exactly from the last checkpoint: the
highest count written for each key (and window) must equal the true count, no
more (double counting) and no less (loss); the dedup flow must have written
every distinct id and no other.

The broker must outlive the killed server: on the "embedded" run it is the
embedded broker of a second rtsqld that is never killed; on the "real" run
(RTSQL_KAFKA_BOOTSTRAP) an Apache Kafka broker.
"""

import json
import os
import random
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone

import psycopg
import pytest

from conftest import unique, wait_for, start_server, SteadyProducer

KEYS = 40
EVENTS = 4000          # records produced in all
RATE = 500             # records per second
KILLS = 3
CONVERGE_TIMEOUT_S = 120


def kill_storm(server, tmp, seed):
    """KILLS times: wait 1.5-2.5 s, SIGKILL rtsqld (no epoch end, no flush, no
    final checkpoint) and start it again on the same data directory, with no
    statement. Returns the last server."""
    rng = random.Random(seed)
    for run in range(1, KILLS + 1):
        time.sleep(rng.uniform(1.5, 2.5))
        server.proc.kill()
        server.proc.wait(timeout=10)
        server = start_server(tmp, run)
    return server


def to_end(broker, topic):
    return [json.loads(m.value()) for m in broker.consume_to_end(topic, timeout=3)]


def event(i, base):
    ts = base + timedelta(milliseconds=10 * i)
    return {"k": f"k{i % KEYS}", "id": i // 2,
            "ts": ts.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]}


def window_of(ts_text):
    t = datetime.strptime(ts_text, "%Y-%m-%d %H:%M:%S.%f")
    return t.replace(microsecond=0).strftime("%Y-%m-%d %H:%M:%S")


def test_kill_9_recovery_keeps_counts_exact(broker, tmp_path):
    uid = unique("crash")
    topic_in, t_counts, t_windows, t_dedup = (f"{uid}_in", f"{uid}_counts",
                                              f"{uid}_windows", f"{uid}_dedup")
    for t in (topic_in, t_counts, t_windows, t_dedup):
        broker.create_topic(t)

    server = start_server(tmp_path, 0)
    opts = broker.options()
    server.run_script(f"""
        CREATE SOURCE ev (k STRING, id BIGINT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
            WITH ({opts}, subscribe = '{topic_in}', startingOffsets = 'earliest', format = 'json');
        CREATE SINK counts WITH ({opts}, topic = '{t_counts}', format = 'json');
        CREATE SINK windows WITH ({opts}, topic = '{t_windows}', format = 'json');
        CREATE SINK dedup WITH ({opts}, topic = '{t_dedup}', format = 'json');
        CREATE FLOW c INTO counts CHECKPOINT INTERVAL '1 second' WITH ('shuffle.partitions' = '2')
            AS SELECT k, count(*) AS n FROM ev GROUP BY k;
        CREATE FLOW w INTO windows CHECKPOINT INTERVAL '1 second' WITH ('shuffle.partitions' = '2')
            AS SELECT window.start AS ws, k, count(*) AS n FROM ev GROUP BY window(ts, '1 second'), k;
        CREATE FLOW d INTO dedup CHECKPOINT INTERVAL '1 second' WITH ('shuffle.partitions' = '2')
            AS SELECT DISTINCT ON (id) id, k FROM ev;
    """)

    base = datetime(2026, 1, 1, tzinfo=timezone.utc)
    records = [event(i, base) for i in range(EVENTS)]
    producer = SteadyProducer(broker, topic_in, len(records), RATE, lambda a, b: records[a:b])
    try:
        server = kill_storm(server, tmp_path, seed=os.getpid())
        producer.finish()

        # The truth.
        true_counts = defaultdict(int)
        true_windows = defaultdict(int)
        for r in records:
            true_counts[r["k"]] += 1
            true_windows[(window_of(r["ts"]), r["k"])] += 1
        true_ids = {r["id"] for r in records}

        # Rows keep coming until every flow has caught up; wait for the truth.
        deadline = time.monotonic() + CONVERGE_TIMEOUT_S
        while True:
            counts = defaultdict(int)
            for r in to_end(broker, t_counts):
                counts[r["k"]] = max(counts[r["k"]], r["n"])
            windows = defaultdict(int)
            for r in to_end(broker, t_windows):
                key = (r["ws"][:19].replace("T", " "), r["k"])
                windows[key] = max(windows[key], r["n"])
            ids = {r["id"] for r in to_end(broker, t_dedup)}
            # Overcounting never heals: fail on it at once.
            over = {k: (n, true_counts[k]) for k, n in counts.items() if n > true_counts[k]}
            assert not over, f"GROUP BY counted records twice: {over}"
            over_w = {k: (n, true_windows.get(k)) for k, n in windows.items()
                      if n > true_windows.get(k, 0)}
            assert not over_w, f"window counts too high: {list(over_w.items())[:5]}"
            assert ids <= true_ids, f"dedup wrote ids never produced: {sorted(ids - true_ids)[:5]}"
            if counts == true_counts and windows == true_windows and ids == true_ids:
                break
            if time.monotonic() > deadline:
                missing = {k: (counts.get(k), n) for k, n in true_counts.items() if counts.get(k) != n}
                raise AssertionError(
                    f"flows did not reach the true results within {CONVERGE_TIMEOUT_S}s: "
                    f"counts off for {len(missing)} keys {list(missing.items())[:5]}; "
                    f"windows {len(windows)} of {len(true_windows)}; "
                    f"dedup ids {len(ids)} of {len(true_ids)}\n{server.log_tail()}")
            time.sleep(1)

        # The restarted server says where it recovered from (the output may be
        # complete before the restarted flow has reported it).
        progress = server.wait_progress(
            "c", lambda p: p.get("recovery") is not None and p.get("checkpoint") is not None, timeout=60)
        assert progress["recovery"] is not None and progress["recovery"]["fromEpoch"] >= 0, progress
        assert progress["checkpoint"] is not None
        # The output can be complete from before the last kill while the
        # last restart still restores a flow: each must come back running.
        listed = []

        def all_running():
            listed[:] = server.query("SHOW FLOWS")
            return {r[0]: r[2] for r in listed} == {"c": "running", "w": "running",
                                                    "d": "running"}
        try:
            wait_for(all_running, 60, "every flow running again")
        except AssertionError as e:
            raise AssertionError(f"{e}: {listed}\n{server.log_tail()}") from None
    finally:
        code = server.stop()
        assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{server.log_tail()}"


def test_flow_that_cannot_start_is_retried_and_resumes_without_loss(broker, tmp_path):
    """A restored flow whose sink cannot be opened (its directory is gone)
    shows as recovering with the cause, is retried with backoff, and once the
    directory is back writes every record that arrived meanwhile."""
    uid = unique("retry")
    topic = f"{uid}_in"
    broker.create_topic(topic)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out_file = out_dir / "rows.jsonl"

    server = start_server(tmp_path, 0)
    server.run_script(f"""
        CREATE SOURCE ev (id BIGINT)
            WITH ({broker.options()}, subscribe = '{topic}', startingOffsets = 'earliest', format = 'json');
        CREATE SINK rows WITH (connector = 'file', path = '{out_file}', format = 'json');
        CREATE FLOW f INTO rows CHECKPOINT INTERVAL '1 second' AS SELECT id FROM ev;
    """)
    try:
        broker.produce(topic, [{"id": i} for i in range(20)])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if out_file.exists() and len(out_file.read_text().splitlines()) >= 20:
                break
            time.sleep(0.2)
        # A checkpoint after the first rows, so the restart resumes after them.
        server.wait_progress("f", lambda p: p["checkpoint"] is not None
                             and p["checkpoint"]["epoch"] >= 1, timeout=20)
        server.proc.kill()
        server.proc.wait(timeout=10)
        for p in out_dir.iterdir():
            p.unlink()
        out_dir.rmdir()

        server = start_server(tmp_path, 1)
        broker.produce(topic, [{"id": i} for i in range(20, 50)])
        deadline = time.monotonic() + 20
        status = None
        while time.monotonic() < deadline:
            rows = {r[0]: r for r in server.query("SHOW FLOWS")}
            status = rows.get("f")
            if status and status[2] == "recovering" and status[4] and "attempt" in status[4]:
                break
            time.sleep(0.2)
        assert status is not None and status[2] == "recovering", status
        assert str(out_file) in status[4], status
        p = server.progress("f")
        assert p["status"]["state"] == "recovering" and str(out_file) in p["status"]["reason"], p

        out_dir.mkdir()
        deadline = time.monotonic() + 60
        ids = set()
        while time.monotonic() < deadline:
            if out_file.exists():
                ids = {json.loads(line)["id"] for line in out_file.read_text().splitlines() if line}
                if set(range(20, 50)) <= ids:
                    break
            time.sleep(0.3)
        assert set(range(20, 50)) <= ids, f"missing after recovery: {sorted(set(range(20, 50)) - ids)}"
        assert ids <= set(range(50)), ids
        rows = {r[0]: r for r in server.query("SHOW FLOWS")}
        assert rows["f"][2] == "running", rows["f"]
        assert server.progress("f")["status"] == {"state": "running", "reason": None}
    finally:
        code = server.stop()
        assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{server.log_tail()}"


def test_kill_9_exactly_once_writes_every_result_once(broker, tmp_path):
    """With 'delivery' = 'exactly-once' each epoch's rows are one Kafka
    transaction committed with the checkpoint: after the same kill -9 storm a
    read_committed consumer sees every count of every key and of every
    (window, key) exactly once (1, 2, ..., n, no value twice) and every
    distinct id exactly once."""
    uid = unique("eos")
    topic_in, t_counts, t_windows, t_dedup = (f"{uid}_in", f"{uid}_counts", f"{uid}_windows",
                                              f"{uid}_dedup")
    for t in (topic_in, t_counts, t_windows, t_dedup):
        broker.create_topic(t)
    server = start_server(tmp_path, 0)
    opts = broker.options()
    if broker.name == "embedded":
        # The embedded broker has no real transactions: the flow is refused.
        try:
            server.run_script(f"""
                CREATE SINK counts WITH ({opts}, topic = '{t_counts}', format = 'json');
                CREATE SOURCE ev (k STRING) WITH ({opts}, subscribe = '{topic_in}', format = 'json');
            """)
            sql = ("CREATE FLOW c INTO counts WITH ('delivery' = 'exactly-once') "
                   "AS SELECT k, count(*) AS n FROM ev GROUP BY k")
            with pytest.raises(psycopg.errors.FeatureNotSupported) as err:
                server.query(sql)
            assert "needs Apache Kafka" in str(err.value)
            # The error points at the option that asked for transactions.
            assert err.value.diag.statement_position == str(sql.index("'exactly-once'") + 1)
            assert server.query("SHOW FLOWS") == []
        finally:
            assert server.stop() == 0
        return
    server.run_script(f"""
        CREATE SOURCE ev (k STRING, id BIGINT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
            WITH ({opts}, subscribe = '{topic_in}', startingOffsets = 'earliest', format = 'json');
        CREATE SINK counts WITH ({opts}, topic = '{t_counts}', format = 'json');
        CREATE SINK windows WITH ({opts}, topic = '{t_windows}', format = 'json');
        CREATE SINK dedup WITH ({opts}, topic = '{t_dedup}', format = 'json');
        CREATE FLOW c INTO counts CHECKPOINT INTERVAL '1 second'
            WITH ('shuffle.partitions' = '2', 'delivery' = 'exactly-once')
            AS SELECT k, count(*) AS n FROM ev GROUP BY k;
        CREATE FLOW w INTO windows CHECKPOINT INTERVAL '1 second'
            WITH ('shuffle.partitions' = '2', 'delivery' = 'exactly-once')
            AS SELECT window.start AS ws, k, count(*) AS n FROM ev GROUP BY window(ts, '1 second'), k;
        CREATE FLOW d INTO dedup CHECKPOINT INTERVAL '1 second'
            WITH ('shuffle.partitions' = '2', 'delivery' = 'exactly-once')
            AS SELECT DISTINCT ON (id) id, k FROM ev;
    """)
    base = datetime(2026, 1, 1, tzinfo=timezone.utc)
    records = [event(i, base) for i in range(EVENTS)]
    true_counts = defaultdict(int)
    true_windows = defaultdict(int)
    for r in records:
        true_counts[r["k"]] += 1
        true_windows[(window_of(r["ts"]), r["k"])] += 1
    true_ids = {r["id"] for r in records}

    producer = SteadyProducer(broker, topic_in, len(records), RATE, lambda a, b: records[a:b])
    try:
        server = kill_storm(server, tmp_path, seed=os.getpid() + 1)
        producer.finish()

        deadline = time.monotonic() + CONVERGE_TIMEOUT_S
        while True:
            seen = defaultdict(list)
            for r in to_end(broker, t_counts):
                seen[r["k"]].append(r["n"])
            seen_w = defaultdict(list)
            for r in to_end(broker, t_windows):
                seen_w[(r["ws"][:19].replace("T", " "), r["k"])].append(r["n"])
            ids = [r["id"] for r in to_end(broker, t_dedup)]
            for name, got in (("counts", seen), ("window counts", seen_w)):
                dup = {k: v for k, v in got.items() if len(v) != len(set(v))}
                assert not dup, f"a read_committed consumer saw {name} twice: {list(dup.items())[:3]}"
            dup_ids = sorted(i for i in set(ids) if ids.count(i) > 1)
            assert not dup_ids, f"dedup ids written twice: {dup_ids[:5]}"
            counts = {k: max(v) for k, v in seen.items()}
            windows = {k: max(v) for k, v in seen_w.items()}
            if counts == dict(true_counts) and windows == dict(true_windows) and set(ids) == true_ids:
                for k, v in seen.items():
                    assert sorted(v) == list(range(1, true_counts[k] + 1)), (k, sorted(v)[:10])
                for k, v in seen_w.items():
                    assert sorted(v) == list(range(1, true_windows[k] + 1)), (k, sorted(v)[:10])
                break
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"exactly-once flows did not reach the true results within "
                    f"{CONVERGE_TIMEOUT_S}s: {len(counts)} keys, {len(windows)} of "
                    f"{len(true_windows)} windows, ids {len(set(ids))} of "
                    f"{len(true_ids)}\n{server.log_tail()}")
            time.sleep(1)
    finally:
        code = server.stop()
        assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{server.log_tail()}"


# -- damaged checkpoints ------------------------------------------------------

def count_flow_at_100(broker, tmp_path, name):
    """A GROUP BY count over 100 records of one key, checkpointed and stopped
    with SIGTERM (final checkpoint, offsets committed). Returns the input and
    output topics and the flow's checkpoint directories."""
    uid = unique(name)
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    for t in (topic_in, topic_out):
        broker.create_topic(t)
    server = start_server(tmp_path, 0)
    opts = broker.options()
    server.run_script(f"""
        CREATE SOURCE ev (k STRING) WITH ({opts}, subscribe = '{topic_in}',
            startingOffsets = 'earliest', format = 'json');
        CREATE SINK out WITH ({opts}, topic = '{topic_out}', format = 'json');
        CREATE FLOW c INTO out CHECKPOINT INTERVAL '1 second' WITH ('shuffle.partitions' = '1')
            AS SELECT k, count(*) AS n FROM ev GROUP BY k;
    """)
    broker.produce(topic_in, [{"k": "a"}] * 100)
    wait_for(lambda: any(r["n"] == 100 for r in to_end(broker, topic_out)),
             60, "the count did not reach 100")
    # At least two checkpoints, so that one can be damaged and another used.
    wait_for(lambda: (server.progress("c")["checkpoint"] or {}).get("epoch", -1) >= 2,
             60, "the flow did not checkpoint")
    assert server.stop() == 0, server.log_tail()
    root = tmp_path / "data" / "flows" / "c" / "checkpoints"
    epochs = sorted(p for p in root.iterdir() if p.name.isdigit())
    assert len(epochs) >= 2, epochs
    return topic_in, topic_out, epochs


def flow_status(server, flow):
    """What SHOW FLOWS says of FLOW: (state, reason)."""
    status = server.progress(flow)["status"]
    return status["state"], status["reason"]


def test_every_checkpoint_damaged_fails_the_flow_until_reset(broker, tmp_path):
    topic_in, topic_out, epochs = count_flow_at_100(broker, tmp_path, "damaged")
    for e in epochs:
        (e / "checkpoint.meta").write_text("rtsql-checkpoint 1 12 00000000\nnot a checkpoint\n")
    written = len(broker.consume_to_end(topic_out, timeout=10))

    server = start_server(tmp_path, 1)
    try:
        broker.produce(topic_in, [{"k": "a"}] * 10)
        state, reason = wait_for(lambda: (lambda s: s if s[0] == "failed" else None)(
            flow_status(server, "c")), 60, "the flow was not failed")
        assert "cannot restore its state" in reason, reason
        assert "RESET STATE" in reason, reason
        # It stays failed (no retry runs it on from the committed offsets) and
        # writes nothing: in particular never a count of 10.
        assert len(broker.consume(topic_out, timeout=3)) == written
        assert flow_status(server, "c")[0] == "failed"
        assert "cannot restore" in server.log_path.read_text(errors="replace")
        # START FLOW alone cannot cure it, and says how.
        with pytest.raises(psycopg.Error) as err:
            server.query("START FLOW c")
        assert err.value.sqlstate == "XX001"
        assert "RESET STATE" in (err.value.diag.message_hint or ""), err.value.diag.message_hint

        # The reset discards the state and reads the topic from the start
        # again: the count is 110, never 10.
        try:
            server.query("START FLOW c RESET STATE")
        except psycopg.errors.ConnectionFailure:
            pass  # the broker was slow to answer: the reset stays, the supervisor retries
        rows = wait_for(lambda: (lambda rs: rs if any(r["n"] == 110 for r in rs) else None)(
            to_end(broker, topic_out)[written:]), 60,
            "the reset flow did not count 110")
        assert max(r["n"] for r in rows) == 110
        assert flow_status(server, "c")[0] == "running"
        progress = server.progress("c")
        assert progress["recovery"]["reset"] is True
    finally:
        code = server.stop()
    assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{server.log_tail()}"
    # After a restart the reset is done: the flow restores its new checkpoints.
    server = start_server(tmp_path, 2)
    try:
        progress = server.wait_progress("c", lambda p: p["recovery"] is not None
                                        and p["recovery"]["fromEpoch"] is not None)
        assert progress["recovery"]["reset"] is False, progress["recovery"]
        assert progress["batchId"] > int(epochs[-1].name)  # epochs went on after the reset
    finally:
        code = server.stop()
    assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{server.log_tail()}"


def test_a_damaged_newest_checkpoint_falls_back_visibly(broker, tmp_path):
    topic_in, topic_out, epochs = count_flow_at_100(broker, tmp_path, "fallback")
    newest = epochs[-1]
    (newest / "checkpoint.meta").write_text("torn")

    server = start_server(tmp_path, 1)
    try:
        broker.produce(topic_in, [{"k": "a"}] * 10)
        wait_for(lambda: any(r["n"] == 110 for r in to_end(broker, topic_out)),
                 60, "the count did not reach 110")
        over = [r["n"] for r in broker.consume_json(topic_out, timeout=2) if r["n"] > 110]
        assert not over, over
        recovery = server.progress("c")["recovery"]
        assert recovery["fromEpoch"] < int(newest.name), recovery
        assert recovery["skipped"][0]["epoch"] == int(newest.name), recovery
        assert "damaged" in recovery["skipped"][0]["reason"], recovery
        assert f"skipped the checkpoint of epoch {int(newest.name)}" in \
            server.log_path.read_text(errors="replace")
    finally:
        code = server.stop()
    assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{server.log_tail()}"
