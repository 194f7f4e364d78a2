"""HTTP sinks end to end: a flow from the embedded broker into a Python
http.server on loopback. The rows arrive as the JSON objects produced (one per
request, or arrays of up to 'batch.max.rows'), with the headers of the sink's
options; 503 and 429 answers are retried and every row still arrives once; a
400 fails the flow with the status in its reason; a server that is down at
first gets the rows once it is up."""

import json
import socket
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from conftest import Kafka, sql_str, unique


class Hook:
    """A ThreadingHTTPServer on 127.0.0.1 that keeps every request it gets and
    answers the first ones with the statuses in ANSWERS (a status, or a
    (status, headers, body) tuple), the rest with 200."""

    def __init__(self, answers=(), port=0, tls=None):
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.requests = []  # (method, path, headers, body, status answered)
        self.connections = set()  # the client ports requests came from
        self.answers = list(answers)
        hook = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive

            def log_message(self, *args):
                pass

            def handle_one(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                with hook.cond:
                    answer = hook.answers.pop(0) if hook.answers else 200
                    status, headers, text = answer if isinstance(answer, tuple) else (answer, {}, "")
                    hook.connections.add(self.client_address[1])
                    hook.requests.append(
                        (self.command, self.path, dict(self.headers), json.loads(body), status))
                    hook.cond.notify_all()
                data = text.encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = handle_one
            do_PUT = handle_one

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.scheme = "http"
        if tls:  # (certificate file, key file)
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
            self.scheme = "https"
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path="/alerts"):
        return f"{self.scheme}://127.0.0.1:{self.port}{path}"

    def delivered(self):
        """The rows of the requests answered 2xx, in arrival order."""
        with self.lock:
            out = []
            for _, _, _, body, status in self.requests:
                if 200 <= status < 300:
                    out.extend(body if isinstance(body, list) else [body])
            return out

    def wait_rows(self, n, timeout=30):
        deadline = time.monotonic() + timeout
        with self.cond:
            while len(self.delivered()) < n and time.monotonic() < deadline:
                self.cond.wait(timeout=0.2)
        return self.delivered()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def rows(n):
    return [{"id": i, "name": ["alpha", 'quote " and \\', "ünï", None][i % 4],
             "amount": i * 1.5 - 4, "ok": i % 3 == 0} for i in range(n)]


def start_flow(server, kafka, sink_options, n, checkpoint=""):
    """A topic with N rows, a source on it, an http sink with SINK_OPTIONS and
    a real-time flow between them; returns the flow's name, the rows and the
    topic's partitions (the flow runs at most one sink task per partition)."""
    topic, src, snk, flow = unique("hs_in"), unique("hs_src"), unique("hs_snk"), unique("hs_flow")
    partitions = kafka.create_topic(topic)
    want = rows(n)
    kafka.produce(topic, want)
    server.run_script(f"""
CREATE SOURCE {src} (id BIGINT, name STRING, amount DOUBLE, ok BOOLEAN)
  WITH ({kafka.options()}, subscribe = '{topic}', startingOffsets = 'earliest', format = 'json');
CREATE SINK {snk} WITH (connector = 'http', {sink_options});
CREATE FLOW {flow} INTO {snk} TRIGGER REALTIME {checkpoint} AS SELECT id, name, amount, ok FROM {src};
""")
    return flow, want, partitions


def wait_failed(server, flow):
    """Progress once the flow has failed: 'failed', or 'recovering' while the
    flow's restart policy runs it again from its last checkpoint."""
    p = server.wait_progress(
        flow, lambda p: p["status"]["state"] in ("failed", "recovering") and p["status"]["reason"],
        timeout=30)
    assert p["status"]["state"] in ("failed", "recovering"), p["status"]
    return p


def by_id(rs):
    return sorted(rs, key=lambda r: r["id"])


def embedded(server):
    return Kafka("embedded", "embedded", server.embedded_bootstrap)


def test_rows_arrive_as_json_objects_with_the_headers(server):
    hook = Hook()
    try:
        opts = (f"url = {sql_str(hook.url('/alerts?team=fraud'))}, "
                "'http.header.Authorization' = 'Bearer s3cret', 'http.header.X-Team' = 'fraud; ops'")
        flow, want, partitions = start_flow(server, embedded(server), opts, 40)
        got = hook.wait_rows(len(want))
        assert by_id(got) == want
        assert len(got) == len(want)
        with hook.lock:
            requests = list(hook.requests)
        for method, path, headers, body, _ in requests:
            assert method == "POST"
            assert path == "/alerts?team=fraud"
            assert isinstance(body, dict)  # batch.max.rows 1: one object per request
            assert headers["Authorization"] == "Bearer s3cret"
            assert headers["X-Team"] == "fraud; ops"
            assert headers["Content-Type"] == "application/json"
        # Keep-alive: each of a sink task's 'max.in.flight' (4) senders reuses
        # its connection.
        with hook.lock:
            assert 1 <= len(hook.connections) <= 4 * partitions, hook.connections
            assert len(hook.connections) < len(hook.requests)
        assert server.progress(flow)["status"]["state"] == "running"
    finally:
        hook.close()


def test_batches_are_arrays_of_at_most_batch_max_rows(server):
    hook = Hook()
    try:
        opts = (f"url = {sql_str(hook.url())}, 'http.method' = 'PUT', "
                "'batch.max.rows' = '7', 'batch.linger.ms' = '20'")
        _, want, _ = start_flow(server, embedded(server), opts, 40)
        got = hook.wait_rows(len(want))
        assert by_id(got) == want
        with hook.lock:
            requests = list(hook.requests)
        for method, _, _, body, _ in requests:
            assert method == "PUT"
            assert isinstance(body, list) and 1 <= len(body) <= 7, body
    finally:
        hook.close()


def test_503_and_429_are_retried_and_every_row_arrives_once(server):
    hook = Hook(answers=[503, (429, {"Retry-After": "0"}, "slow down"), 503])
    try:
        opts = (f"url = {sql_str(hook.url())}, 'retry.backoff.ms' = '10', "
                "'max.in.flight' = '1'")
        flow, want, partitions = start_flow(server, embedded(server), opts, 12)
        got = hook.wait_rows(len(want))
        assert by_id(got) == want
        assert len(got) == len(want)
        with hook.lock:
            statuses = [r[4] for r in hook.requests]
        # One request per row, and the three refused ones once more each.
        assert statuses[:3] == [503, 429, 503]
        assert len(statuses) == len(want) + 3
        with hook.lock:
            # One sender per sink task, each with one kept-alive connection.
            assert len(hook.connections) <= partitions
        assert server.progress(flow)["status"]["state"] == "running"
    finally:
        hook.close()


def test_a_400_fails_the_flow_naming_the_status_not_the_answer(server):
    hook = Hook(answers=[(400, {}, "bad alert: field 'severity' missing")] * 1000)
    try:
        opts = f"url = {sql_str(hook.url())}"
        # The failure is reported by the next row's write or the epoch's end,
        # whichever comes first: a short interval makes the end come soon.
        flow, _, _ = start_flow(server, embedded(server), opts, 5, "CHECKPOINT INTERVAL '1 second'")
        status = wait_failed(server, flow)["status"]
        reason = status["reason"]
        assert "HTTP 400" in reason, reason
        assert hook.url() in reason, reason
        # The status and the size: the answer's text never reaches the reason.
        assert "answered HTTP 400 (35 bytes)" in reason, reason
        assert "severity" not in reason, reason
        with hook.lock:
            assert hook.requests and all(r[4] == 400 for r in hook.requests)
    finally:
        hook.close()


def test_a_server_down_at_first_gets_the_rows_once_it_is_up(server):
    # Until the real server starts, the port accepts connections and closes
    # them at once: the sink's requests fail as on a server going down.
    down = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    down.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    down.bind(("127.0.0.1", 0))
    down.listen(16)
    down.settimeout(30)
    port = down.getsockname()[1]
    hook = None
    try:
        opts = (f"url = 'http://127.0.0.1:{port}/alerts', 'retries' = '1000', "
                "'retry.backoff.ms' = '20', 'retry.backoff.max.ms' = '200'")
        flow, want, _ = start_flow(server, embedded(server), opts, 8)
        for _ in range(3):  # the sink tried, and tried again
            conn, _ = down.accept()
            conn.close()
        down.close()
        hook = Hook(port=port)
        got = hook.wait_rows(len(want))
        assert by_id(got) == want
        assert server.progress(flow)["status"]["state"] == "running"
    finally:
        down.close()
        if hook:
            hook.close()


def test_bad_options_fail_at_create_sink(server):
    p = server.psql("CREATE SINK bad_hook WITH (connector = 'http', url = 'localhost:8080/x')",
                    check=False)
    assert p.returncode != 0
    assert "invalid value 'localhost:8080/x' for option 'url'" in p.stderr, p.stderr
    p = server.psql("CREATE SINK bad_hook WITH (connector = 'http', url = 'http://127.0.0.1:1/', "
                    "'http.header.Content-Length' = '1')", check=False)
    assert p.returncode != 0
    assert "written by the sink itself" in p.stderr, p.stderr


def test_https_checks_the_certificate_against_http_ca(server, tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=30)
    hook = Hook(tls=(str(cert), str(key)))
    try:
        assert hook.url().startswith("https://")
        # With the server's certificate as the CA the rows arrive.
        opts = f"url = {sql_str(hook.url())}, 'http.ca' = {sql_str(cert)}"
        _, want, _ = start_flow(server, embedded(server), opts, 6)
        assert by_id(hook.wait_rows(len(want))) == want
        # Without it the self-signed certificate is refused and the flow fails.
        opts = f"url = {sql_str(hook.url())}, 'retries' = '0'"
        flow, _, _ = start_flow(server, embedded(server), opts, 3, "CHECKPOINT INTERVAL '1 second'")
        status = wait_failed(server, flow)["status"]
        assert "TLS handshake" in status["reason"], status["reason"]
        assert len(hook.delivered()) == len(want)
    finally:
        hook.close()
