"""format = 'avro' against an independent Avro implementation (Debian's
python3-avro): seeded random records written by it, plain and with the
Confluent framing, are read by an avro source exactly; rows an avro sink
writes are read back by it exactly, with the schema docs/connectors.md says
the sink writes. The embedded broker only: the encoding does not depend on
the broker."""

import base64
import datetime
import io
import json
import random
import struct

import avro.io
import avro.schema

from conftest import Kafka, shortest_float, unique

# The writer's schema, as rtsql reads it: logical types on long and int.
SCHEMA = {
    "type": "record", "name": "Event", "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "user", "type": "string"},
        {"name": "qty", "type": "int"},
        {"name": "price", "type": "double"},
        {"name": "ratio", "type": "float"},
        {"name": "paid", "type": "boolean"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["VIEW", "BUY", "RETURN"]}},
        {"name": "digest", "type": {"type": "fixed", "name": "Digest", "size": 4}},
        {"name": "blob", "type": "bytes"},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "scores", "type": {"type": "array", "items": "int"}},
        {"name": "addr", "type": ["null", {"type": "record", "name": "Addr", "fields": [
            {"name": "city", "type": "string"}, {"name": "zip", "type": ["null", "int"]}]}]},
    ],
}


def without_logical_types(node):
    """The same schema with the logical types dropped: the binary encoding is
    the same, and python3-avro then takes plain ints for those fields."""
    if isinstance(node, dict):
        return {k: without_logical_types(v) for k, v in node.items() if k != "logicalType"}
    if isinstance(node, list):
        return [without_logical_types(v) for v in node]
    return node


def encode(schema, datum):
    buf = io.BytesIO()
    avro.io.DatumWriter(schema).write(datum, avro.io.BinaryEncoder(buf))
    return buf.getvalue()


def decode(schema, data):
    return avro.io.DatumReader(schema).read(avro.io.BinaryDecoder(io.BytesIO(data)))


def iso(micros):
    t = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(
        microseconds=micros)
    frac = f".{t.microsecond:06d}" if t.microsecond % 1000 else f".{t.microsecond // 1000:03d}"
    return t.strftime("%Y-%m-%dT%H:%M:%S") + frac + "Z"


def random_event(rng, i):
    return {
        "id": rng.randint(-2**62, 2**62) if i else -2**63,
        "user": rng.choice(["", "ana", "bo", "chloé", "日本", "x" * rng.randint(1, 300)]),
        "qty": rng.randint(-2**31, 2**31 - 1),
        "price": rng.uniform(-1e9, 1e9),
        "ratio": rng.uniform(-1, 1),
        "paid": rng.random() < 0.5,
        "note": None if rng.random() < 0.3 else f"n{rng.randint(0, 99)}",
        "kind": rng.choice(["VIEW", "BUY", "RETURN"]),
        "digest": bytes(rng.randrange(256) for _ in range(4)),
        "blob": bytes(rng.randrange(256) for _ in range(rng.randint(0, 40))),
        "at": rng.randint(-10**12, 4 * 10**12),
        "day": rng.randint(-30000, 60000),
        "scores": [rng.randint(-1000, 1000) for _ in range(rng.randint(0, 6))],
        "addr": None if rng.random() < 0.3 else {
            "city": rng.choice(["Lyon", "Oslo"]), "zip": None if rng.random() < 0.5 else rng.randint(0, 99999)},
    }


def expected_row(e):
    """The json row an avro source then a json sink give for event E."""
    return {
        "id": e["id"], "user": e["user"], "qty": e["qty"], "price": e["price"],
        # A float reads as FLOAT (a DOUBLE would print the float's every digit).
        "ratio": shortest_float(e["ratio"]),
        "paid": e["paid"], "note": e["note"], "kind": e["kind"],
        "digest": base64.b64encode(e["digest"]).decode(),
        "blob": base64.b64encode(e["blob"]).decode(),
        "at": iso(e["at"] * 1000), "day": (datetime.date(1970, 1, 1) + datetime.timedelta(days=e["day"])).isoformat(),
        "scores": e["scores"], "addr": e["addr"],
    }


def test_an_avro_source_reads_what_another_implementation_wrote(server):
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    rng = random.Random(20261202)
    events = [random_event(rng, i) for i in range(200)]
    plain_schema = avro.schema.parse(json.dumps(without_logical_types(SCHEMA)))
    plain, framed = unique("avro_plain"), unique("avro_framed")
    kafka.create_topic(plain)
    kafka.create_topic(framed)
    kafka.produce(plain, [encode(plain_schema, e) for e in events], partition=0)
    # Confluent's framing: magic byte 0, then the schema's id in the registry.
    kafka.produce(framed, [b"\0" + struct.pack(">I", 42) + encode(plain_schema, e) for e in events],
                  partition=0)

    schema_sql = json.dumps(SCHEMA).replace("'", "''")
    for topic, framing in ((plain, "none"), (framed, "confluent")):
        src, snk, flow, out = unique("avs"), unique("avk"), unique("avf"), unique("avo")
        server.run_script(f"""
CREATE SOURCE {src} WITH ({kafka.options()}, subscribe = '{topic}', startingOffsets = 'earliest',
    format = 'avro', 'avro.framing' = '{framing}', 'avro.schema' = '{schema_sql}');
CREATE SINK {snk} WITH ({kafka.options()}, topic = '{out}', format = 'json');
CREATE FLOW {flow} INTO {snk} TRIGGER REALTIME AS SELECT * FROM {src};
""")
        got = [json.loads(m.value()) for m in kafka.consume(out, n=len(events), timeout=60)]
        assert len(got) == len(events), server.psql("SHOW FLOWS", check=False)
        for g, e in zip(got, events):
            assert g == expected_row(e)


def test_an_avro_sink_writes_what_another_implementation_reads(server):
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    rng = random.Random(7)
    rows = []
    for i in range(150):
        rows.append({
            "id": rng.randint(-2**63, 2**63 - 1),
            "name": None if i % 7 == 0 else rng.choice(["", "a,b", "ünï", "q" * rng.randint(1, 90)]),
            "score": None if i % 5 == 0 else rng.uniform(-1e6, 1e6),
            "ts_us": rng.randint(-10**15, 4 * 10**15),
            "tags": [rng.choice(["x", "y"]) for _ in range(rng.randint(0, 4))],
        })
    topic, out = unique("avsink_in"), unique("avsink_out")
    src, snk, flow = unique("avss"), unique("avsk"), unique("avsf")
    kafka.create_topic(topic)
    kafka.produce(topic, rows, partition=0)
    server.run_script(f"""
CREATE SOURCE {src} (id BIGINT, name STRING, score DOUBLE, ts_us BIGINT, tags ARRAY<STRING>)
WITH ({kafka.options()}, subscribe = '{topic}', startingOffsets = 'earliest', format = 'json');
CREATE SINK {snk} WITH ({kafka.options()}, topic = '{out}', format = 'avro');
CREATE FLOW {flow} INTO {snk} TRIGGER REALTIME AS
SELECT id, name, score, timestamp_micros(ts_us) AS at, tags, named_struct('n', id % 10, 'ok', score > 0) AS info
FROM {src};
""")
    # The schema docs/connectors.md says an avro sink writes: a record named
    # after the sink, each column a nullable field, TIMESTAMP as
    # timestamp-micros, a STRUCT a record named after its column.
    def nullable(t):
        return ["null", t]
    writer = {"type": "record", "name": snk, "fields": [
        {"name": "id", "type": nullable("long"), "default": None},
        {"name": "name", "type": nullable("string"), "default": None},
        {"name": "score", "type": nullable("double"), "default": None},
        {"name": "at", "type": nullable({"type": "long", "logicalType": "timestamp-micros"}), "default": None},
        {"name": "tags", "type": nullable({"type": "array", "items": nullable("string")}), "default": None},
        {"name": "info", "type": nullable({"type": "record", "name": "info_1", "fields": [
            {"name": "n", "type": nullable("long"), "default": None},
            {"name": "ok", "type": nullable("boolean"), "default": None}]}), "default": None},
    ]}
    reader_schema = avro.schema.parse(json.dumps(without_logical_types(writer)))
    got = [decode(reader_schema, m.value()) for m in kafka.consume(out, n=len(rows), timeout=60)]
    assert len(got) == len(rows), server.psql("SHOW FLOWS", check=False)
    for g, r in zip(got, rows):
        n = abs(r["id"]) % 10 * (1 if r["id"] >= 0 else -1)
        assert g == {
            "id": r["id"], "name": r["name"], "score": r["score"], "at": r["ts_us"],
            "tags": r["tags"],
            "info": {"n": n, "ok": None if r["score"] is None else r["score"] > 0},
        }
