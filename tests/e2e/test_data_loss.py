"""A flow restored at a position its log no longer holds (connectors/
restore_position.h): the embedded broker restarted empty, a topic deleted and
created again on Apache Kafka (RTSQL_KAFKA_BOOTSTRAP), a Kinesis stream
deleted and created again under its name (kinesalite, RTSQL_KINESIS_ENDPOINT).

By default the flow fails with SQLSTATE XX001, naming the topic (or stream),
the partition (or shard), the checkpointed position and what the log holds,
and stays failed until START FLOW ... RESET STATE. With the source's
'failOnDataLoss' = 'false' it goes on from the earliest record there is,
counts the gap in offsetsSkipped, and its GROUP BY count adds the new records
to the restored state exactly once."""

import json
import time

import psycopg
import pytest

from conftest import Kafka, unique, service_or_skip, wait_for, start_server
from kinesalite import Kinesalite, KinesisError, endpoint_or_skip

WAIT_S = 60


def flow_status(server, flow):
    status = server.progress(flow)["status"]
    return status["state"], status["reason"] or ""


def wait_state(server, flow, state):
    return wait_for(lambda: (lambda s: s if s[0] == state else None)(flow_status(server, flow)),
                    WAIT_S, f"flow {flow} was not {state} (last: {flow_status(server, flow)})")


def counts(broker, topic):
    return [json.loads(m.value())["n"] for m in broker.consume_to_end(topic, timeout=5)]


def wait_count(broker, topic, n):
    wait_for(lambda: n in counts(broker, topic), WAIT_S, f"the count did not reach {n}")


def skipped(server, flow, topic, partition="0"):
    return server.progress(flow)["sources"][0]["offsetsSkipped"].get(topic, {}).get(partition)


def count_flow(server, broker, topic_in, topic_out, extra=""):
    opts = broker.options()
    server.run_script(f"""
        CREATE SOURCE ev (k STRING) WITH ({opts}, subscribe = '{topic_in}',
            startingOffsets = 'earliest', format = 'json'{extra});
        CREATE SINK out WITH ({opts}, topic = '{topic_out}', format = 'json');
        CREATE FLOW c INTO out CHECKPOINT INTERVAL '1 second' WITH ('shuffle.partitions' = '1')
            AS SELECT k, count(*) AS n FROM ev GROUP BY k;
    """)


def embedded(server):
    return Kafka("embedded", "embedded", server.embedded_bootstrap)


def run_to_60_and_restart(tmp_path, extra=""):
    """A GROUP BY count over 60 records on the embedded broker, stopped with
    SIGTERM (final checkpoint at offset 60), and rtsqld started again: its
    embedded broker holds nothing any more. Returns the new server and topics."""
    uid = unique("dl")
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    server = start_server(tmp_path, 0)
    try:
        count_flow(server, embedded(server), topic_in, topic_out, extra)
        embedded(server).produce(topic_in, [{"k": "a"}] * 60, partition=0)
        wait_count(embedded(server), topic_out, 60)
        wait_for(lambda: (server.progress("c")["checkpoint"] or {}).get("epoch", -1) >= 1,
                 WAIT_S, "the flow did not checkpoint")
    finally:
        assert server.stop() == 0, server.log_tail()
    return start_server(tmp_path, 1), topic_in, topic_out


def test_embedded_broker_restarted_empty_fails_the_flow(tmp_path):
    server, topic_in, topic_out = run_to_60_and_restart(tmp_path)
    try:
        _, reason = wait_state(server, "c", "failed")
        # Topic, partition, the checkpointed offset and what the log holds.
        assert f'topic "{topic_in}" partition 0' in reason, reason
        assert "offset 60" in reason, reason
        assert "[0, 0)" in reason, reason
        # Not retried on: START FLOW alone fails the same way, and says what to do.
        with pytest.raises(psycopg.Error) as err:
            server.query("START FLOW c")
        assert err.value.sqlstate == "XX001", err.value
        hint = err.value.diag.message_hint or ""
        assert "START FLOW c RESET STATE" in hint and "'failOnDataLoss' = 'false'" in hint, hint
        assert flow_status(server, "c")[0] == "failed"
        assert not counts(embedded(server), topic_out), "the failed flow wrote rows"

        # RESET STATE starts again from empty state and the topic's start.
        embedded(server).produce(topic_in, [{"k": "a"}] * 5, partition=0)
        server.query("START FLOW c RESET STATE")
        wait_count(embedded(server), topic_out, 5)
        assert max(counts(embedded(server), topic_out)) == 5
    finally:
        assert server.stop() == 0, server.log_tail()


def test_embedded_broker_restarted_empty_goes_on_without_fail_on_data_loss(tmp_path):
    server, topic_in, topic_out = run_to_60_and_restart(tmp_path,
                                                         ", 'failOnDataLoss' = 'false'")
    try:
        wait_state(server, "c", "running")
        # The 60 offsets the checkpoint had past the end of the (empty) log.
        assert wait_for(lambda: skipped(server, "c", topic_in) == 60, WAIT_S,
                        f"offsetsSkipped is not 60: {server.progress('c')['sources']}")
        embedded(server).produce(topic_in, [{"k": "a"}] * 5, partition=0)
        # The restored count goes on: 65, each record counted once.
        wait_count(embedded(server), topic_out, 65)
        assert max(counts(embedded(server), topic_out)) == 65
        log = server.log_path.read_text(errors="replace")
        assert "'failOnDataLoss' = 'false'" in log and topic_in in log, server.log_tail()
    finally:
        assert server.stop() == 0, server.log_tail()


def test_unknown_fail_on_data_loss_value_is_refused(server):
    with pytest.raises(psycopg.Error) as err:
        server.query(f"""CREATE SOURCE dl_bad (k STRING) WITH (connector = 'kafka',
            'kafka.bootstrap.servers' = 'embedded', subscribe = 'dl_bad', 'failOnDataLoss' = 'maybe')""")
    assert err.value.sqlstate == "22023", err.value


@pytest.mark.parametrize("fail", [True, False])
def test_topic_recreated_on_a_real_broker(tmp_path, fail):
    addr = service_or_skip("RTSQL_KAFKA_BOOTSTRAP", "scripts/kafka.sh start")
    from confluent_kafka.admin import AdminClient, NewTopic
    broker = Kafka("real", addr, addr)
    uid = unique("dlreal")
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    for t in (topic_in, topic_out):
        broker.create_topic(t)
    server = start_server(tmp_path, 0)
    try:
        count_flow(server, broker, topic_in, topic_out,
                   "" if fail else ", 'failOnDataLoss' = 'false'")
        broker.produce(topic_in, [{"k": "a"}] * 60, partition=0)
        wait_count(broker, topic_out, 60)
    finally:
        assert server.stop() == 0, server.log_tail()
    written = counts(broker, topic_out)

    # The topic is deleted and created again while the flow is away, and gets
    # fewer records than the checkpoint had read.
    admin = AdminClient({"bootstrap.servers": addr})
    admin.delete_topics([topic_in], operation_timeout=30)[topic_in].result(timeout=60)
    wait_for(lambda: topic_in not in admin.list_topics(timeout=10).topics, WAIT_S,
             "the topic was not deleted")

    def created():
        try:
            admin.create_topics([NewTopic(topic_in, 1, 1)])[topic_in].result(timeout=30)
        except Exception:  # still being deleted, or made by an earlier attempt
            pass
        topic = admin.list_topics(timeout=10).topics.get(topic_in)
        return topic is not None and len(topic.partitions) == 1
    wait_for(created, WAIT_S, "the topic was not created again")
    broker.produce(topic_in, [{"k": "a"}] * 5, partition=0)

    server = start_server(tmp_path, 1)
    try:
        if fail:
            _, reason = wait_state(server, "c", "failed")
            assert f'topic "{topic_in}" partition 0' in reason, reason
            assert "offset 60" in reason and "[0, 5)" in reason, reason
            # The failed flow wrote nothing: no count of 5, none of 65.
            assert counts(broker, topic_out) == written
        else:
            # The new topic's 5 records add to the restored 60 once; the gap
            # counted is what the checkpoint had past the new log's end.
            wait_count(broker, topic_out, 65)
            assert max(counts(broker, topic_out)) == 65
            assert skipped(server, "c", topic_in) == 55
    finally:
        assert server.stop() == 0, server.log_tail()


# -- Kinesis ---------------------------------------------------------------------

def kinesis_options(kinesis, stream, extra=""):
    return (f"connector = 'kinesis', 'kinesis.stream' = '{stream}', 'kinesis.region' = 'us-east-1', "
            f"'kinesis.endpoint' = '{kinesis.endpoint}', 'kinesis.accessKeyId' = 'AKIDTEST', "
            f"'kinesis.secretKey' = 'secret', 'kinesis.startingPosition' = 'TRIM_HORIZON', "
            f"'kinesis.pollInterval' = '20 ms'{extra}")


def recreate_stream(kinesis, stream, created_at):
    """Deletes STREAM and creates it again with one shard. kinesalite makes a
    stream's sequence numbers of its creation second: the new stream is made
    in a later second than the old one, so that its numbers are its own."""
    kinesis.call("DeleteStream", {"StreamName": stream})

    def gone():
        try:
            kinesis.call("DescribeStreamSummary", {"StreamName": stream})
            return False
        except KinesisError:
            return True
    wait_for(gone, WAIT_S, "the stream was not deleted")
    wait_for(lambda: int(time.time()) > int(created_at) + 1, 10, "the clock did not move on")
    kinesis.create_stream(stream, 1)


@pytest.mark.parametrize("fail", [True, False])
@pytest.mark.parametrize("empty", [False, True])
def test_kinesis_stream_recreated(server, tmp_path, fail, empty):
    """The new stream holds records when the flow starts again (its oldest one
    comes after the checkpointed one), or none yet (the service refuses the
    checkpointed sequence number as not of this stream)."""
    kinesis = Kinesalite(endpoint_or_skip())
    stream, uid = unique("dlk"), unique("dlk")
    created_at = time.time()
    kinesis.create_stream(stream, 1)
    for i in range(10):
        kinesis.put(stream, json.dumps({"k": "a"}), "key")
    broker = embedded(server)
    extra = "" if fail else ", 'failOnDataLoss' = 'false'"
    server.run_script(f"""
        CREATE SOURCE {uid}_src (k STRING) WITH ({kinesis_options(kinesis, stream, extra)});
        CREATE SINK {uid}_out WITH ({broker.options()}, topic = '{uid}_out', format = 'json');
        CREATE FLOW {uid} INTO {uid}_out CHECKPOINT INTERVAL '1 second'
            WITH ('shuffle.partitions' = '1') AS SELECT k, count(*) AS n FROM {uid}_src GROUP BY k;
    """)
    try:
        wait_count(broker, f"{uid}_out", 10)
        server.query(f"STOP FLOW {uid}")  # a final checkpoint after the 10th record
        recreate_stream(kinesis, stream, created_at)
        if not empty:
            for i in range(3):
                kinesis.put(stream, json.dumps({"k": "a"}), "key")
        written = counts(broker, f"{uid}_out")
        server.query(f"START FLOW {uid}")
        if fail:
            _, reason = wait_state(server, uid, "failed")
            assert f'Kinesis stream "{stream}" shard shardId-000000000000' in reason, reason
            assert "sequence number" in reason, reason
            assert counts(broker, f"{uid}_out") == written  # nothing after the failure
            assert ("refused by the service" if empty else "has expired") in reason, reason
        else:
            if empty:
                wait_for(lambda: skipped(server, uid, "shardId-000000000000") == 1, WAIT_S,
                         "the lost position was not counted")
                for i in range(3):
                    kinesis.put(stream, json.dumps({"k": "a"}), "key")
            # The three records of the new stream add to the restored count once.
            wait_count(broker, f"{uid}_out", 13)
            assert max(counts(broker, f"{uid}_out")) == 13
            assert skipped(server, uid, "shardId-000000000000") == 1
    finally:
        server.query(f"DROP FLOW IF EXISTS {uid}")
        kinesis.call("DeleteStream", {"StreamName": stream})
