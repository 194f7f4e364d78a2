"""deploy/grafana/rtsql.json against a real rtsqld: every metric the dashboard's
PromQL expressions query is one that /metrics serves, and every label matcher
they use selects samples of a running flow (a windowed count over a source with
a watermark, so latency, state and watermark series all exist)."""

import json
import re
import time
from pathlib import Path

import pytest

from conftest import Kafka, unique
from test_http import HttpServer, parse_exposition

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "rtsql.json"

# PromQL words that are not metric names: functions, aggregations, clauses.
PROMQL_WORDS = {"sum", "avg", "min", "max", "count", "by", "without", "time", "rate",
                "irate", "increase", "label_values", "histogram_quantile", "topk", "bottomk",
                "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless"}
# The dashboard's template variables, as a query over all flows would set them.
VARIABLES = {"$flow": ".*"}

SELECTOR_RE = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?')
MATCHER_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')


def dashboard_queries():
    """Every PromQL expression of the dashboard: targets and template queries."""
    board = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in board["panels"] for t in p.get("targets", [])]
    for var in board["templating"]["list"]:
        if var["type"] == "query":
            q = var["query"]
            exprs.append(q["query"] if isinstance(q, dict) else q)
    return exprs


def selectors(expr):
    """(metric, [(label, op, value)]) for each metric an expression reads."""
    out = []
    # Grouping clauses and label_values()'s second argument name labels, not metrics.
    expr = re.sub(r'\b(by|without|on|ignoring)\s*\([^)]*\)', ' ', expr)
    expr = re.sub(r'\blabel_values\(([^,]+),[^)]*\)', r'label_values(\1)', expr)
    for m in SELECTOR_RE.finditer(expr):
        name, braces = m.group(1), m.group(2)
        rest = expr[m.end():].lstrip()
        if name in PROMQL_WORDS or (rest.startswith("(") and not braces):
            continue
        matchers = MATCHER_RE.findall(braces or "")
        for label, op, value in matchers:
            assert not value.startswith("$") or value in VARIABLES, (expr, value)
        out.append((name, [(l, op, VARIABLES.get(v, v)) for l, op, v in matchers]))
    return out


def matches(labels, matchers):
    for label, op, value in matchers:
        actual = labels.get(label, "")
        if op == "=" and actual != value:
            return False
        if op == "!=" and actual == value:
            return False
        if op == "=~" and not re.fullmatch(value, actual):
            return False
        if op == "!~" and re.fullmatch(value, actual):
            return False
    return True


def test_selector_parser_reads_what_the_dashboard_writes():
    # The parser the test relies on, on the shapes the dashboard uses.
    assert selectors('time() - rtsql_flow_watermark_seconds{flow=~"$flow"}') == [
        ("rtsql_flow_watermark_seconds", [("flow", "=~", ".*")])]
    assert selectors('sum by (flow) (rtsql_flow_state_rows{flow=~"$flow",kind="e2e"})') == [
        ("rtsql_flow_state_rows", [("flow", "=~", ".*"), ("kind", "=", "e2e")])]
    assert selectors("label_values(rtsql_flow_running, flow)") == [("rtsql_flow_running", [])]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = HttpServer(tmp_path_factory.mktemp("rtsqld_grafana"))
    s.start()
    yield s
    code = s.stop()
    assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{s.log_tail()}"


N_RECORDS = 30


@pytest.fixture(scope="module")
def flow(server):
    """A running windowed count that has read N_RECORDS records; its source
    dead-letters what it cannot decode and the flow skips rows it cannot
    evaluate, so their series exist too."""
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    topic, out_topic, dead = unique("events"), unique("counts"), unique("dead")
    src, snk, name = unique("src"), unique("snk"), unique("f")
    partitions = kafka.create_topic(topic)
    kafka.create_topic(dead)
    base = int(time.time()) - 60
    records = [{"k": f"k{i % 3}", "ts": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(base + i)),
                "i": i} for i in range(N_RECORDS)]
    # Records in every partition: the watermark is the smallest over them, and
    # one without records would hold it back.
    kafka.produce(topic, records, partition=lambda r: r["i"] % partitions)
    opts = "connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded'"
    with server.connect() as conn:
        conn.execute(
            f"CREATE SOURCE {src} (k STRING, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) "
            f"WITH ({opts}, subscribe = '{topic}', startingOffsets = 'earliest', format = 'json', "
            f"'on.error' = 'dead-letter', 'dead-letter.topic' = '{dead}')")
        conn.execute(f"CREATE SINK {snk} WITH ({opts}, topic = '{out_topic}', format = 'json')")
        conn.execute(
            f"CREATE FLOW {name} INTO {snk} CHECKPOINT INTERVAL '1 second' "
            f"WITH ('on.error' = 'skip') AS "
            f"SELECT window.start AS w, k, count(*) AS n "
            f"FROM {src} GROUP BY window(ts, '10 seconds'), k EMIT ON WINDOW CLOSE")
    server.wait_progress(name, lambda p: p.get("numInputRows") == N_RECORDS)
    return name


def test_every_dashboard_metric_is_served(server, flow):
    queries = dashboard_queries()
    assert len(queries) >= 20, queries
    wanted = [(expr, sel) for expr in queries for sel in selectors(expr)]
    names = {name for _, (name, _) in wanted}
    assert names, queries
    # Every series the flow reports shows up within one scrape of the epoch's
    # progress; wait until each selector matches one, or report those that never do.
    deadline = time.monotonic() + 20
    while True:
        status, _, body = server.http("/metrics")
        assert status == 200
        families = set(re.findall(r"^# TYPE (\S+) ", body, re.M))
        series = parse_exposition(body)
        missing_names = sorted(names - families)
        assert not missing_names, f"the dashboard queries metrics rtsqld does not serve: {missing_names}"
        unmatched = []
        for expr, (name, matchers) in wanted:
            if not any(n == name and matches(dict(labels), matchers) for (n, labels) in series):
                unmatched.append(expr)
        if not unmatched or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not unmatched, f"no sample of the running flow matches: {unmatched}"
