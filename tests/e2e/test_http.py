"""The HTTP endpoint of a real rtsqld started with --http-port: /healthz,
/flows, /flows/<name>/progress (the same JSON as SHOW PROGRESS) and /metrics
(Prometheus text format), read with urllib while a real flow runs, and checked
against what the PostgreSQL side (psycopg) says about the same flow."""

import http.client
import json
import math
import re
import socket
import time

import psycopg
import pytest

from conftest import HttpServer, Kafka, unique

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = HttpServer(tmp_path_factory.mktemp("rtsqld_http"))
    s.start()
    yield s
    code = s.stop()
    assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{s.log_tail()}"


# -- a Prometheus text format (0.0.4) parser, strict on what the format says ----

SAMPLE_RE = re.compile(
    r'^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)'
    r'(?:\{(?P<labels>(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})?'
    r' (?P<value>\S+)$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')


def unescape(v):
    return re.sub(r'\\([\\"n])', lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


def parse_exposition(text):
    """{(name, frozenset(labels)): value}; asserts the format's rules."""
    assert text.endswith("\n")
    types, helps, done, series = {}, set(), set(), {}
    current = None
    for n, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            kind, name, *rest = line[2:].split(" ", 2)
            if name != current:
                assert name not in done, f"line {n}: {name} declared again: {line}"
                if current:
                    done.add(current)
                current = name
            if kind == "HELP":
                assert name not in helps, f"line {n}: second HELP"
                helps.add(name)
            else:
                assert rest and rest[0] in ("counter", "gauge", "summary", "histogram", "untyped"), line
                assert name not in types, f"line {n}: second TYPE"
                types[name] = rest[0]
            continue
        if line.startswith("#"):
            continue
        m = SAMPLE_RE.match(line)
        assert m, f"line {n} is not a sample: {line!r}"
        name = m.group("name")
        assert name in types and name in helps, f"line {n}: sample before HELP/TYPE: {line}"
        assert name == current, f"line {n}: sample outside its family's group: {line}"
        labels = {k: unescape(v) for k, v in LABEL_RE.findall(m.group("labels") or "")}
        value = m.group("value")
        assert value in ("NaN", "+Inf", "-Inf") or not math.isnan(float(value)), line
        key = (name, frozenset(labels.items()))
        assert key not in series, f"line {n}: duplicate series: {line}"
        series[key] = float(value)
    return series


def sample(series, name, **labels):
    return series.get((name, frozenset(labels.items())))


# -- a running flow -------------------------------------------------------------

N_RECORDS = 40


@pytest.fixture(scope="module")
def flow(server):
    """A running quick-start style flow that has read N_RECORDS records."""
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    topic, out_topic = unique("clicks"), unique("out")
    names = {"source": unique("src"), "sink": unique("snk"), "flow": unique("f")}
    kafka.create_topic(topic)
    records = [{"user_id": f"u{i}", "amount": float(i)} for i in range(N_RECORDS)]
    kafka.produce(topic, records)
    opts = "connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded'"
    with server.connect() as conn:
        conn.execute(
            f"CREATE SOURCE {names['source']} (user_id STRING, amount DOUBLE) WITH ({opts}, "
            f"subscribe = '{topic}', startingOffsets = 'earliest', format = 'json')")
        conn.execute(
            f"CREATE SINK {names['sink']} WITH ({opts}, topic = '{out_topic}', format = 'json')")
        conn.execute(
            f"CREATE FLOW {names['flow']} INTO {names['sink']} TRIGGER REALTIME AS "
            f"SELECT user_id, amount * 2 AS doubled FROM {names['source']} WHERE amount >= 10")
    expected_out = sum(1 for r in records if r["amount"] >= 10)
    prog = server.wait_progress(
        names["flow"], lambda p: p.get("numInputRows") == N_RECORDS
        and p.get("sink", {}).get("numOutputRows") == expected_out)
    assert prog["numInputRows"] == N_RECORDS, prog
    names["expected_out"] = expected_out
    return names


# -- tests ------------------------------------------------------------------------

def test_healthz(server):
    status, ctype, body = server.http("/healthz")
    assert status == 200
    assert ctype.startswith("text/plain")
    assert body.strip() == "ok"


def test_unknown_paths_and_methods(server):
    status, ctype, body = server.http("/nowhere")
    assert status == 404 and ctype == "application/json"
    assert "error" in json.loads(body)

    status, ctype, body = server.http("/flows/no_such_flow/progress")
    assert status == 404 and ctype == "application/json"
    assert "no_such_flow" in json.loads(body)["error"]

    for method in ("POST", "PUT", "DELETE"):
        status, _, _ = server.http("/metrics", method=method)
        assert status == 405, method


def test_flows_matches_show_flows(server, flow):
    status, ctype, body = server.http("/flows")
    assert status == 200 and ctype == "application/json"
    flows = json.loads(body)
    assert isinstance(flows, list)
    mine = [f for f in flows if f["name"] == flow["flow"]]
    assert len(mine) == 1, flows
    f = mine[0]
    assert set(f) == {"name", "sink", "state", "error", "slots", "materializedView"}
    assert f["materializedView"] is False
    rows = {r[0]: r for r in server.query("SHOW FLOWS")}
    name, sink, state, slots, error = rows[flow["flow"]]
    assert f["sink"] == sink == flow["sink"]
    assert f["state"] == state == "running"
    assert f["error"] is None and error is None
    assert f["slots"] == int(slots) and f["slots"] >= 1


# Numbers that change from one read to the next while a flow runs.
LIVE_KEYS = {"inputRowsPerSecond", "processedRowsPerSecond", "durationMs", "rtmMetrics",
             "latestOffset", "lastEpoch"}


def stable(value):
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in LIVE_KEYS}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def test_progress_is_show_progress(server, flow):
    name = flow["flow"]
    # An epoch may end between the two reads; then the next pair agrees.
    for _ in range(3):
        status, ctype, body = server.http(f"/flows/{name}/progress")
        assert status == 200 and ctype == "application/json"
        over_http = json.loads(body)
        over_sql = server.progress(name)
        if over_http["batchId"] == over_sql["batchId"]:
            break
    assert set(over_http) == set(over_sql)
    assert stable(over_http) == stable(over_sql)
    assert over_http["numInputRows"] == N_RECORDS
    assert over_http["name"] == name
    # The identifier is matched as SQL matches it: case does not matter.
    status, _, body = server.http(f"/flows/{name.upper()}/progress")
    assert status == 200 and json.loads(body)["id"] == over_sql["id"]


def test_metrics(server, flow):
    status, ctype, body = server.http("/metrics")
    assert status == 200
    assert ctype == "text/plain; version=0.0.4; charset=utf-8"
    series = parse_exposition(body)
    name = flow["flow"]
    assert sample(series, "rtsql_flow_running", flow=name) == 1
    assert sample(series, "rtsql_flow_failed", flow=name) == 0
    assert sample(series, "rtsql_flow_epoch_input_rows", flow=name) == N_RECORDS
    assert sample(series, "rtsql_flow_epoch_output_rows", flow=name) == flow["expected_out"]
    assert sample(series, "rtsql_flow_epoch_decode_errors", flow=name) == 0
    slots = sample(series, "rtsql_flow_slots", flow=name)
    assert slots is not None and slots >= 1
    used, total = sample(series, "rtsql_slots_used"), sample(series, "rtsql_slots_total")
    assert total == 64 and slots <= used <= total
    show_slots = server.query("SHOW slots")[0][0]
    assert show_slots == f"{int(used)} used of {int(total)}"
    for kind in ("processing", "source_queuing", "e2e"):
        values = [sample(series, "rtsql_flow_latency_ms", flow=name, kind=kind, quantile=q)
                  for q in ("0.5", "0.9", "0.95", "0.99")]
        assert all(v is not None and v >= 0 for v in values), (kind, values)
        assert values == sorted(values), (kind, values)
    # Everything the source had is read.
    assert sample(series, "rtsql_flow_source_lag_records", flow=name) == 0

    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        return
    # Prometheus's own Python parser reads it too, when it is installed.
    families = {f.name: f for f in text_string_to_metric_families(body)}
    assert "rtsql_flow_latency_ms" in families


def test_dropped_flow_disappears(server, flow):
    with server.connect() as conn:
        conn.execute(f"STOP FLOW {flow['flow']}")
        _, _, body = server.http("/metrics")
        series = parse_exposition(body)
        assert sample(series, "rtsql_flow_running", flow=flow["flow"]) == 0
        status, _, body = server.http(f"/flows/{flow['flow']}/progress")
        assert status == 200 and json.loads(body)["numInputRows"] == N_RECORDS
        conn.execute(f"DROP FLOW {flow['flow']}")
    _, _, body = server.http("/flows")
    assert flow["flow"] not in [f["name"] for f in json.loads(body)]
    status, _, _ = server.http(f"/flows/{flow['flow']}/progress")
    assert status == 404
    _, _, body = server.http("/metrics")
    assert f'flow="{flow["flow"]}"' not in body


# -- what a hostile client or web page can do -------------------------------------

PROBE_TIMEOUT_S = 30


def request_with_host(server, path, host, method="GET", body=None, headers=None):
    """(status, headers, body text) of one request sending HOST as its Host header."""
    conn = http.client.HTTPConnection(server.host, server.http_port, timeout=PROBE_TIMEOUT_S)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host)
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        r = conn.getresponse()
        return r.status, r.headers, r.read().decode()
    finally:
        conn.close()


def test_healthz_answers_while_idle_sockets_hold_every_place(server):
    """A hundred sockets from one peer that never send a request (more than the
    64 connections the endpoint serves) do not make a liveness probe fail: the
    probe from one more connection gets its 200."""
    idle = []
    try:
        for _ in range(100):
            idle.append(socket.create_connection((server.host, server.http_port), timeout=10))
        status, _, body = request_with_host(server, "/healthz", f"127.0.0.1:{server.http_port}")
        assert status == 200 and body == "ok\n"
    finally:
        for s in idle:
            s.close()
    # Once they are gone everything is answered again (bounded retries while
    # the server notices the closes).
    deadline = time.monotonic() + PROBE_TIMEOUT_S
    status = None
    while time.monotonic() < deadline and status != 200:
        status = server.http("/flows")[0]
        if status != 200:
            time.sleep(0.2)
    assert status == 200


def test_foreign_host_header_is_refused(server):
    """DNS rebinding: a page on attacker.example whose name now resolves to
    127.0.0.1 sends `Host: attacker.example`, and is refused; the names the
    server is reached by are answered."""
    port = server.http_port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost"):
        status, _, body = request_with_host(server, "/flows", host)
        assert status == 200, (host, body)
    for host in ("attacker.example", f"attacker.example:{port}",
                 f"localhost.attacker.example:{port}"):
        status, _, body = request_with_host(server, "/flows", host)
        assert status == 421, (host, body)
        assert "--http-allowed-hosts" in json.loads(body)["error"]
        status, _, _ = request_with_host(
            server, "/sql", host, method="POST", body=b'{"sql": "SHOW FLOWS"}',
            headers={"Content-Type": "application/json"})
        assert status == 421, host


def test_every_answer_forbids_framing_and_sniffing(server):
    """The console's page, its script, the JSON API, /metrics, /healthz and an
    error all say: no framing by another site, no type sniffing, and a
    Content-Security-Policy without inline script."""
    host = f"127.0.0.1:{server.http_port}"
    paths = ("/", "/console/console.js", "/flows", "/metrics", "/healthz", "/nowhere")
    answers = {path: request_with_host(server, path, host) for path in paths}
    answers["POST /sql"] = request_with_host(
        server, "/sql", host, method="POST", body=b'{"sql": "SHOW FLOWS"}',
        headers={"Content-Type": "application/json"})
    assert answers["/"][0] == 200 and answers["POST /sql"][0] == 200
    for what, (status, headers, _) in answers.items():
        assert headers.get("X-Frame-Options") == "DENY", what
        assert headers.get("X-Content-Type-Options") == "nosniff", what
        csp = headers.get("Content-Security-Policy") or ""
        assert "frame-ancestors 'none'" in csp, (what, csp)
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp, (what, csp)
