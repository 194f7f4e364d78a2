"""A flow's 'on.error' = 'dead-letter' end to end, on the embedded broker and
on Apache Kafka: a Python function that raises for some rows sends those rows
(the failing Project's input, as JSON) to the flow's dead-letter topic with
the rtsql.* headers, the Python traceback among them, counts them in the
progress JSON's numRowErrorsDeadLettered and in /metrics, and passes the
other rows on; the flow keeps running."""

import json

import pytest

from conftest import HttpServer, unique


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """An rtsqld with --http-port, for /metrics."""
    s = HttpServer(tmp_path_factory.mktemp("rtsqld"))
    s.start()
    yield s
    code = s.stop()
    assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{s.log_tail()}"


def test_failed_rows_reach_the_dead_letter_topic(server, kafka):
    topic, dlq, out = unique("re_in"), unique("re_dlq"), unique("re_out")
    src, snk, flow, fn = unique("re_src"), unique("re_snk"), unique("re_f"), unique("re_fn")
    kafka.create_topic(topic)
    # On Apache Kafka the dead-letter topic exists before the flow writes to it.
    kafka.create_topic(dlq)
    rows = [{"id": i, "amount": float(i % 4)} for i in range(12)]
    kafka.produce(topic, rows, partition=0)
    server.run_script(
        f"CREATE FUNCTION {fn}(amount DOUBLE) RETURNS DOUBLE LANGUAGE PYTHON AS $$\n"
        f"    if amount == 0:\n"
        f"        raise ValueError('no amount')\n"
        f"    return 10 / amount\n"
        f"$$;\n"
        f"CREATE SOURCE {src} (id BIGINT, amount DOUBLE) WITH ({kafka.options()}, "
        f"subscribe = '{topic}', startingOffsets = 'earliest', format = 'json');\n"
        f"CREATE SINK {snk} WITH ({kafka.options()}, topic = '{out}', format = 'json');\n"
        f"CREATE FLOW {flow} INTO {snk} WITH ('on.error' = 'dead-letter', "
        f"'dead-letter.topic' = '{dlq}') AS "
        f"SELECT id, {fn}(amount) AS score FROM {src};\n")

    good = [r["id"] for r in rows if r["amount"] != 0]
    bad = [r["id"] for r in rows if r["amount"] == 0]
    got = kafka.consume_json(out, n=len(good), timeout=30, grace=0.5)
    assert sorted(r["id"] for r in got) == good

    letters = kafka.consume(dlq, n=len(bad), timeout=30, grace=0.5)
    assert len(letters) == len(bad), letters
    values = [json.loads(m.value()) for m in letters]
    assert sorted(v["id"] for v in values) == bad
    assert all(v["amount"] == 0.0 and set(v) == {"id", "amount"} for v in values), values
    for m in letters:
        assert m.key() is None
        headers = m.headers()
        assert [k for k, _ in headers] == [
            "rtsql.error", "rtsql.flow", "rtsql.operator", "rtsql.operator.id",
            "rtsql.sqlstate", "rtsql.message", "rtsql.detail"], headers
        named = dict(headers)
        assert named["rtsql.error"] == b"error"
        assert named["rtsql.flow"] == flow.encode()
        assert named["rtsql.operator"] == b"Project"
        assert named["rtsql.sqlstate"] == b"22000"
        assert named["rtsql.message"] == (
            f"function {fn} raised ValueError: no amount (at line 2 in {fn})").encode()
        detail = named["rtsql.detail"].decode()
        assert detail.startswith("Traceback (most recent call last):"), detail
        assert "raise ValueError('no amount')" in detail, detail
        assert detail.rstrip().endswith("ValueError: no amount"), detail

    prog = server.wait_progress(flow, lambda p: p.get("numRowErrorsDeadLettered") == len(bad))
    assert prog.get("numRowErrorsDeadLettered") == len(bad), prog
    assert "numRowErrorsSkipped" not in prog, prog
    state = [r for r in server.query("SHOW FLOWS") if r[0] == flow]
    assert state and state[0][2] == "running", state

    _, _, metrics = server.http("/metrics")
    want = f'rtsql_flow_row_errors{{flow="{flow}",action="dead_lettered"}} {len(bad)}'
    assert want in metrics, [line for line in metrics.splitlines() if "row_errors" in line]
