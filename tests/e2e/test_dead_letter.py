"""Dead letters end to end, on the embedded broker and on Apache Kafka: a json
source with `'on.error' = 'dead-letter'` sends the records it cannot decode,
unchanged (key, value, the record's own headers), to its dead-letter topic with
the rtsql.* headers, counts them in the progress JSON and /metrics-facing
numDeadLetters, and passes the good records on."""

from conftest import unique


def test_bad_records_reach_the_dead_letter_topic(server, kafka):
    topic, dlq, out = unique("dl_in"), unique("dl_dlq"), unique("dl_out")
    src, snk, flow = unique("dl_src"), unique("dl_snk"), unique("dl_f")
    kafka.create_topic(topic)
    # On Apache Kafka the dead-letter topic exists before the flow writes to it.
    kafka.create_topic(dlq)
    good = [{"id": i, "amount": i * 1.5} for i in range(10)]
    kafka.produce(topic, good[:5], partition=0)
    kafka.produce(topic, [b"{not json"], key=b"bad-1",
                  headers=[("trace", b"t-1"), ("tenant", b"acme")], partition=0)
    kafka.produce(topic, ['{"id": "two", "amount": 2}'], partition=0)
    kafka.produce(topic, good[5:], partition=0)
    server.run_script(
        f"CREATE SOURCE {src} (id BIGINT, amount DOUBLE) WITH ({kafka.options()}, "
        f"subscribe = '{topic}', startingOffsets = 'earliest', format = 'json', "
        f"'on.error' = 'dead-letter', 'dead-letter.topic' = '{dlq}');\n"
        f"CREATE SINK {snk} WITH ({kafka.options()}, topic = '{out}', format = 'json');\n"
        f"CREATE FLOW {flow} INTO {snk} AS SELECT id, amount FROM {src};\n")

    rows = kafka.consume_json(out, n=len(good), timeout=30, grace=0.5)
    assert sorted(r["id"] for r in rows) == list(range(10))

    letters = kafka.consume(dlq, n=2, timeout=30, grace=0.5)
    assert len(letters) == 2, letters
    first, second = sorted(letters, key=lambda m: dict(m.headers())["rtsql.offset"])
    assert first.key() == b"bad-1" and first.value() == b"{not json"
    headers = first.headers()
    assert headers[:2] == [("trace", b"t-1"), ("tenant", b"acme")]
    named = dict(headers[2:])
    assert set(named) == {"rtsql.error", "rtsql.flow", "rtsql.source", "rtsql.topic",
                          "rtsql.partition", "rtsql.offset"}
    assert named["rtsql.flow"] == flow.encode() and named["rtsql.source"] == src.encode()
    assert named["rtsql.topic"] == topic.encode()
    assert named["rtsql.partition"] == b"0" and named["rtsql.offset"] == b"5"
    assert named["rtsql.error"]
    assert second.key() is None and second.value() == b'{"id": "two", "amount": 2}'
    assert dict(second.headers())["rtsql.offset"] == b"6"
    assert dict(second.headers())["rtsql.error"] == b"field 'id': expected BIGINT, got \"two\""

    prog = server.wait_progress(flow, lambda p: p["sources"][0].get("numDeadLetters") == 2)
    assert prog["sources"][0].get("numDeadLetters") == 2, prog
    assert prog["sources"][0]["numDecodeErrors"] == 2, prog
