"""format = 'avro' with 'schema.registry.url' against a real Apicurio Registry
(scripts/apicurio.sh, its Confluent-compatible API; RTSQL_SCHEMA_REGISTRY_URL)
and an independent Avro implementation (Debian's python3-avro): framed records
written with schemas registered in the registry are read by a source (columns
from the subject's latest schema, older writers' records resolved to them);
records with an unknown id or a bad magic byte reach the dead-letter topic;
an avro sink registers its schema under the topic's subject and frames every
value with its id, which the registry resolves to the schema python3-avro
decodes them with, and a dry run of the same registers nothing; a sink schema
the subject refuses as incompatible fails CREATE FLOW with 42804. The embedded broker only: the registry, not the
broker, is under test."""

import io
import json
import os
import random
import struct
import urllib.error
import urllib.request

import avro.io
import avro.schema
import psycopg
import pytest

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
