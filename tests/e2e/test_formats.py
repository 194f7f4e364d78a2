"""Record formats end to end: CSV and raw sources, the raw sink with key and
headers, the JSON sink's `key` option, `on.error = 'skip'`, and a datagen source
into a file sink."""

import json
import time

from conftest import unique


def kafka_source(kafka, name, topic, columns, fmt, extra=""):
    cols = f"({columns}) " if columns else ""
    return (f"CREATE SOURCE {name} {cols}WITH ({kafka.options()}, subscribe = '{topic}', "
            f"startingOffsets = 'earliest', format = '{fmt}'{extra});\n")


def kafka_sink(kafka, name, topic, fmt, extra=""):
    return (f"CREATE SINK {name} WITH ({kafka.options()}, topic = '{topic}', "
            f"format = '{fmt}'{extra});\n")


def test_csv_source(server, kafka):
    topic, out = unique("csv_in"), unique("csv_out")
    src, snk, flow = unique("csv"), unique("csv_snk"), unique("csv_f")
    kafka.create_topic(topic)
    lines = [f"user{i},{i * 1.5},{i}" for i in range(30)]
    lines.append('"quoted, user",2.5,7')
    kafka.produce(topic, lines)
    server.run_script(
        kafka_source(kafka, src, topic, "user_id STRING, amount DOUBLE, n BIGINT", "csv")
        + kafka_sink(kafka, snk, out, "json")
        + f"CREATE FLOW {flow} INTO {snk} TRIGGER REALTIME AS "
          f"SELECT user_id, amount + n AS total FROM {src};\n")
    got = kafka.consume_json(out, n=len(lines), timeout=30, grace=1.0)
    want = {(f"user{i}", round(i * 1.5 + i, 6)) for i in range(30)} | {("quoted, user", 9.5)}
    rows = [(v["user_id"], round(float(v["total"]), 6)) for v in got]
    assert len(rows) == len(want) and set(rows) == want


def test_raw_source_into_raw_sink_with_key_and_headers(server, kafka):
    topic, out, meta_out = unique("raw_in"), unique("raw_out"), unique("raw_meta")
    src, snk, meta_snk = unique("raw"), unique("raw_snk"), unique("meta_snk")
    kafka.create_topic(topic)
    n = 12
    values = [f"payload-{i}".encode() for i in range(n)]
    for i, v in enumerate(values):
        kafka.produce(topic, [v], key=f"k{i}".encode(), headers=[("trace", f"t{i}".encode())])
    server.run_script(
        kafka_source(kafka, src, topic, None, "raw", ", includeHeaders = 'true'")
        + kafka_sink(kafka, snk, out, "raw")
        + kafka_sink(kafka, meta_snk, meta_out, "json")
        + f"CREATE FLOW {unique('raw_f')} INTO {snk} TRIGGER REALTIME AS "
          f"SELECT key, value, headers FROM {src};\n"
        # Spark's Kafka columns, readable as a JSON row.
        + f"CREATE FLOW {unique('meta_f')} INTO {meta_snk} TRIGGER REALTIME AS "
          f"SELECT CAST(key AS STRING) AS k, CAST(value AS STRING) AS v, topic, "
          f"partition, offset, timestamp, timestampType FROM {src};\n")

    msgs = kafka.consume(out, n=n, timeout=30, grace=1.0)
    assert len(msgs) == n
    seen = {}
    for m in msgs:
        seen[m.key()] = (m.value(), [(h[0], bytes(h[1])) for h in (m.headers() or [])])
    for i, v in enumerate(values):
        assert seen[f"k{i}".encode()] == (v, [("trace", f"t{i}".encode())])

    meta = kafka.consume_json(meta_out, n=n, timeout=30)
    assert len(meta) == n
    assert {r["v"] for r in meta} == {v.decode() for v in values}
    assert {r["k"] for r in meta} == {f"k{i}" for i in range(n)}
    assert all(r["topic"] == topic for r in meta)
    by_partition = {}
    for r in meta:
        by_partition.setdefault(r["partition"], []).append(r["offset"])
    for offsets in by_partition.values():
        assert sorted(offsets) == list(range(len(offsets))), by_partition
    assert all(r["timestamp"] for r in meta)
    assert all(r["timestampType"] == 0 for r in meta)  # CreateTime, set by the producer


def test_json_sink_key_option(server, kafka):
    topic, out = unique("key_in"), unique("key_out")
    src, snk = unique("key_src"), unique("key_snk")
    kafka.create_topic(topic)
    records = [{"user_id": f"user{i % 4}", "amount": float(i)} for i in range(16)]
    kafka.produce(topic, records)
    server.run_script(
        kafka_source(kafka, src, topic, "user_id STRING, amount DOUBLE", "json")
        + kafka_sink(kafka, snk, out, "json", ", key = 'user_id'")
        + f"CREATE FLOW {unique('key_f')} INTO {snk} TRIGGER REALTIME AS "
          f"SELECT user_id, amount FROM {src};\n")
    msgs = kafka.consume(out, n=len(records), timeout=30, grace=1.0)
    assert len(msgs) == len(records)
    for m in msgs:
        row = json.loads(m.value())
        assert m.key() == row["user_id"].encode(), (m.key(), row)
    assert sorted(json.loads(m.value())["amount"] for m in msgs) == [float(i) for i in range(16)]


def test_on_error_skip_counts_and_continues(server, kafka):
    topic, out = unique("skip_in"), unique("skip_out")
    src, snk, flow = unique("skip_src"), unique("skip_snk"), unique("skip_f")
    kafka.create_topic(topic)
    good_before = [{"user_id": f"b{i}", "amount": 1.0 * i} for i in range(5)]
    good_after = [{"user_id": f"a{i}", "amount": 2.0 * i} for i in range(5)]
    kafka.produce(topic, good_before)
    kafka.produce(topic, ["{this is not json", '{"user_id": "x", "amount": "not a number"}'])
    kafka.produce(topic, good_after)
    server.run_script(
        kafka_source(kafka, src, topic, "user_id STRING, amount DOUBLE", "json",
                     ", 'on.error' = 'skip'")
        + kafka_sink(kafka, snk, out, "json")
        + f"CREATE FLOW {flow} INTO {snk} TRIGGER REALTIME AS SELECT user_id, amount FROM {src};\n")
    got = kafka.consume_json(out, n=10, timeout=30, grace=1.0)
    assert sorted(r["user_id"] for r in got) == sorted(
        [r["user_id"] for r in good_before + good_after])
    prog = server.wait_progress(
        flow, lambda p: p["sources"][0].get("numDecodeErrors") == 2 and p["numInputRows"] >= 10)
    assert prog["sources"][0].get("numDecodeErrors") == 2, prog
    assert prog["sink"]["numOutputRows"] == 10, prog


def test_datagen_into_file_sink(server, tmp_path):
    path = tmp_path / "out.jsonl"
    src, snk, flow = unique("gen"), unique("file_snk"), unique("gen_f")
    server.run_script(f"""
CREATE SOURCE {src} (id BIGINT, name STRING, amount DOUBLE) WITH (
    connector = 'datagen', 'rows-per-second' = '200', 'number-of-rows' = '50',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1',
    'fields.name.values' = 'alice,bob,carol',
    'fields.amount.min' = '1', 'fields.amount.max' = '100');
CREATE SINK {snk} WITH (connector = 'file', path = '{path}', format = 'json');
CREATE FLOW {flow} INTO {snk} TRIGGER REALTIME AS
    SELECT id, name, amount FROM {src} WHERE amount >= 1;
""")
    deadline = time.monotonic() + 30
    lines = []
    while time.monotonic() < deadline:
        if path.exists():
            lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
            if len(lines) >= 50:
                break
        time.sleep(0.2)
    time.sleep(0.5)
    lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
    rows = [json.loads(ln) for ln in lines]
    assert sorted(r["id"] for r in rows) == list(range(1, 51))
    assert {r["name"] for r in rows} <= {"alice", "bob", "carol"}
    assert all(1 <= r["amount"] <= 100 for r in rows)
