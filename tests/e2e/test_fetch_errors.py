"""A record the Kafka client cannot fetch or decompress, on the embedded broker
and on Apache Kafka: one zstd-compressed record of a few hundred bytes that
decompresses to 5 MB, past the consumer's own 'receive.message.max.bytes' (set
low here, so that a few MB are enough; the default is 100 MB). librdkafka
reports such a batch as a consumer error at its offset and fetches it again for
ever; the source counts it as a record it cannot decode, under 'on.error':
skipped and counted, dead-lettered as an empty record with the rtsql.* headers,
or the flow fails with the topic, partition and offset in its error."""

import time

from confluent_kafka import Producer

from conftest import unique

# The consumer's limits: a fetch takes at most 1 MB, a record decompresses to at
# most 2 MB (librdkafka wants the second 512 bytes above the first, at least).
LIMITS = "'kafka.fetch.max.bytes' = '1000000', 'kafka.receive.message.max.bytes' = '2000000'"
BOMB_BYTES = 5_000_000


def produce_with_bomb(kafka, topic):
    """Offsets 0-2 good JSON records, 3 the bomb (its own zstd batch), 4-6 good."""
    kafka.create_topic(topic)
    # The producer checks a record's size before compression against its own
    # message.max.bytes; the broker sees the compressed batch, a few hundred bytes.
    p = Producer({"bootstrap.servers": kafka.bootstrap, "compression.type": "zstd",
                  "message.max.bytes": 10_000_000, "linger.ms": 0})
    errors = []

    def report(err, _msg):
        if err is not None:
            errors.append(err)

    values = [f'{{"id": {i}}}'.encode() for i in range(3)]
    values.append(b"0" * BOMB_BYTES)
    values += [f'{{"id": {i}}}'.encode() for i in range(3, 6)]
    for v in values:
        # One record per batch: each is flushed before the next.
        p.produce(topic, value=v, partition=0, on_delivery=report)
        assert p.flush(30) == 0, f"a record was not delivered to {topic}"
    assert not errors, errors


def flow_state(server, flow):
    rows = [r for r in server.query("SHOW FLOWS") if r[0] == flow]
    assert rows, f"no flow {flow}"
    return rows[0][2], rows[0][4] or ""


def start_flow(server, kafka, topic, on_error, extra=""):
    src, snk, flow, out = unique("fe_src"), unique("fe_snk"), unique("fe_f"), unique("fe_out")
    server.run_script(
        f"CREATE SOURCE {src} (id BIGINT) WITH ({kafka.options()}, subscribe = '{topic}', "
        f"startingOffsets = 'earliest', format = 'json', 'on.error' = '{on_error}'{extra}, "
        f"{LIMITS});\n"
        f"CREATE SINK {snk} WITH ({kafka.options()}, topic = '{out}', format = 'json');\n"
        f"CREATE FLOW {flow} INTO {snk} AS SELECT id FROM {src};\n")
    return flow, out


def test_a_record_that_decompresses_past_the_limit_is_skipped(server, kafka):
    topic = unique("fe_skip")
    produce_with_bomb(kafka, topic)
    flow, out = start_flow(server, kafka, topic, "skip")
    rows = kafka.consume_json(out, n=6, timeout=60, grace=0.5)
    assert sorted(r["id"] for r in rows) == list(range(6)), rows
    prog = server.wait_progress(flow, lambda p: p["sources"][0]["numDecodeErrors"] == 1, 30)
    assert prog["sources"][0]["numDecodeErrors"] == 1, prog
    assert flow_state(server, flow)[0] == "running"


def test_a_record_that_decompresses_past_the_limit_is_dead_lettered(server, kafka):
    topic, dlq = unique("fe_dl"), unique("fe_dlq")
    produce_with_bomb(kafka, topic)
    kafka.create_topic(dlq)
    flow, out = start_flow(server, kafka, topic, "dead-letter", f", 'dead-letter.topic' = '{dlq}'")
    rows = kafka.consume_json(out, n=6, timeout=60, grace=0.5)
    assert sorted(r["id"] for r in rows) == list(range(6)), rows
    letters = kafka.consume(dlq, n=1, timeout=30, grace=0.5)
    assert len(letters) == 1, letters
    assert letters[0].value() is None and letters[0].key() is None
    named = dict(letters[0].headers())
    assert named["rtsql.topic"] == topic.encode()
    assert named["rtsql.partition"] == b"0" and named["rtsql.offset"] == b"3"
    assert b"cannot decompress" in named["rtsql.error"], named


def test_a_record_that_decompresses_past_the_limit_fails_the_flow(server, kafka):
    topic = unique("fe_fail")
    produce_with_bomb(kafka, topic)
    flow, out = start_flow(server, kafka, topic, "fail")
    # The records before it are handed over first.
    rows = kafka.consume_json(out, n=3, timeout=60, grace=0.5)
    assert sorted(r["id"] for r in rows) == [0, 1, 2], rows
    deadline = time.monotonic() + 60
    state = flow_state(server, flow)
    while state[0] != "failed" and time.monotonic() < deadline:
        time.sleep(0.3)
        state = flow_state(server, flow)
    assert state[0] == "failed", state
    assert f"topic '{topic}' partition 0 offset 3" in state[1], state
    assert "cannot decompress" in state[1], state
