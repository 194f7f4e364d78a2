"""format = 'avro' with 'schema.registry.url' against a real Apicurio Registry
(scripts/apicurio.sh, its Confluent-compatible API; RTSQL_SCHEMA_REGISTRY_URL)
and an independent Avro implementation (Debian's python3-avro): framed records
written with schemas registered in the registry are read by a source (columns
from the subject's latest schema, older writers' records resolved to them);
records with an unknown id or a bad magic byte reach the dead-letter topic;
an avro sink registers its schema under the topic's subject and frames every
value with its id, which the registry resolves to the schema python3-avro
decodes them with, and a dry run of the same registers nothing; a sink schema
the subject refuses as incompatible fails CREATE FLOW with 42804. Protobuf
the same way against python3-protobuf (message classes built at run time
from what protoc compiles of the registry's .proto text): records framed with
an id and message indexes, of a schema that imports another subject's, read
by a source; a protobuf sink's messages decoded with the schema its id names.
The embedded broker only: the registry, not the broker, is under test."""

import io
import json
import os
import random
import struct
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import avro.io
import avro.schema
import psycopg
import pytest

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from conftest import Kafka, service_or_skip, unique

REGISTRY = os.environ.get("RTSQL_SCHEMA_REGISTRY_URL", "").rstrip("/")


@pytest.fixture(autouse=True)
def _registry_is_set():
    """Every test here needs the registry: a skip per test (not of the whole
    module, which ctest would count as a failure), a failure under CI."""
    service_or_skip("RTSQL_SCHEMA_REGISTRY_URL", "scripts/apicurio.sh start")

CONTENT = "application/vnd.schemaregistry.v1+json"


def registry(method, path, body=None):
    req = urllib.request.Request(
        REGISTRY + path, method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": CONTENT, "Accept": CONTENT})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def register(subject, schema):
    return registry("POST", f"/subjects/{subject}/versions", {"schema": json.dumps(schema)})["id"]


def encode(schema, datum):
    buf = io.BytesIO()
    avro.io.DatumWriter(avro.schema.parse(json.dumps(schema))).write(datum, avro.io.BinaryEncoder(buf))
    return buf.getvalue()


def framed(schema_id, schema, datum):
    return b"\0" + struct.pack(">I", schema_id) + encode(schema, datum)


# Two versions of one subject: the second adds a field and widens qty.
V1 = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"},
    {"name": "user", "type": "string"},
    {"name": "qty", "type": "int"},
]}
V2 = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"},
    {"name": "user", "type": "string"},
    {"name": "qty", "type": "long"},
    {"name": "note", "type": ["null", "string"], "default": None},
]}


def random_order(rng, i, v2):
    o = {"id": i, "user": rng.choice(["", "ana", "bo", "chloé", "日本"]),
         "qty": rng.randint(-2**31, 2**31 - 1)}
    if v2:
        o["qty"] = rng.randint(-2**62, 2**62)
        o["note"] = None if rng.random() < 0.4 else f"n{rng.randint(0, 99)}"
    return o


def test_a_source_reads_records_framed_with_registered_schemas(server):
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    topic, out = unique("sr_in"), unique("sr_out")
    id1 = register(f"{topic}-value", V1)
    id2 = register(f"{topic}-value", V2)
    assert id1 != id2
    rng = random.Random(1202)
    orders = [random_order(rng, i, v2=i % 3 == 0) for i in range(120)]
    kafka.create_topic(topic)
    kafka.produce(topic, [framed(id2, V2, o) if i % 3 == 0 else framed(id1, V1, o)
                          for i, o in enumerate(orders)], partition=0)
    src, snk, flow = unique("srs"), unique("srk"), unique("srf")
    # No columns declared: they are the fields of the subject's latest schema.
    server.run_script(f"""
CREATE SOURCE {src} WITH ({kafka.options()}, subscribe = '{topic}', startingOffsets = 'earliest',
    format = 'avro', 'schema.registry.url' = '{REGISTRY}');
CREATE SINK {snk} WITH ({kafka.options()}, topic = '{out}', format = 'json');
CREATE FLOW {flow} INTO {snk} TRIGGER REALTIME AS SELECT * FROM {src};
""")
    cols = server.query(f"DESCRIBE {src}")
    assert [(c[0], c[1]) for c in cols][:4] == [
        ("id", "BIGINT"), ("user", "STRING"), ("qty", "BIGINT"), ("note", "STRING")], cols
    got = [json.loads(m.value()) for m in kafka.consume(out, n=len(orders), timeout=60)]
    assert len(got) == len(orders), server.psql("SHOW FLOWS", check=False)
    # A version-1 record has no note: NULL; its int qty reads as BIGINT.
    assert got == [{"id": o["id"], "user": o["user"], "qty": o["qty"], "note": o.get("note")}
                   for o in orders]


def test_unknown_ids_and_bad_framing_reach_the_dead_letter_topic(server):
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    topic, out, dlq = unique("srd_in"), unique("srd_out"), unique("srd_dlq")
    id1 = register(f"{topic}-value", V1)
    unknown = 2_000_000_000
    with pytest.raises(urllib.error.HTTPError):
        registry("GET", f"/schemas/ids/{unknown}")
    kafka.create_topic(topic)
    kafka.create_topic(dlq)
    good = [{"id": i, "user": f"u{i}", "qty": i * 10} for i in range(6)]
    records = [framed(id1, V1, o) for o in good[:3]]
    records.append(b"\0" + struct.pack(">I", unknown) + encode(V1, good[0]))
    records.append(b"\x07" + struct.pack(">I", id1) + encode(V1, good[0]))
    records += [framed(id1, V1, o) for o in good[3:]]
    kafka.produce(topic, records, partition=0)
    src, snk, flow = unique("srds"), unique("srdk"), unique("srdf")
    server.run_script(f"""
CREATE SOURCE {src} (id BIGINT, qty BIGINT) WITH ({kafka.options()}, subscribe = '{topic}',
    startingOffsets = 'earliest', format = 'avro', 'schema.registry.url' = '{REGISTRY}',
    'on.error' = 'dead-letter', 'dead-letter.topic' = '{dlq}');
CREATE SINK {snk} WITH ({kafka.options()}, topic = '{out}', format = 'json');
CREATE FLOW {flow} INTO {snk} TRIGGER REALTIME AS SELECT id, qty FROM {src};
""")
    rows = kafka.consume_json(out, n=len(good), timeout=60, grace=0.5)
    assert rows == [{"id": o["id"], "qty": o["qty"]} for o in good]
    letters = kafka.consume(dlq, n=2, timeout=60, grace=0.5)
    assert len(letters) == 2, letters
    errors = {dict(m.headers())["rtsql.offset"]: dict(m.headers())["rtsql.error"].decode()
              for m in letters}
    assert errors.keys() == {b"3", b"4"}, errors
    assert f"schema id {unknown} is not in the schema registry" in errors[b"3"], errors
    assert "magic byte 7" in errors[b"4"], errors
    assert [m.value() for m in sorted(letters, key=lambda m: dict(m.headers())["rtsql.offset"])] \
        == records[3:5]


def test_a_sink_registers_its_schema_and_frames_values_with_its_id(server):
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    topic, out = unique("srk_in"), unique("srk_out")
    rng = random.Random(99)
    rows = [{"id": i, "name": None if i % 4 == 0 else rng.choice(["", "x", "ünï"]),
             "score": None if i % 5 == 0 else rng.uniform(-1e6, 1e6)} for i in range(80)]
    kafka.create_topic(topic)
    kafka.produce(topic, rows, partition=0)
    src, snk, flow = unique("srks"), unique("srkk"), unique("srkf")
    script = f"""
CREATE SOURCE {src} (id BIGINT, name STRING, score DOUBLE)
WITH ({kafka.options()}, subscribe = '{topic}', startingOffsets = 'earliest', format = 'json');
CREATE SINK {snk} WITH ({kafka.options()}, topic = '{out}', format = 'avro',
    'schema.registry.url' = '{REGISTRY}');
CREATE FLOW {flow} INTO {snk} TRIGGER REALTIME AS SELECT id, name, score FROM {src};
"""
    # A dry run checks with the registry but registers nothing.
    path = server.tmp / f"{unique('dry')}.sql"
    path.write_text(script)
    server.rtsql("-f", str(path), "--dry-run")
    with pytest.raises(urllib.error.HTTPError) as missing:
        registry("GET", f"/subjects/{out}-value/versions")
    assert missing.value.code == 404
    server.run_script(script)
    latest = registry("GET", f"/subjects/{out}-value/versions/latest")
    msgs = kafka.consume(out, n=len(rows), timeout=60)
    assert len(msgs) == len(rows), server.psql("SHOW FLOWS", check=False)
    got = []
    for m in msgs:
        value = m.value()
        assert value[0] == 0, value[:5]
        (schema_id,) = struct.unpack(">I", value[1:5])
        assert schema_id == latest["id"]
        # The schema by the id the value names, from the registry itself.
        writer = avro.schema.parse(registry("GET", f"/schemas/ids/{schema_id}")["schema"])
        got.append(avro.io.DatumReader(writer).read(avro.io.BinaryDecoder(io.BytesIO(value[5:]))))
    assert got == rows


def test_an_incompatible_sink_schema_fails_create_flow(server):
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    topic, out = unique("sri_in"), unique("sri_out")
    subject = f"{out}-value"
    register(subject, {"type": "record", "name": "Old", "fields": [{"name": "id", "type": "string"}]})
    registry("PUT", f"/config/{subject}", {"compatibility": "BACKWARD"})
    kafka.create_topic(topic)
    src, snk, flow = unique("sris"), unique("srik"), unique("srif")
    server.run_script(f"""
CREATE SOURCE {src} (id BIGINT) WITH ({kafka.options()}, subscribe = '{topic}', format = 'json');
CREATE SINK {snk} WITH ({kafka.options()}, topic = '{out}', format = 'avro',
    'schema.registry.url' = '{REGISTRY}');
""")
    with pytest.raises(psycopg.Error) as err:
        server.query(f"CREATE FLOW {flow} INTO {snk} AS SELECT id FROM {src}")
    assert err.value.sqlstate == "42804", err.value
    assert f'subject "{subject}"' in str(err.value) and "incompatible" in str(err.value)
    # Nothing was registered: the subject still has its one version.
    assert registry("GET", f"/subjects/{subject}/versions") == [1]


# -- protobuf ---------------------------------------------------------------

COMMON_PROTO = """syntax = "proto3";
package shop;
message Money { int64 cents = 1; string currency = 2; }
"""

ORDER_PROTO = """syntax = "proto3";
package shop;
import "shop/common.proto";
import "google/protobuf/timestamp.proto";

message Customer { string name = 1; }
message Order {
  message Line { string sku = 1; int32 qty = 2; }
  int64 id = 1;
  string user = 2;
  repeated Line lines = 3;
  Money total = 4;
  google.protobuf.Timestamp at = 5;
  optional string note = 6;
}
"""


def register_proto(subject, text, references=()):
    body = {"schema": text, "schemaType": "PROTOBUF",
            "references": [{"name": n, "subject": s, "version": v} for n, s, v in references]}
    # A subject may hold a '/': percent-encoded, as rtsql asks for it.
    return registry("POST", f"/subjects/{urllib.parse.quote(subject, safe='')}/versions", body)["id"]


def proto_classes(files):
    """The message classes of FILES ({import path: .proto text}), compiled by
    protoc and built into a descriptor pool of their own."""
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in files.items():
            path = Path(tmp) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        out = Path(tmp) / "set.desc"
        subprocess.run(["protoc", "--include_imports", f"--descriptor_set_out={out}",
                        f"--proto_path={tmp}", *files.keys()], check=True, cwd=tmp)
        fds = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)

    def cls(name):
        d = pool.FindMessageTypeByName(name)
        if hasattr(message_factory, "GetMessageClass"):
            return message_factory.GetMessageClass(d)
        return message_factory.MessageFactory(pool).GetPrototype(d)
    return cls


def test_a_protobuf_source_reads_messages_by_id_and_indexes(server):
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    topic, out = unique("srp_in"), unique("srp_out")
    common_subject = f"{topic}/shop/common.proto"
    register_proto(common_subject, COMMON_PROTO)
    schema_id = register_proto(f"{topic}-value", ORDER_PROTO,
                               [("shop/common.proto", common_subject, 1)])
    cls = proto_classes({"shop/common.proto": COMMON_PROTO, "shop/order.proto": ORDER_PROTO})
    Order = cls("shop.Order")
    rng = random.Random(4242)
    expected, records = [], []
    for i in range(60):
        o = Order(id=i * 7919 - 3, user=rng.choice(["", "ana", "chloé", "日本"]))
        lines = [{"sku": f"s{rng.randint(0, 99)}", "qty": rng.randint(-5, 5)}
                 for _ in range(rng.randint(0, 3))]
        for ln in lines:
            o.lines.add(sku=ln["sku"], qty=ln["qty"])
        total = None
        if rng.random() < 0.7:
            total = {"cents": rng.randint(-2**40, 2**40), "currency": rng.choice(["EUR", ""])}
            o.total.cents, o.total.currency = total["cents"], total["currency"]
        at = None
        if rng.random() < 0.8:
            seconds, micros = rng.randint(0, 2**32), rng.randint(0, 999999)
            o.at.seconds, o.at.nanos = seconds, micros * 1000
            at = seconds * 1_000_000 + micros
        note = None
        if rng.random() < 0.5:
            note = rng.choice(["", "x"])
            o.note = note
        # shop.Order is the file's second message: indexes [1], a count of 1
        # then index 1, each a zigzag varint.
        records.append(b"\0" + struct.pack(">I", schema_id) + b"\x02\x02" + o.SerializeToString())
        expected.append({"id": o.id, "user": o.user, "lines": lines, "total": total, "at": at,
                         "note": note})
    kafka.create_topic(topic)
    kafka.produce(topic, records, partition=0)
    src, snk, flow = unique("srps"), unique("srpk"), unique("srpf")
    # No columns declared: shop.Order's fields from the subject's latest schema.
    server.run_script(f"""
CREATE SOURCE {src} WITH ({kafka.options()}, subscribe = '{topic}', startingOffsets = 'earliest',
    format = 'protobuf', 'schema.registry.url' = '{REGISTRY}', 'protobuf.message' = 'shop.Order');
CREATE SINK {snk} WITH ({kafka.options()}, topic = '{out}', format = 'json');
CREATE FLOW {flow} INTO {snk} TRIGGER REALTIME AS
    SELECT id, user, lines, total, unix_micros(at) AS at, note FROM {src};
""")
    cols = server.query(f"DESCRIBE {src}")
    assert [(c[0], c[1]) for c in cols][:6] == [
        ("id", "BIGINT"), ("user", "STRING"),
        ("lines", "ARRAY<STRUCT<sku: STRING, qty: INT>>"),
        ("total", "STRUCT<cents: BIGINT, currency: STRING>"), ("at", "TIMESTAMP"),
        ("note", "STRING")], cols
    got = kafka.consume_json(out, n=len(expected), timeout=60)
    assert len(got) == len(expected), server.psql("SHOW FLOWS", check=False)
    assert got == expected


def test_a_protobuf_sink_registers_its_message_and_frames_values(server):
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    topic, out = unique("srq_in"), unique("srq_out")
    rng = random.Random(77)
    rows = [{"id": i, "name": None if i % 4 == 0 else rng.choice(["", "x", "ünï"]),
             "score": None if i % 5 == 0 else rng.uniform(-1e6, 1e6),
             "tags": [rng.choice(["a", "b", ""]) for _ in range(rng.randint(0, 3))]}
            for i in range(70)]
    kafka.create_topic(topic)
    kafka.produce(topic, rows, partition=0)
    src, snk, flow = unique("srqs"), unique("srqk"), unique("srqf")
    server.run_script(f"""
CREATE SOURCE {src} (id BIGINT, name STRING, score DOUBLE, tags ARRAY<STRING>)
WITH ({kafka.options()}, subscribe = '{topic}', startingOffsets = 'earliest', format = 'json');
CREATE SINK {snk} WITH ({kafka.options()}, topic = '{out}', format = 'protobuf',
    'schema.registry.url' = '{REGISTRY}', 'protobuf.message' = 'shop.Row');
CREATE FLOW {flow} INTO {snk} TRIGGER REALTIME AS SELECT id, name, score, tags FROM {src};
""")
    latest = registry("GET", f"/subjects/{out}-value/versions/latest")
    assert latest["schemaType"] == "PROTOBUF", latest
    msgs = kafka.consume(out, n=len(rows), timeout=60)
    assert len(msgs) == len(rows), server.psql("SHOW FLOWS", check=False)
    got = []
    classes = {}
    for m in msgs:
        value = m.value()
        assert value[0] == 0, value[:6]
        (schema_id,) = struct.unpack(">I", value[1:5])
        assert schema_id == latest["id"]
        assert value[5] == 0  # message indexes [0]: the file's first message
        if schema_id not in classes:
            # The schema by the id the value names, from the registry itself.
            text = registry("GET", f"/schemas/ids/{schema_id}")["schema"]
            classes[schema_id] = proto_classes({"row.proto": text})("shop.Row")
        msg = classes[schema_id].FromString(value[6:])
        got.append({"id": msg.id if msg.HasField("id") else None,
                    "name": msg.name if msg.HasField("name") else None,
                    "score": msg.score if msg.HasField("score") else None,
                    "tags": list(msg.tags)})
    assert got == rows

    # The same rows read back through the registry by a protobuf source.
    back, bsnk, bflow = unique("srqb"), unique("srqbk"), unique("srqbf")
    back_out = unique("srq_back")
    server.run_script(f"""
CREATE SOURCE {back} WITH ({kafka.options()}, subscribe = '{out}', startingOffsets = 'earliest',
    format = 'protobuf', 'schema.registry.url' = '{REGISTRY}');
CREATE SINK {bsnk} WITH ({kafka.options()}, topic = '{back_out}', format = 'json');
CREATE FLOW {bflow} INTO {bsnk} TRIGGER REALTIME AS SELECT * FROM {back};
""")
    assert kafka.consume_json(back_out, n=len(rows), timeout=60) == rows


def test_protobuf_registry_refusals(server):
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    topic = unique("srr")
    with pytest.raises(psycopg.Error) as err:
        server.query(f"""CREATE SOURCE {unique('srr_s')} WITH ({kafka.options()}, subscribe = '{topic}',
            format = 'protobuf', 'schema.registry.url' = '{REGISTRY}',
            'protobuf.descriptor' = 'x.desc')""")
    assert err.value.sqlstate == "22023", err.value
    # A subject whose latest schema does not parse.
    register_proto(f"{topic}-value", 'syntax = "proto3";\nmessage M { int64 id = 1; }\n')
    with pytest.raises(psycopg.Error) as err:
        server.query(f"""CREATE SOURCE {unique('srr_s')} WITH ({kafka.options()}, subscribe = '{topic}',
            format = 'protobuf', 'schema.registry.url' = '{REGISTRY}', 'protobuf.message' = 'Nope')""")
    assert err.value.sqlstate == "42704", err.value
