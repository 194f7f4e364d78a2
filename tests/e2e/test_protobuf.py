"""format = 'protobuf' against an independent Protocol Buffers implementation
(Debian's python3-protobuf, its message class built from the same descriptor
set): seeded random messages written by it, plain and with Confluent's
framing, are read by a protobuf source exactly; rows a protobuf sink writes
are parsed by it exactly, presence included. The embedded broker only: the
encoding does not depend on the broker."""

import base64
import datetime
import json
import os
import random
import struct
import subprocess
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from conftest import Kafka, shortest_float, unique

DATA = Path(os.environ.get("RTSQL_SOURCE_DIR", Path(__file__).resolve().parents[2])) / "tests" / "data" / "protobuf"
DESC = DATA / "shop.desc"


def message_class(name):
    files = descriptor_pb2.FileDescriptorSet.FromString(DESC.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for f in files.file:
        pool.Add(f)
    descriptor = pool.FindMessageTypeByName(name)
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(descriptor)
    return message_factory.MessageFactory(pool).GetPrototype(descriptor)


Order = message_class("shop.Order")
STATUSES = ["STATUS_UNKNOWN", "PLACED", "SHIPPED"]


def iso(micros):
    t = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(
        microseconds=micros)
    frac = f".{t.microsecond:06d}" if t.microsecond % 1000 else f".{t.microsecond // 1000:03d}"
    return t.strftime("%Y-%m-%dT%H:%M:%S") + frac + "Z"


def set_timestamp(ts, rng):
    micros = rng.randint(-10**15, 4 * 10**15)
    ts.seconds = micros // 10**6
    # Nanoseconds below a microsecond are dropped by the reader.
    ts.nanos = (micros % 10**6) * 1000 + rng.randint(0, 999)


def micros_of(ts):
    return ts.seconds * 10**6 + ts.nanos // 1000


def random_order(rng, i):
    m = Order()
    m.id = rng.randint(-2**63, 2**63 - 1)
    m.customer = rng.choice(["", "ana", "chloé", "日本", "x" * rng.randint(1, 300)])
    m.paid = rng.random() < 0.5
    m.i32 = rng.randint(-2**31, 2**31 - 1)
    m.s32 = rng.randint(-2**31, 2**31 - 1)
    m.sf32 = rng.randint(-2**31, 2**31 - 1)
    m.u32 = rng.randint(0, 2**32 - 1)
    m.f32 = rng.randint(0, 2**32 - 1)
    m.s64 = rng.randint(-2**63, 2**63 - 1)
    m.sf64 = rng.randint(-2**63, 2**63 - 1)
    m.u64 = rng.randint(0, 2**63 - 1)
    m.f64 = rng.randint(0, 2**63 - 1)
    m.fl = rng.uniform(-1e6, 1e6)
    m.amount = rng.uniform(-1e12, 1e12)
    m.payload = bytes(rng.randrange(256) for _ in range(rng.randint(0, 40)))
    m.status = rng.randrange(3)
    if rng.random() < 0.7:
        set_timestamp(m.placed_at, rng)
    if rng.random() < 0.7:
        m.ship_to.city = rng.choice(["", "Lyon", "Oslo"])
        m.ship_to.zip = rng.randint(-2**31, 2**31 - 1)
    m.tags.extend(rng.choice(["a", "b", ""]) for _ in range(rng.randint(0, 4)))
    m.counts.extend(rng.randint(-2**31, 2**31 - 1) for _ in range(rng.randint(0, 5)))
    for _ in range(rng.randint(0, 3)):
        line = m.lines.add()
        line.sku = rng.choice(["k1", "k2"])
        line.qty = rng.randint(-2**40, 2**40)
        line.price = rng.uniform(0, 100)
    if rng.random() < 0.5:
        m.note = rng.choice(["", "gift"])
    which = rng.randrange(3)
    if which == 1:
        m.email = f"u{i}@x.org"
    elif which == 2:
        m.phone = str(rng.randint(0, 10**9))
    for _ in range(rng.randint(0, 2)):
        set_timestamp(m.events.add(), rng)
    return m


def expected_row(m):
    """The json row a protobuf source then a json sink give for message M."""
    return {
        "id": m.id, "customer": m.customer, "paid": m.paid, "i32": m.i32, "s32": m.s32,
        "sf32": m.sf32, "u32": m.u32, "f32": m.f32, "s64": m.s64, "sf64": m.sf64, "u64": m.u64,
        "f64": m.f64, "fl": shortest_float(m.fl), "amount": m.amount,
        "payload": base64.b64encode(m.payload).decode(), "status": STATUSES[m.status],
        "placed_at": iso(micros_of(m.placed_at)) if m.HasField("placed_at") else None,
        "ship_to": {"city": m.ship_to.city, "zip": m.ship_to.zip} if m.HasField("ship_to") else None,
        "tags": list(m.tags), "counts": list(m.counts),
        "lines": [{"sku": l.sku, "qty": l.qty, "price": l.price} for l in m.lines],
        "note": m.note if m.HasField("note") else None,
        "email": m.email if m.WhichOneof("contact") == "email" else None,
        "phone": m.phone if m.WhichOneof("contact") == "phone" else None,
        "events": [iso(micros_of(e)) for e in m.events],
    }


def test_the_descriptor_set_is_the_proto_compiled(tmp_path):
    out = tmp_path / "shop.desc"
    subprocess.run(["protoc", "--include_imports", f"--descriptor_set_out={out}", "shop.proto"],
                   cwd=DATA, check=True)
    assert out.read_bytes() == DESC.read_bytes(), "regenerate shop.desc (see shop.proto)"


def test_a_protobuf_source_reads_what_another_implementation_wrote(server):
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    rng = random.Random(20261202)
    orders = [random_order(rng, i) for i in range(200)]
    plain, framed = unique("pb_plain"), unique("pb_framed")
    kafka.create_topic(plain)
    kafka.create_topic(framed)
    kafka.produce(plain, [m.SerializeToString() for m in orders], partition=0)
    # Confluent's framing: magic byte 0, the schema id, then the message
    # indexes: the single byte 0, or the same first message spelt out (count
    # 1, index 0, as zigzag varints).
    kafka.produce(framed, [b"\0" + struct.pack(">I", 42) + (b"\0" if i % 2 else b"\x02\x00")
                           + m.SerializeToString() for i, m in enumerate(orders)], partition=0)
    for topic, framing in ((plain, "none"), (framed, "confluent")):
        src, snk, flow, out = unique("pbs"), unique("pbk"), unique("pbf"), unique("pbo")
        server.run_script(f"""
CREATE SOURCE {src} WITH ({kafka.options()}, subscribe = '{topic}', startingOffsets = 'earliest',
    format = 'protobuf', 'protobuf.framing' = '{framing}',
    'protobuf.descriptor' = '{DESC}', 'protobuf.message' = 'shop.Order');
CREATE SINK {snk} WITH ({kafka.options()}, topic = '{out}', format = 'json');
CREATE FLOW {flow} INTO {snk} TRIGGER REALTIME AS SELECT * FROM {src};
""")
        got = [json.loads(m.value()) for m in kafka.consume(out, n=len(orders), timeout=60)]
        assert len(got) == len(orders), server.psql("SHOW FLOWS", check=False)
        for g, m in zip(got, orders):
            assert g == expected_row(m)


def test_a_protobuf_sink_writes_what_another_implementation_reads(server):
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    rng = random.Random(7)
    rows = []
    for i in range(150):
        rows.append({
            "id": rng.randint(-2**63, 2**63 - 1),
            "customer": None if i % 7 == 0 else rng.choice(["", "a,b", "ünï", "q" * rng.randint(1, 90)]),
            "paid": None if i % 9 == 0 else rng.random() < 0.5,
            "i32": rng.randint(-2**31, 2**31 - 1),
            "u32": rng.randint(0, 2**32 - 1),
            "fl": rng.uniform(-1e6, 1e6),
            "amount": None if i % 5 == 0 else rng.uniform(-1e6, 1e6),
            "payload": base64.b64encode(bytes(rng.randrange(256) for _ in range(rng.randint(0, 9)))).decode(),
            "status": rng.choice(STATUSES),
            "ts_us": None if i % 4 == 0 else rng.randint(-10**15, 4 * 10**15),
            "city": None if i % 3 == 0 else rng.choice(["", "Oslo"]),
            "tags": [rng.choice(["x", "y", ""]) for _ in range(rng.randint(0, 4))],
            "note": None if i % 2 == 0 else rng.choice(["", "n"]),
        })
    topic, out = unique("pbsink_in"), unique("pbsink_out")
    src, snk, flow = unique("pbss"), unique("pbsk"), unique("pbsf")
    kafka.create_topic(topic)
    kafka.produce(topic, rows, partition=0)
    server.run_script(f"""
CREATE SOURCE {src} (id BIGINT, customer STRING, paid BOOLEAN, i32 INT, u32 BIGINT, fl DOUBLE,
    amount DOUBLE, payload BINARY, status STRING, ts_us BIGINT, city STRING, tags ARRAY<STRING>,
    note STRING)
WITH ({kafka.options()}, subscribe = '{topic}', startingOffsets = 'earliest', format = 'json');
CREATE SINK {snk} WITH ({kafka.options()}, topic = '{out}', format = 'protobuf',
    'protobuf.descriptor' = '{DESC}', 'protobuf.message' = 'shop.Order');
CREATE FLOW {flow} INTO {snk} TRIGGER REALTIME AS
SELECT id, customer, paid, i32, u32, fl, amount, payload, status,
       timestamp_micros(ts_us) AS placed_at,
       CASE WHEN city IS NULL THEN NULL ELSE named_struct('city', city, 'zip', i32) END AS ship_to,
       tags, note, note AS email
FROM {src};
""")
    got = [Order.FromString(m.value()) for m in kafka.consume(out, n=len(rows), timeout=60)]
    assert len(got) == len(rows), server.psql("SHOW FLOWS", check=False)
    for g, r in zip(got, rows):
        # NULL leaves a field unset: a plain proto3 scalar then reads as its
        # default, a field with presence as absent.
        assert g.id == r["id"]
        assert g.customer == (r["customer"] or "")
        assert g.paid == bool(r["paid"])
        assert g.i32 == r["i32"] and g.u32 == r["u32"]
        assert g.fl == struct.unpack("<f", struct.pack("<f", r["fl"]))[0]
        assert g.amount == (r["amount"] or 0.0)
        assert g.payload == base64.b64decode(r["payload"])
        assert STATUSES[g.status] == r["status"]
        assert g.HasField("placed_at") == (r["ts_us"] is not None)
        if r["ts_us"] is not None:
            assert micros_of(g.placed_at) == r["ts_us"] and g.placed_at.nanos % 1000 == 0
        assert g.HasField("ship_to") == (r["city"] is not None)
        if r["city"] is not None:
            assert (g.ship_to.city, g.ship_to.zip) == (r["city"], r["i32"])
        assert list(g.tags) == r["tags"]
        assert g.HasField("note") == (r["note"] is not None) and g.note == (r["note"] or "")
        assert g.WhichOneof("contact") == (None if r["note"] is None else "email")
        assert g.email == (r["note"] or "")
        # Fields with no column stay unset.
        assert not g.lines and g.s64 == 0 and not g.events
