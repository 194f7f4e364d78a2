"""What a user may aim rtsqld at, against hostile servers on 127.0.0.1 written
here: a schema registry that accepts and never answers (a cancel request,
statement_timeout and SIGTERM each end CREATE SOURCE waiting on it, and a
restart does not wait on it), one that announces and streams a gigabyte (the
cap holds on what arrives, memory stays bounded), answer bodies kept out of
errors, and an HTTP endpoint that records what it receives: a user who is not
a superuser cannot aim an HTTP sink or a Kinesis endpoint anywhere without the
operator's --outbound-allow, with it cannot reach what it does not list, and a
Kinesis endpoint such a user chose never receives the server's AWS key id."""

import json
import socket
import threading
import time

import psycopg
import pytest

from conftest import Server, unique

BOUND_S = 60  # generous: the machine is loaded; a hang shows as this bound passing
SECRET = "SECRET-7f3a-METADATA"
SERVER_KEY_ID = "AKIASERVERKEY0000001"


class HostileHttp:
    """A server on 127.0.0.1 that reads each request's head and body and then
    behaves as `mode` says: 'hang' (never answers), 'giant' (announces 1 GiB
    and streams), 'secret' (404 with a body that must stay out of errors),
    'registry' (a schema registry's latest-version answer), 'ok' (200 empty).
    It records every request (head and body) it got."""

    AVRO_SCHEMA = json.dumps({"type": "record", "name": "R",
                              "fields": [{"name": "id", "type": "long"}]})

    def __init__(self, mode):
        self.mode = mode
        self.requests = []
        self.lock = threading.Lock()
        self.stopping = False
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.5)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def close(self):
        self.stopping = True
        self.thread.join(BOUND_S)
        self.sock.close()

    def received(self):
        with self.lock:
            return list(self.requests)

    def wait_for_request(self, n=1):
        deadline = time.monotonic() + BOUND_S
        while time.monotonic() < deadline:
            if len(self.received()) >= n:
                return True
            time.sleep(0.05)
        return False

    def _serve(self):
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _read_request(self, conn):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                break
            body += chunk
        return head.decode("latin-1") + "\r\n\r\n" + body.decode("latin-1")

    def _handle(self, conn):
        conn.settimeout(1.0)
        try:
            while not self.stopping:
                try:
                    request = self._read_request(conn)
                except socket.timeout:
                    continue
                if request is None:
                    return
                with self.lock:
                    self.requests.append(request)
                mode = self.mode
                if mode == "hang":
                    while not self.stopping:
                        try:
                            if not conn.recv(4096):
                                return
                        except socket.timeout:
                            pass
                    return
                if mode == "giant":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: 1073741824\r\n\r\n")
                    block = b"x" * (1 << 20)
                    for _ in range(1024):
                        if self.stopping:
                            return
                        conn.sendall(block)
                    return
                if mode == "secret":
                    body = json.dumps({"error_code": 40401, "message": SECRET}).encode()
                    status = b"404 Not Found"
                elif mode == "registry":
                    body = json.dumps({"subject": "t-value", "version": 1, "id": 1,
                                       "schema": self.AVRO_SCHEMA}).encode()
                    status = b"200 OK"
                else:
                    body = b""
                    status = b"200 OK"
                conn.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\n"
                             b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        except OSError:
            return
        finally:
            conn.close()


@pytest.fixture
def hostile():
    servers = []

    def make(mode):
        s = HostileHttp(mode)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()


def datagen(conn):
    """A source of rows for a flow into a sink under test."""
    name = unique("g")
    conn.execute(f"CREATE SOURCE {name} (k BIGINT) WITH (connector = 'datagen')")
    return name


def registry_source_sql(name, url, timeout_ms=60000):
    return (f"CREATE SOURCE {name} WITH (connector = 'kafka', 'kafka.bootstrap.servers' = "
            f"'embedded', subscribe = 't', format = 'avro', 'schema.registry.url' = '{url}', "
            f"'schema.registry.timeout.ms' = '{timeout_ms}')")


def run_in_thread(conn, sql):
    """Runs `sql` on `conn` in a thread; returns (done event, errors list)."""
    done = threading.Event()
    errors = []

    def run():
        try:
            conn.execute(sql)
        except psycopg.Error as e:
            errors.append(e)
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return done, errors


def test_a_cancel_request_ends_create_source_waiting_on_a_hanging_registry(server, hostile):
    registry = hostile("hang")
    conn = server.connect()
    done, errors = run_in_thread(conn, registry_source_sql(unique("s"), registry.url))
    assert registry.wait_for_request(), "rtsqld never asked the registry"
    deadline = time.monotonic() + BOUND_S
    while not done.is_set() and time.monotonic() < deadline:
        conn.cancel()
        done.wait(0.5)
    assert done.is_set(), "the cancel request did not end CREATE SOURCE"
    assert errors and errors[0].diag.sqlstate == "57014", errors
    assert conn.execute("SELECT 1").fetchone() == (1,)
    conn.close()


def test_statement_timeout_ends_create_source_waiting_on_a_hanging_registry(server, hostile):
    registry = hostile("hang")
    with server.connect() as conn:
        conn.execute("SET statement_timeout = '1s'")
        done, errors = run_in_thread(conn, registry_source_sql(unique("s"), registry.url))
        assert done.wait(BOUND_S), "statement_timeout did not end CREATE SOURCE"
        assert errors and errors[0].diag.sqlstate == "57014", errors
        assert "statement timeout" in errors[0].diag.message_primary
        assert registry.received(), "rtsqld never asked the registry"


def test_sigterm_ends_rtsqld_while_create_source_waits_on_a_hanging_registry(tmp_path, hostile):
    registry = hostile("hang")
    s = Server(tmp_path)
    s.start()
    try:
        conn = s.connect()
        done, _ = run_in_thread(conn, registry_source_sql(unique("s"), registry.url))
        assert registry.wait_for_request(), "rtsqld never asked the registry"
        # Half the registry's timeout: only SIGTERM itself can end the wait.
        code = s.stop(timeout=30)
        assert code == 0, f"rtsqld did not stop on SIGTERM ({code}):\n{s.log_tail()}"
        assert done.wait(BOUND_S)
    finally:
        s.kill()


def test_a_restart_does_not_wait_on_a_registry_and_restores_the_source_later(tmp_path, hostile):
    registry = hostile("registry")
    s = Server(tmp_path)
    s.start()
    name = unique("s")
    try:
        with s.connect() as conn:
            conn.execute(registry_source_sql(name, registry.url))
            assert (name, ) in {(r[0],) for r in conn.execute("SHOW SOURCES").fetchall()}
        assert s.stop(timeout=BOUND_S) == 0
        # The registry hangs now: the server answers all the same (start()
        # waits at most 30 s; each call would wait 60 s).
        registry.mode = "hang"
        s.start()
        with s.connect() as conn:
            assert conn.execute("SELECT 2").fetchone() == (2,)
        assert "restoring source" in s.log_tail(200), s.log_tail()
        # Once the registry answers, the source comes back.
        registry.mode = "registry"
        deadline = time.monotonic() + BOUND_S
        back = False
        while not back and time.monotonic() < deadline:
            with s.connect() as conn:
                back = any(r[0] == name for r in conn.execute("SHOW SOURCES").fetchall())
            time.sleep(0.5)
        assert back, s.log_tail()
        assert s.stop(timeout=BOUND_S) == 0
    finally:
        s.kill()


def test_an_answer_of_a_gigabyte_is_cut_at_the_cap(server, hostile):
    registry = hostile("giant")
    with server.connect() as conn:
        with pytest.raises(psycopg.Error) as e:
            conn.execute(registry_source_sql(unique("s"), registry.url))
    assert e.value.diag.sqlstate == "08006", e.value
    assert "larger than 16777216 bytes" in str(e.value)
    # What rtsqld ever held stays far below the gigabyte.
    status = open(f"/proc/{server.proc.pid}/status").read()
    peak_kb = int(next(l for l in status.splitlines() if l.startswith("VmHWM:")).split()[1])
    assert peak_kb < 600 * 1024, status


def test_answer_bodies_stay_out_of_errors_and_urls_take_no_query(server, hostile):
    registry = hostile("secret")
    with server.connect() as conn:
        with pytest.raises(psycopg.Error) as e:
            conn.execute(registry_source_sql(unique("s"), registry.url))
        assert "answered 404 (" in str(e.value), e.value
        assert SECRET not in str(e.value)
        # A trailing '?' or '#' would turn the calls' paths into a parameter.
        for tail in ("/latest/meta-data?", "/admin#"):
            with pytest.raises(psycopg.Error) as e:
                conn.execute(registry_source_sql(unique("s"), registry.url + tail))
            assert e.value.diag.sqlstate == "22023", e.value
    assert all("meta-data" not in r for r in registry.received())

    # An HTTP sink's failure in SHOW FLOWS: the status and the size.
    endpoint = hostile("secret")
    with server.connect() as conn:
        sink, flow = unique("hs"), unique("f")
        conn.execute(f"CREATE SINK {sink} WITH (connector = 'http', url = '{endpoint.url}/hook', "
                     f"retries = '0')")
        conn.execute(f"CREATE FLOW {flow} INTO {sink} AS SELECT k FROM {datagen(conn)}")
        deadline = time.monotonic() + BOUND_S
        error = ""
        while "answered HTTP 404" not in error and time.monotonic() < deadline:
            rows = [r for r in conn.execute("SHOW FLOWS").fetchall() if r[0] == flow]
            error = " ".join(str(v) for v in rows[0]) if rows else ""
            time.sleep(0.2)
        assert "answered HTTP 404" in error, error
        assert SECRET not in error
        conn.execute(f"DROP FLOW {flow}")


class UsersServer(Server):
    """An rtsqld with a users file (owner, the superuser, then bob), and the
    --outbound-allow entries given."""

    PASSWORDS = {"owner": "owner-pw", "bob": "bob-pw"}

    def __init__(self, tmp, allow=()):
        super().__init__(tmp)
        self.allow = list(allow)
        self.users = self.tmp / "users"
        self.users.write_text("".join(f"{u}:{p}\n" for u, p in self.PASSWORDS.items()))

    def extra_args(self):
        args = ["--users-file", str(self.users)]
        for entry in self.allow:
            args += ["--outbound-allow", entry]
        return args

    def connect(self, connect_timeout=10, user="owner"):
        return psycopg.connect(host=self.host, port=self.port, user=user,
                               password=self.PASSWORDS[user], dbname="rtsql",
                               connect_timeout=connect_timeout, autocommit=True)


def kinesis_source_sql(name, endpoint, keys):
    return (f"CREATE SOURCE {name} (id BIGINT) WITH (connector = 'kinesis', "
            f"'kinesis.stream' = 's', 'kinesis.region' = 'us-east-1', "
            f"'kinesis.endpoint' = '{endpoint}'{keys})")


def test_without_an_allow_list_only_superusers_aim_rtsqld(tmp_path, hostile):
    endpoint = hostile("ok")
    s = UsersServer(tmp_path)
    s.start()
    try:
        with s.connect(user="bob") as conn:
            for sql in [
                f"CREATE SINK {unique('hs')} WITH (connector = 'http', url = '{endpoint.url}/x')",
                registry_source_sql(unique("s"), endpoint.url),
                kinesis_source_sql(
                    unique("k"), endpoint.url,
                    ", 'kinesis.accessKeyId' = 'AKIDBOB', 'kinesis.secretKey' = 'b'"),
            ]:
                with pytest.raises(psycopg.errors.InsufficientPrivilege) as e:
                    conn.execute(sql)
                assert "not a superuser" in str(e.value)
                assert "--outbound-allow" in (e.value.diag.message_hint or "")
        assert endpoint.received() == []
        # The superuser may.
        with s.connect(user="owner") as conn:
            conn.execute(f"CREATE SINK {unique('hs')} WITH (connector = 'http', "
                         f"url = '{endpoint.url}/x')")
        assert s.stop(timeout=BOUND_S) == 0
    finally:
        s.kill()


def test_with_an_allow_list_destinations_must_be_in_it(tmp_path, hostile):
    listed = hostile("ok")
    unlisted = hostile("ok")
    s = UsersServer(tmp_path, allow=[f"127.0.0.1:{listed.port}", "10.0.0.0/8"])
    s.start()
    try:
        with s.connect(user="bob") as conn:
            # Loopback only as listed, port and all.
            with pytest.raises(psycopg.errors.InsufficientPrivilege) as e:
                conn.execute(f"CREATE SINK {unique('hs')} WITH (connector = 'http', "
                             f"url = '{unlisted.url}/x')")
            assert "allow-list" in str(e.value)
            for address in ("169.254.169.254", "[::1]"):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute(f"CREATE SINK {unique('hs')} WITH (connector = 'http', "
                                 f"url = 'http://{address}/latest/meta-data')")
            # A name is judged on what it resolves to, at each connection.
            sink, flow = unique("hs"), unique("f")
            conn.execute(f"CREATE SINK {sink} WITH (connector = 'http', "
                         f"url = 'http://localhost:{unlisted.port}/x', retries = '0')")
            conn.execute(f"CREATE FLOW {flow} INTO {sink} AS SELECT k FROM {datagen(conn)}")
            deadline = time.monotonic() + BOUND_S
            error = ""
            while "allow-list" not in error and time.monotonic() < deadline:
                rows = [r for r in conn.execute("SHOW FLOWS").fetchall() if r[0] == flow]
                error = " ".join(str(v) for v in rows[0]) if rows else ""
                time.sleep(0.2)
            assert "allow-list" in error, error
            conn.execute(f"DROP FLOW {flow}")
            # What is listed is reached.
            sink, flow = unique("hs"), unique("f")
            conn.execute(f"CREATE SINK {sink} WITH (connector = 'http', "
                         f"url = '{listed.url}/x')")
            conn.execute(f"CREATE FLOW {flow} INTO {sink} AS SELECT k FROM {datagen(conn)}")
            assert listed.wait_for_request(), s.log_tail()
            conn.execute(f"DROP FLOW {flow}")
        assert unlisted.received() == []
        assert s.stop(timeout=BOUND_S) == 0
    finally:
        s.kill()


def test_a_kinesis_endpoint_a_user_chose_never_gets_the_servers_key(tmp_path, hostile,
                                                                     monkeypatch):
    endpoint = hostile("ok")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", SERVER_KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "server-secret")
    s = UsersServer(tmp_path, allow=[f"127.0.0.1:{endpoint.port}"])
    s.start()
    try:
        with s.connect(user="bob") as conn:
            with pytest.raises(psycopg.errors.InsufficientPrivilege) as e:
                conn.execute(kinesis_source_sql(unique("k"), endpoint.url, ""))
            assert "AWS credentials" in str(e.value)
            assert "kinesis.accessKeyId" in (e.value.diag.message_hint or "")
            # With keys of its own the source runs, and signs with them.
            source, sink, flow = unique("k"), unique("o"), unique("f")
            conn.execute(kinesis_source_sql(
                source, endpoint.url,
                ", 'kinesis.accessKeyId' = 'AKIDBOB', 'kinesis.secretKey' = 'bob-secret'"))
            conn.execute(f"CREATE SINK {sink} WITH (connector = 'kafka', "
                         f"'kafka.bootstrap.servers' = 'embedded', topic = '{unique('t')}')")
            # The endpoint answers nothing Kinesis would: CREATE FLOW, which
            # lists the shards first, fails once it has asked.
            with pytest.raises(psycopg.Error):
                conn.execute(f"CREATE FLOW {flow} INTO {sink} AS SELECT id FROM {source}")
            assert endpoint.wait_for_request(), s.log_tail()
        received = endpoint.received()
        assert any("AKIDBOB" in r for r in received), received
        assert not any(SERVER_KEY_ID in r for r in received), received
        assert s.stop(timeout=BOUND_S) == 0
    finally:
        s.kill()
