"""The Kinesis source against kinesalite (scripts/kinesalite.sh; .ci/run
starts it and sets RTSQL_KINESIS_ENDPOINT, without which these tests skip).

A stream of two shards is read by a flow into a Kafka sink on the embedded
broker: every record once, with its metadata columns equal to what the
service holds (shard, sequence number, partition key, arrival time), through
a json source and a raw one; the refusals at CREATE SOURCE and CREATE FLOW
(a missing stream, an endpoint nobody listens on). kill -9 while records are
put: the flow resumes after its checkpointed sequence numbers (exactly once
into Apache Kafka when RTSQL_KAFKA_BOOTSTRAP names one). Shard splits before
and during a flow: children are read after their parents, each key in order."""

import base64
import json
import os
import random
import socket
import threading
import time
from datetime import datetime, timezone

import psycopg
import pytest

from conftest import Kafka, Server, unique, wait_for
from kinesalite import Kinesalite, endpoint_or_skip


@pytest.fixture(scope="module")
def kinesis():
    return Kinesalite(endpoint_or_skip())


@pytest.fixture(scope="module")
def embedded(server):
    return Kafka("embedded", "embedded", server.embedded_bootstrap)


def source_options(kinesis, stream, start="TRIM_HORIZON", extra=""):
    return (f"connector = 'kinesis', 'kinesis.stream' = '{stream}', 'kinesis.region' = 'us-east-1', "
            f"'kinesis.endpoint' = '{kinesis.endpoint}', 'kinesis.accessKeyId' = 'AKIDTEST', "
            f"'kinesis.secretKey' = 'secret', 'kinesis.startingPosition' = '{start}', "
            f"'kinesis.pollInterval' = '20 ms'{extra}")


def iso_millis(seconds):
    """The service's arrival time (seconds, a float) as the json sink writes a timestamp."""
    ms = round(seconds * 1000)
    t = datetime.fromtimestamp(ms // 1000, tz=timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def service_rows(kinesis, stream):
    """Every record of the stream as the service holds it, by sequence number."""
    out = {}
    for shard in kinesis.shards(stream):
        for r in kinesis.read_shard(stream, shard["ShardId"]):
            out[r["SequenceNumber"]] = (shard["ShardId"], r)
    return out


def sql_error(server, sql):
    with pytest.raises(psycopg.Error) as info:
        server.query(sql)
    return info.value


def test_reads_every_shard_with_its_metadata(server, kinesis, embedded):
    stream, uid = unique("clicks"), unique("k")
    kinesis.create_stream(stream, 2)
    # Records before the flow starts (TRIM_HORIZON reads them) and after.
    before = [{"user": f"u{i}", "amount": i * 1.5} for i in range(20)]
    for i, r in enumerate(before):
        kinesis.put(stream, json.dumps(r), f"key{i % 7}")

    server.run_script(f"""
        CREATE SOURCE {uid}_src (user STRING, amount DOUBLE) WITH ({source_options(kinesis, stream)});
        CREATE SOURCE {uid}_raw WITH ({source_options(kinesis, stream)}, format = 'raw');
        CREATE SINK {uid}_out WITH ({embedded.options()}, topic = '{uid}_out', format = 'json');
        CREATE SINK {uid}_rawout WITH ({embedded.options()}, topic = '{uid}_rawout', format = 'json');
        CREATE FLOW {uid}_f INTO {uid}_out AS
            SELECT user, amount, _partitionKey AS pk, _sequenceNumber AS seq, _shardId AS shard,
                   _streamName AS stream, _approximateArrivalTimestamp AS arrived
            FROM {uid}_src;
        CREATE FLOW {uid}_r INTO {uid}_rawout AS
            SELECT CAST(data AS STRING) AS data, streamName, partitionKey, sequenceNumber,
                   approximateArrivalTimestamp, shardId
            FROM {uid}_raw;
    """)
    after = [{"user": f"v{i}", "amount": i + 0.25} for i in range(30)]
    for i, r in enumerate(after):
        kinesis.put(stream, json.dumps(r), f"key{i % 5}")

    truth = service_rows(kinesis, stream)
    assert len(truth) == 50
    assert len({shard for shard, _ in truth.values()}) == 2, "the keys must reach both shards"

    got = embedded.consume_json(f"{uid}_out", n=50, timeout=60, grace=1.0)
    assert len(got) == 50, f"{len(got)} rows\n{server.log_tail()}"
    by_seq = {row["seq"]: row for row in got}
    assert len(by_seq) == 50, "a record was written twice"
    for seq, (shard, r) in truth.items():
        data = json.loads(base64.b64decode(r["Data"]))
        assert by_seq[seq] == {"user": data["user"], "amount": data["amount"], "pk": r["PartitionKey"],
                               "seq": seq, "shard": shard, "stream": stream,
                               "arrived": iso_millis(r["ApproximateArrivalTimestamp"])}

    raw = embedded.consume_json(f"{uid}_rawout", n=50, timeout=60, grace=1.0)
    assert len(raw) == 50
    for row in raw:
        shard, r = truth[row["sequenceNumber"]]
        assert row == {"data": base64.b64decode(r["Data"]).decode(), "streamName": stream,
                       "partitionKey": r["PartitionKey"], "sequenceNumber": r["SequenceNumber"],
                       "approximateArrivalTimestamp": iso_millis(r["ApproximateArrivalTimestamp"]),
                       "shardId": shard}

    # One source task per shard, each shard a partition with its record count.
    progress = server.wait_progress(
        f"{uid}_f", lambda p: sum(p["sources"][0]["endOffset"].get(s, {}).get(n, 0)
                                   for s, parts in p["sources"][0]["endOffset"].items()
                                   for n in parts) == 50 if p and p.get("sources") else False)
    ends = progress["sources"][0]["endOffset"]
    assert sorted(ends) == sorted(s["ShardId"] for s in kinesis.shards(stream)), ends
    assert progress["sources"][0]["description"] == f"KinesisSource[{stream}]"
    for flow in (f"{uid}_f", f"{uid}_r"):
        server.query(f"DROP FLOW {flow}")


def test_latest_reads_only_what_arrives_after_the_start(server, kinesis, embedded):
    stream, uid = unique("latest"), unique("k")
    kinesis.create_stream(stream, 2)
    for i in range(5):
        kinesis.put(stream, json.dumps({"n": -i}), f"old{i}")
    server.run_script(f"""
        CREATE SOURCE {uid}_src (n INT) WITH ({source_options(kinesis, stream, start='LATEST')});
        CREATE SINK {uid}_out WITH ({embedded.options()}, topic = '{uid}_out', format = 'json');
        CREATE FLOW {uid}_f INTO {uid}_out AS SELECT n FROM {uid}_src;
    """)
    for i in range(10):
        kinesis.put(stream, json.dumps({"n": i}), f"new{i}")
    got = embedded.consume_json(f"{uid}_out", n=10, timeout=60, grace=1.0)
    assert sorted(r["n"] for r in got) == list(range(10))
    server.query(f"DROP FLOW {uid}_f")


def test_refusals_at_create(server, kinesis):
    uid = unique("k")
    e = sql_error(server, f"CREATE SOURCE {uid}_a (a INT) WITH (connector = 'kinesis', "
                          "'kinesis.region' = 'us-east-1')")
    assert e.sqlstate == "22023" and "kinesis.stream" in str(e)
    e = sql_error(server, f"CREATE SOURCE {uid}_b (a INT) WITH ({source_options(kinesis, 's', start='EARLIEST')})")
    assert e.sqlstate == "22023" and "TRIM_HORIZON" in str(e)
    e = sql_error(server, f"CREATE SOURCE {uid}_c (a INT) WITH ({source_options(kinesis, 's')}, "
                          "'kinesis.streem' = 'x')")
    assert e.sqlstate == "22023" and "kinesis.stream" in str(e)

    # A stream that does not exist: CREATE FLOW names it.
    missing = unique("missing")
    server.run_script(f"""
        CREATE SOURCE {uid}_m (a INT) WITH ({source_options(kinesis, missing)});
        CREATE SINK {uid}_out WITH (connector = 'blackhole');
    """)
    e = sql_error(server, f"CREATE FLOW {uid}_fm INTO {uid}_out AS SELECT a FROM {uid}_m")
    assert e.sqlstate == "42704" and missing in str(e), str(e)

    # An endpoint nobody listens on: a clear error at once, no hang.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    server.query(f"CREATE SOURCE {uid}_d (a INT) WITH (connector = 'kinesis', 'kinesis.stream' = 's', "
                 f"'kinesis.region' = 'us-east-1', 'kinesis.endpoint' = 'http://127.0.0.1:{dead}', "
                 "'kinesis.accessKeyId' = 'A', 'kinesis.secretKey' = 'B')")
    e = sql_error(server, f"CREATE FLOW {uid}_fd INTO {uid}_out AS SELECT a FROM {uid}_d")
    assert e.sqlstate == "08006" and f"127.0.0.1:{dead}" in str(e), str(e)

    # Dead letters go to a Kafka cluster the source must name.
    e = sql_error(server, f"CREATE SOURCE {uid}_dl (a INT) WITH ({source_options(kinesis, 's')}, "
                          "'on.error' = 'dead-letter', 'dead-letter.topic' = 'dl')")
    assert e.sqlstate == "22023" and "dead-letter.kafka.bootstrap.servers" in str(e), str(e)
    e = sql_error(server, f"CREATE SOURCE {uid}_dt (a INT) WITH ({source_options(kinesis, 's')}, "
                          "'on.error' = 'dead-letter', "
                          "'dead-letter.kafka.bootstrap.servers' = 'embedded')")
    assert e.sqlstate == "22023" and "dead-letter.topic" in str(e), str(e)
    e = sql_error(server, f"CREATE SOURCE {uid}_ds (a INT) WITH ({source_options(kinesis, 's')}, "
                          "'dead-letter.topic' = 'dl')")
    assert e.sqlstate == "22023" and "'on.error' = 'dead-letter'" in str(e), str(e)


def test_undecodable_records_reach_the_dead_letter_topic(server, kinesis, embedded):
    stream, uid = unique("dead"), unique("k")
    kinesis.create_stream(stream, 2)
    good = [{"id": i, "amount": i * 1.5} for i in range(12)]
    bad = [(b"{not json", "bad-key-1"), (b'{"id": "two", "amount": 2}', "bad-key-2"),
           (bytes([0xff, 0x00, 0x7b]), "bad-key-3")]
    for i, r in enumerate(good[:6]):
        kinesis.put(stream, json.dumps(r), f"key{i % 4}")
    for data, key in bad:
        kinesis.put(stream, data, key)
    for i, r in enumerate(good[6:]):
        kinesis.put(stream, json.dumps(r), f"key{i % 4}")
    truth = service_rows(kinesis, stream)
    bad_seqs = {seq: (shard, r) for seq, (shard, r) in truth.items()
                if r["PartitionKey"].startswith("bad-")}
    assert len(bad_seqs) == 3

    dlq = f"{uid}_dlq"
    server.run_script(f"""
        CREATE SOURCE {uid}_src (id BIGINT, amount DOUBLE) WITH ({source_options(kinesis, stream)},
            'on.error' = 'dead-letter', 'dead-letter.topic' = '{dlq}',
            'dead-letter.kafka.bootstrap.servers' = 'embedded');
        CREATE SINK {uid}_out WITH ({embedded.options()}, topic = '{uid}_out', format = 'json');
        CREATE FLOW {uid}_f INTO {uid}_out AS SELECT id, amount FROM {uid}_src;
    """)
    rows = embedded.consume_json(f"{uid}_out", n=len(good), timeout=60, grace=1.0)
    assert sorted(r["id"] for r in rows) == list(range(12)), f"{rows}\n{server.log_tail()}"

    letters = embedded.consume(dlq, n=3, timeout=60, grace=1.0)
    assert len(letters) == 3, f"{letters}\n{server.log_tail()}"
    for m in letters:
        named = dict(m.headers())
        assert [k for k, _ in m.headers()] == ["rtsql.error", "rtsql.flow", "rtsql.source",
                                               "rtsql.stream", "rtsql.shard",
                                               "rtsql.sequence.number"]
        seq = named["rtsql.sequence.number"].decode()
        shard, r = bad_seqs[seq]
        assert m.value() == base64.b64decode(r["Data"])
        assert m.key() == r["PartitionKey"].encode()
        assert named["rtsql.shard"] == shard.encode()
        assert named["rtsql.stream"] == stream.encode()
        assert named["rtsql.flow"] == f"{uid}_f".encode()
        assert named["rtsql.source"] == f"{uid}_src".encode()
        assert named["rtsql.error"]
        if r["PartitionKey"] == "bad-key-2":
            assert named["rtsql.error"] == b"field 'id': expected BIGINT, got \"two\""
    assert sorted(dict(m.headers())["rtsql.sequence.number"].decode() for m in letters) \
        == sorted(bad_seqs)

    def counted(p):
        if not p or not p.get("sources"):
            return False
        return sum(s.get("numDeadLetters", 0) for s in p["sources"]) == 3
    prog = server.wait_progress(f"{uid}_f", counted)
    assert counted(prog), prog
    assert sum(s["numDecodeErrors"] for s in prog["sources"]) == 3, prog
    server.query(f"DROP FLOW {uid}_f")


# -- recovery ----------------------------------------------------------------

RECOVERY_RECORDS = 600
RECOVERY_KEYS = 12


class SteadyPutter:
    """Puts RECORDS (data, key) into STREAM in batches of 20 every 50 ms from
    a thread of its own, so that kills land mid-stream."""

    def __init__(self, kinesis, stream, records):
        self.errors = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(kinesis, stream, records))
        self.thread.start()

    def _run(self, kinesis, stream, records):
        try:
            for start in range(0, len(records), 20):
                t0 = time.monotonic()
                kinesis.put_records(stream, records[start:start + 20])
                time.sleep(max(0.0, 0.05 - (time.monotonic() - t0)))
        except Exception as e:  # reported by finish(), in the test's thread
            self.errors.append(e)
        finally:
            self.done.set()

    def finish(self):
        self.thread.join(timeout=120)
        assert self.done.is_set(), "the putter did not finish"
        assert not self.errors, self.errors


def start_flow_server(tmp, run):
    s = Server(tmp)
    s.log_path = tmp / f"rtsqld.{run}.log"
    return s.start()


def checkpoint_epochs(server):
    """The epochs of the checkpoints on disk of the server's flows."""
    return sorted(int(p.name) for p in server.data_dir.glob("**/checkpoints/[0-9]*") if p.name.isdigit())


def sink_brokers():
    """The broker the recovery flow writes to, which must outlive the killed
    rtsqld: the module server's embedded broker (at least once), and Apache
    Kafka when RTSQL_KAFKA_BOOTSTRAP is set (exactly once)."""
    return ["embedded"] + (["real"] if os.environ.get("RTSQL_KAFKA_BOOTSTRAP") else [])


@pytest.mark.parametrize("sink_broker", sink_brokers())
def test_kill_9_resumes_from_the_checkpointed_sequence_numbers(server, kinesis, tmp_path, sink_broker):
    if sink_broker == "embedded":
        broker = Kafka("embedded", server.embedded_bootstrap, server.embedded_bootstrap)
        delivery = ""
    else:
        addr = os.environ["RTSQL_KAFKA_BOOTSTRAP"]
        broker = Kafka("real", addr, addr)
        delivery = "WITH ('delivery' = 'exactly-once')"
    stream, uid = unique("crash"), unique("k")
    kinesis.create_stream(stream, 2)
    topic = f"{uid}_out"
    broker.create_topic(topic)

    flow_server = start_flow_server(tmp_path, 0)
    try:
        flow_server.run_script(f"""
            CREATE SOURCE src (n INT) WITH ({source_options(kinesis, stream)});
            CREATE SINK out WITH ({broker.options()}, topic = '{topic}', format = 'json', key = 'pk');
            CREATE FLOW f INTO out CHECKPOINT INTERVAL '1 second' {delivery}
                AS SELECT n, _partitionKey AS pk, _sequenceNumber AS seq FROM src;
        """)
        records = [(json.dumps({"n": i}), f"key{i % RECOVERY_KEYS}") for i in range(RECOVERY_RECORDS)]
        putter = SteadyPutter(kinesis, stream, records)
        rng = random.Random(os.getpid())
        for run in range(1, 3):
            time.sleep(rng.uniform(1.0, 2.0))
            flow_server.proc.kill()
            flow_server.proc.wait(timeout=10)
            flow_server = start_flow_server(tmp_path, run)
        putter.finish()

        def everything():
            rows = [json.loads(m.value()) for m in broker.consume_to_end(topic, timeout=10)]
            return rows if len({r["n"] for r in rows}) == RECOVERY_RECORDS else None
        rows = wait_for(everything, 90, f"all {RECOVERY_RECORDS} records in {topic}\n{flow_server.log_tail()}")
        assert sorted({r["n"] for r in rows}) == list(range(RECOVERY_RECORDS))
        if sink_broker == "real":
            # One transaction per epoch, committed with the checkpoint: a
            # read_committed consumer sees every record once.
            assert len(rows) == RECOVERY_RECORDS, f"{len(rows) - RECOVERY_RECORDS} records twice"
        else:
            # At least once: what was read after the last checkpoint before a
            # kill comes again, never the whole stream.
            assert len(rows) < 2 * RECOVERY_RECORDS
        # Each partition key's records in the order they were put.
        firsts = {}
        order = {}
        for r in rows:
            if r["n"] not in firsts:
                firsts[r["n"]] = True
                order.setdefault(r["pk"], []).append(r["n"])
        for key, ns in order.items():
            assert ns == sorted(ns), f"{key} out of order: {ns}"

        # Once a checkpoint covers every record, a kill -9 reads none again:
        # only the records put after the restart come.
        seen_at = max(checkpoint_epochs(flow_server) or [0])
        wait_for(lambda: max(checkpoint_epochs(flow_server) or [0]) >= seen_at + 2, 30,
                 "two checkpoints after the last record")
        before = len(broker.consume_to_end(topic, timeout=10))
        flow_server.proc.kill()
        flow_server.proc.wait(timeout=10)
        flow_server = start_flow_server(tmp_path, 9)
        kinesis.put_records(stream, [(json.dumps({"n": RECOVERY_RECORDS + i}), f"late{i}") for i in range(10)])
        wait_for(lambda: len(broker.consume_to_end(topic, timeout=10)) >= before + 10, 60,
                 f"the 10 late records\n{flow_server.log_tail()}")
        time.sleep(1.0)
        rows = [json.loads(m.value()) for m in broker.consume_to_end(topic, timeout=10)]
        assert len(rows) == before + 10, "records before the checkpoint were read again"
        assert sorted(r["n"] for r in rows if r["n"] >= RECOVERY_RECORDS) == \
            list(range(RECOVERY_RECORDS, RECOVERY_RECORDS + 10))
    finally:
        code = flow_server.stop()
        assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{flow_server.log_tail()}"


# -- resharding --------------------------------------------------------------

def split_in_half(kinesis, stream, shard_id):
    shard = next(s for s in kinesis.shards(stream) if s["ShardId"] == shard_id)
    lo = int(shard["HashKeyRange"]["StartingHashKey"])
    hi = int(shard["HashKeyRange"]["EndingHashKey"])
    kinesis.split(stream, shard_id, (lo + hi + 1) // 2)


def put_phase(kinesis, stream, phase, count, keys):
    kinesis.put_records(stream, [(json.dumps({"phase": phase, "n": i}), f"key{i % keys}")
                                 for i in range(count)])


def test_children_are_read_after_their_parents(server, kinesis, embedded):
    """A split before the flow starts (the parent closed, holding the first
    records of each key, its children the next ones) and a split while it runs:
    every record once, and each key's records in the order they were put."""
    stream, uid = unique("reshard"), unique("k")
    kinesis.create_stream(stream, 2)
    keys = 16
    put_phase(kinesis, stream, 1, 200, keys)
    split_in_half(kinesis, stream, "shardId-000000000000")
    put_phase(kinesis, stream, 2, 200, keys)

    server.run_script(f"""
        CREATE SOURCE {uid}_src (phase INT, n INT) WITH ({source_options(kinesis, stream)});
        CREATE SINK {uid}_out WITH ({embedded.options()}, topic = '{uid}_out', format = 'json', key = 'pk');
        CREATE FLOW {uid}_f INTO {uid}_out AS
            SELECT phase, n, _partitionKey AS pk, _shardId AS shard FROM {uid}_src;
    """)
    got = embedded.consume_json(f"{uid}_out", n=400, timeout=60)
    assert len(got) >= 400, f"{len(got)} rows\n{server.log_tail()}"
    # The other shard splits while the flow reads; its children are found.
    split_in_half(kinesis, stream, "shardId-000000000001")
    put_phase(kinesis, stream, 3, 200, keys)

    got = embedded.consume_json(f"{uid}_out", n=600, timeout=60, grace=1.0)
    assert len(got) == 600, f"{len(got)} rows\n{server.log_tail()}"
    assert len({(r["phase"], r["n"]) for r in got}) == 600
    shards = {s["ShardId"]: s for s in kinesis.shards(stream)}
    assert len(shards) == 6
    assert {r["shard"] for r in got} == set(shards), "every shard, parents and children, was read"
    by_key = {}
    for r in got:
        by_key.setdefault(r["pk"], []).append((r["phase"], r["n"]))
    for key, seq in by_key.items():
        assert seq == sorted(seq), f"{key} out of order: {seq}"
    # A child's records follow its parent's: phase 2 of shard 0's keys came
    # from its children, phase 3 of shard 1's from its own.
    parents = {s.get("ParentShardId") for s in shards.values()} - {None}
    assert parents == {"shardId-000000000000", "shardId-000000000001"}
    progress = server.progress(f"{uid}_f")
    assert set(progress["sources"][0]["endOffset"]) <= set(shards)
    server.query(f"DROP FLOW {uid}_f")
