"""The Kinesis source against kinesalite (scripts/kinesalite.sh; .ci/run
starts it and sets RTSQL_KINESIS_ENDPOINT, without which these tests skip).

A stream of two shards is read by a flow into a Kafka sink on the embedded
broker: every record once, with its metadata columns equal to what the
service holds (shard, sequence number, partition key, arrival time), through
a json source and a raw one; the refusals at CREATE SOURCE and CREATE FLOW
(a missing stream, an endpoint nobody listens on)."""

import base64
import json
import socket
from datetime import datetime, timezone

import psycopg
import pytest

from conftest import Kafka, unique
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

