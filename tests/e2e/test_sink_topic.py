"""'topic.partitions' on a Kafka sink, on the embedded broker and on Apache
Kafka: the flow creates its missing topic with that many partitions (through
the admin API on Apache Kafka, in process on the embedded broker), keyed rows
spread over them, and a sink asking another count for an existing topic is
refused when its flow is created."""

import psycopg
import pytest
from confluent_kafka import Producer

from conftest import unique


def partitions_of(kafka, topic):
    md = Producer({"bootstrap.servers": kafka.bootstrap}).list_topics(topic, timeout=10)
    t = md.topics.get(topic)
    assert t is not None and t.error is None, f"topic {topic}: {t and t.error}"
    return len(t.partitions)


def test_sink_creates_its_topic_with_the_partitions_asked(server, kafka):
    src, snk, flow = unique("stp_src"), unique("stp_snk"), unique("stp_flow")
    topic, out = unique("stp_in"), unique("stp_out")
    kafka.create_topic(topic)
    server.run_script(f"""
CREATE SOURCE {src} (user_id STRING, n BIGINT) WITH ({kafka.options()}, subscribe = '{topic}',
    startingOffsets = 'earliest', format = 'json');
CREATE SINK {snk} WITH ({kafka.options()}, topic = '{out}', key = 'user_id',
    'topic.partitions' = '3');
CREATE FLOW {flow} INTO {snk} TRIGGER REALTIME AS SELECT user_id, n FROM {src};
""")
    assert partitions_of(kafka, out) == 3
    rows = [{"user_id": f"u{i}", "n": i} for i in range(60)]
    kafka.produce(topic, rows)
    got = kafka.consume(out, n=len(rows), timeout=30, grace=0.5)
    assert all(m.key() is not None for m in got)
    assert sorted(m.key().decode() for m in got) == sorted(r["user_id"] for r in rows)
    # Sixty keys over three partitions: the producer's hash uses every one.
    assert {m.partition() for m in got} == {0, 1, 2}
    # Each key stays in one partition.
    by_key = {}
    for m in got:
        by_key.setdefault(m.key(), set()).add(m.partition())
    assert all(len(p) == 1 for p in by_key.values())

    other, refused = unique("stp_two"), unique("stp_refused")
    server.run_script(f"""
CREATE SINK {other} WITH ({kafka.options()}, topic = '{out}', 'topic.partitions' = '2');
""")
    with pytest.raises(psycopg.Error) as err:
        server.query(f"CREATE FLOW {refused} INTO {other} AS SELECT user_id, n FROM {src}")
    assert err.value.sqlstate == "55000"
    assert "has 3 partitions" in str(err.value)
    assert partitions_of(kafka, out) == 3
