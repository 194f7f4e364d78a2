"""The quick start, end to end: a Kafka source, a Kafka sink and a real-time flow
deployed with `rtsql -f`, fed by a real Kafka producer, checked record by record
on the sink topic, then its progress JSON and its STOP / START / DROP life cycle."""

import json
import random
import time

import psycopg
import pytest

from conftest import unique

PERCENTILES = ["P0", "P50", "P90", "P95", "P99"]


def make_records(n, tag, rng):
    """N click records with unique user ids; amounts spread around the filter's
    threshold, with 10 itself (which `amount > 10` must drop) always included."""
    out = []
    for i in range(n):
        amount = 10.0 if i % 17 == 0 else round(rng.uniform(0.5, 30.0), 2)
        out.append({
            "user_id": f"{tag}-u{i}",
            "url": f"https://example.com/{tag}/page{i % 7}?q=x{i}",
            "amount": amount,
            "ts": f"2024-05-01 12:{i % 60:02d}:{i % 60:02d}.{i % 1000:03d}",
        })
    return out


def expected_rows(records):
    return {(r["user_id"], r["url"].upper(), round(r["amount"] * 2, 6))
            for r in records if r["amount"] > 10}


def as_rows(values):
    rows = []
    for v in values:
        assert set(v.keys()) == {"user_id", "url", "doubled"}, v
        rows.append((v["user_id"], v["url"], round(float(v["doubled"]), 6)))
    return rows


class Deployment:
    """A quick-start deployment with unique names."""

    def __init__(self, server, kafka):
        self.server = server
        self.kafka = kafka
        self.in_topic = unique("clicks")
        self.out_topic = unique("out")
        self.source = unique("clicks")
        self.sink = unique("out")
        self.flow = unique("f")

    def script(self):
        k = self.kafka.options()
        return f"""-- The quick start flow.
CREATE SOURCE {self.source} (
    user_id STRING,
    url     STRING,
    amount  DOUBLE,
    ts      TIMESTAMP
) WITH (
    {k},
    subscribe = '{self.in_topic}',
    startingOffsets = 'earliest',
    format = 'json'
);

CREATE SINK {self.sink} WITH ({k}, topic = '{self.out_topic}', format = 'json');

CREATE FLOW {self.flow} INTO {self.sink}
    TRIGGER REALTIME
AS SELECT user_id, upper(url) AS url, amount * 2 AS doubled
   FROM {self.source}
   WHERE amount > 10;
"""

    def deploy(self):
        self.kafka.create_topic(self.in_topic)
        return self.server.run_script(self.script(), name="quickstart.sql")


def test_quickstart_exact_output_and_progress(server, kafka):
    rng = random.Random(42)
    d = Deployment(server, kafka)
    records = make_records(200, unique("q"), rng)
    # Half the records are there before the flow starts (startingOffsets =
    # 'earliest' must pick them up), half arrive while it runs.
    d.kafka.create_topic(d.in_topic)
    kafka.produce(d.in_topic, records[:100], key=lambda r: r["user_id"])
    p = d.deploy()
    assert p.returncode == 0

    kafka.produce(d.in_topic, records[100:], key=lambda r: r["user_id"])
    expected = expected_rows(records)
    assert 0 < len(expected) < len(records)

    got = as_rows(kafka.consume_json(d.out_topic, n=len(expected), timeout=30, grace=2.0))
    assert len(got) == len(set(got)), "duplicates on the sink topic"
    missing = expected - set(got)
    extra = set(got) - expected
    assert not missing, f"{len(missing)} expected rows missing, e.g. {sorted(missing)[:3]}"
    assert not extra, f"{len(extra)} unexpected rows, e.g. {sorted(extra)[:3]}"

    prog = server.wait_progress(
        d.flow, lambda pr: pr.get("numInputRows") == len(records)
        and pr.get("sink", {}).get("numOutputRows") == len(expected))
    assert prog["numInputRows"] == len(records), prog
    assert prog["sink"]["numOutputRows"] == len(expected), prog

    for field in ["id", "runId", "name", "timestamp", "batchId", "numInputRows",
                  "inputRowsPerSecond", "processedRowsPerSecond", "durationMs", "eventTime",
                  "stateOperators", "sources", "sink", "rtmMetrics"]:
        assert field in prog, f"progress JSON lacks {field}: {prog}"
    assert prog["name"] == d.flow
    assert isinstance(prog["sources"], list) and len(prog["sources"]) == 1
    src = prog["sources"][0]
    for field in ["description", "startOffset", "endOffset", "latestOffset", "numInputRows"]:
        assert field in src, f"progress sources[0] lacks {field}: {src}"
    assert src["numInputRows"] == len(records)
    assert "description" in prog["sink"]

    for metric in ["processingLatencyMs", "sourceQueuingLatencyMs", "e2eLatencyMs"]:
        m = prog["rtmMetrics"][metric]
        values = [m[p] for p in PERCENTILES]
        assert all(isinstance(v, (int, float)) for v in values), (metric, m)
        assert all(v >= 0 for v in values), (metric, m)
        assert values == sorted(values), f"{metric} percentiles not ordered: {m}"


def _user_ids(values):
    return [v["user_id"] for v in values]


def test_stop_start_drop(server, kafka):
    rng = random.Random(7)
    d = Deployment(server, kafka)
    d.deploy()
    a = make_records(40, unique("a"), rng)
    b = make_records(40, unique("b"), rng)
    c = make_records(20, unique("c"), rng)
    exp_a, exp_b, exp_c = expected_rows(a), expected_rows(b), expected_rows(c)

    kafka.produce(d.in_topic, a)
    got = as_rows(kafka.consume_json(d.out_topic, n=len(exp_a), timeout=30))
    assert set(got) == exp_a and len(got) == len(exp_a)

    server.query(f"STOP FLOW {d.flow}")
    kafka.produce(d.in_topic, b)
    # A stopped flow reads nothing: after a pause only batch A is on the sink.
    time.sleep(3)
    got = as_rows(json.loads(m.value()) for m in kafka.consume_to_end(d.out_topic, timeout=10))
    assert set(got) == exp_a and len(got) == len(exp_a), "a stopped flow wrote output"

    server.query(f"START FLOW {d.flow}")
    # Restarted from the offsets committed at STOP: all of B, none of A again.
    got = as_rows(kafka.consume_json(d.out_topic, n=len(exp_a) + len(exp_b), timeout=30,
                                     grace=2.0))
    assert len(got) == len(set(got)), "duplicates after START FLOW"
    assert set(got) == exp_a | exp_b

    server.query(f"DROP FLOW {d.flow}")
    flows = server.psql("SHOW FLOWS").stdout
    assert d.flow not in flows
    with pytest.raises(psycopg.Error):
        server.query(f"SHOW PROGRESS {d.flow}")
    kafka.produce(d.in_topic, c)
    time.sleep(3)
    got = as_rows(json.loads(m.value()) for m in kafka.consume_to_end(d.out_topic, timeout=10))
    assert not (set(got) & exp_c), "a dropped flow wrote output"
    assert len(got) == len(exp_a) + len(exp_b)
    # DROP FLOW IF EXISTS on a flow that is gone is not an error.
    server.query(f"DROP FLOW IF EXISTS {d.flow}")
