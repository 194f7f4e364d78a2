"""TLS and passwords end to end: rtsqld with --tls-cert/--tls-key/--users-file
and --tls-required, reached by psql (PGSSLMODE=require, PGPASSWORD) and psycopg
(sslmode=require) which create a source, a sink and a flow, feed it and read
SHOW PROGRESS; a wrong password, an unknown user and a plain-text client are
refused; the HTTP endpoint serves HTTPS only (--http-tls) with Basic
credentials; `rtsqld --hash-password` writes users-file lines; a non-loopback
--host without a users file is refused; CREATE / ALTER / DROP USER change who
may log in, at once, and rewrite the users file; on a server shared by several
users only superusers manage users, files are confined to --files-dir, and one
user's live queries cannot take every task slot."""

import base64
import http.client
import json
import os
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.request

import psycopg
import pytest

from conftest import PSQL, RTSQLD, Kafka, Server, free_port, sql_str, unique

PASSWORD = "s3cret pass"  # a space on purpose: it is part of the password
OTHER_PASSWORD = "bobs-password"


def hash_password(password, user=None):
    args = [str(RTSQLD), "--hash-password"] + ([user] if user else [])
    p = subprocess.run(args, input=password + "\n", capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


class SecureServer(Server):
    """An rtsqld that requires TLS and passwords; its clients use both."""

    def __init__(self, tmp, user="rtsql", password=PASSWORD):
        super().__init__(tmp)
        self.user = user
        self.password = password
        self.cert = self.tmp / "server.crt"
        self.key = self.tmp / "server.key"
        self.users = self.tmp / "users"
        self.http_port = free_port()
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-nodes", "-days", "1", "-subj", "/CN=localhost",
             "-keyout", str(self.key), "-out", str(self.cert)],
            check=True, capture_output=True, timeout=60)
        # One verifier made by rtsqld --hash-password, one plain password.
        self.users.write_text("# rtsql users\n"
                              + hash_password(password, user) + "\n"
                              + f"bob:{OTHER_PASSWORD}\n")

    def extra_args(self):
        return ["--tls-cert", str(self.cert), "--tls-key", str(self.key), "--tls-required",
                "--users-file", str(self.users), "--http-port", str(self.http_port), "--http-tls"]

    def connect(self, connect_timeout=10, user=None, password=None, sslmode="require"):
        # Over TLS the client insists on channel binding (SCRAM-SHA-256-PLUS),
        # so these tests prove the server offers it and gets it right.
        binding = "require" if sslmode == "require" else "prefer"
        return psycopg.connect(host=self.host, port=self.port, user=user or self.user,
                               password=self.password if password is None else password,
                               dbname="rtsql", sslmode=sslmode, channel_binding=binding,
                               connect_timeout=connect_timeout, autocommit=True)

    def psql(self, sql, check=True, timeout=60, password=None, sslmode="require", user=None):
        env = {**os.environ, "PGCONNECT_TIMEOUT": "10", "PGSSLMODE": sslmode,
               "PGCHANNELBINDING": "require" if sslmode == "require" else "prefer",
               "PGPASSWORD": self.password if password is None else password}
        p = subprocess.run(
            [PSQL, "-h", self.host, "-p", str(self.port), "-U", user or self.user, "-d", "rtsql",
             "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
            capture_output=True, text=True, timeout=timeout, env=env)
        if check and p.returncode != 0:
            raise AssertionError(f"psql failed ({p.returncode}) on {sql!r}:\n{p.stderr}")
        return p

    def psql_as(self, user, password, sql, check=True):
        return self.psql(sql, check=check, password=password, user=user)


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    s = SecureServer(tmp_path_factory.mktemp("rtsqld_secure"))
    s.start()
    yield s
    code = s.stop()
    assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{s.log_tail()}"


def deploy_sql(kafka, source, sink, flow, in_topic, out_topic):
    k = kafka.options()
    return [
        f"CREATE SOURCE {source} (n BIGINT, tag STRING) WITH ({k}, subscribe = '{in_topic}', "
        f"startingOffsets = 'earliest', format = 'json')",
        f"CREATE SINK {sink} WITH ({k}, topic = '{out_topic}', format = 'json')",
        f"CREATE FLOW {flow} INTO {sink} TRIGGER REALTIME AS "
        f"SELECT n * 10 AS m, tag FROM {source} WHERE n % 2 = 0",
    ]


def check_flow(secure, kafka, flow, in_topic, out_topic, read_progress):
    kafka.produce(in_topic, [{"n": i, "tag": "t"} for i in range(20)])
    got = kafka.consume_json(out_topic, n=10, timeout=30)
    assert sorted(r["m"] for r in got) == [i * 10 for i in range(0, 20, 2)]
    prog = None
    for _ in range(100):
        prog = read_progress()
        if prog.get("numInputRows") == 20:
            break
        time.sleep(0.3)
    assert prog["numInputRows"] == 20, prog


def http_get(server, path, user=None, password=None):
    """(status, WWW-Authenticate, body) of GET PATH on the HTTPS endpoint
    (--http-tls), the server's certificate checked against itself."""
    req = urllib.request.Request(f"https://{server.host}:{server.http_port}{path}")
    if user is not None:
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
    tls = ssl.create_default_context(cafile=str(server.cert))
    tls.check_hostname = False  # the certificate names localhost; the URL an address
    try:
        with urllib.request.urlopen(req, timeout=10, context=tls) as r:
            return r.status, r.headers.get("WWW-Authenticate"), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("WWW-Authenticate"), e.read().decode()


def test_http_endpoint_needs_a_users_password(secure):
    """With a users file the HTTP endpoint, like the PostgreSQL side, serves
    only users of that file (Basic credentials); /healthz stays open."""
    assert http_get(secure, "/healthz")[0] == 200
    for path in ("/metrics", "/flows"):
        status, challenge, body = http_get(secure, path)
        assert status == 401, (path, status, body)
        assert challenge and challenge.startswith("Basic realm="), challenge
        assert "rtsql_slots_total" not in body
    status, _, body = http_get(secure, "/metrics", secure.user, PASSWORD)
    assert status == 200 and "rtsql_slots_total" in body
    # bob's line holds a plain password, the first user's a verifier.
    assert http_get(secure, "/flows", "bob", OTHER_PASSWORD)[0] == 200
    assert http_get(secure, "/metrics", secure.user, OTHER_PASSWORD)[0] == 401
    assert http_get(secure, "/metrics", "nobody", PASSWORD)[0] == 401
    # --http-tls: HTTPS only. Plain HTTP gets no answer (its request is no
    # TLS handshake), so no password is ever read in the clear.
    plain = urllib.request.Request(f"http://{secure.host}:{secure.http_port}/healthz")
    with pytest.raises((urllib.error.URLError, ConnectionError, http.client.HTTPException)):
        urllib.request.urlopen(plain, timeout=10)


def test_psql_over_tls_with_a_password(secure):
    kafka = Kafka("embedded", "embedded", secure.embedded_bootstrap)
    source, sink, flow = unique("sec_src"), unique("sec_sink"), unique("sec_flow")
    in_topic, out_topic = unique("sec_in"), unique("sec_out")
    kafka.create_topic(in_topic)
    for stmt in deploy_sql(kafka, source, sink, flow, in_topic, out_topic):
        secure.psql(stmt)
    assert flow in secure.psql("SHOW FLOWS").stdout

    def progress():
        out = secure.psql(f"SHOW PROGRESS {flow}").stdout.strip()
        return json.loads(out)

    check_flow(secure, kafka, flow, in_topic, out_topic, progress)
    secure.psql(f"DROP FLOW {flow}; DROP SINK {sink}; DROP SOURCE {source}")


def test_psycopg_over_tls_with_a_password(secure):
    kafka = Kafka("embedded", "embedded", secure.embedded_bootstrap)
    source, sink, flow = unique("sec_src"), unique("sec_sink"), unique("sec_flow")
    in_topic, out_topic = unique("sec_in"), unique("sec_out")
    kafka.create_topic(in_topic)
    with secure.connect() as conn:
        assert conn.pgconn.ssl_in_use
        for stmt in deploy_sql(kafka, source, sink, flow, in_topic, out_topic):
            conn.execute(stmt)

        def progress():
            value = conn.execute(f"SHOW PROGRESS {flow}").fetchone()[0]
            return value if isinstance(value, dict) else json.loads(value)

        check_flow(secure, kafka, flow, in_topic, out_topic, progress)
        conn.execute(f"DROP FLOW {flow}")
        conn.execute(f"DROP SINK {sink}")
        conn.execute(f"DROP SOURCE {source}")


def test_without_channel_binding(secure):
    with psycopg.connect(host=secure.host, port=secure.port, user=secure.user,
                         password=secure.password, dbname="rtsql", sslmode="require",
                         channel_binding="disable", connect_timeout=10,
                         autocommit=True) as conn:
        assert conn.pgconn.ssl_in_use
        conn.execute("SHOW FLOWS").fetchall()


def test_plain_password_line_works(secure):
    with secure.connect(user="bob", password=OTHER_PASSWORD) as conn:
        assert conn.pgconn.ssl_in_use
        conn.execute("SHOW FLOWS").fetchall()


def test_wrong_password_and_unknown_user_are_refused(secure):
    for user, password in [(secure.user, "wrong"), ("bob", PASSWORD), ("nobody", PASSWORD)]:
        with pytest.raises(psycopg.OperationalError) as e:
            secure.connect(user=user, password=password)
        assert f'password authentication failed for user "{user}"' in str(e.value)
    p = secure.psql("SHOW FLOWS", check=False, password="wrong")
    assert p.returncode != 0
    assert f'password authentication failed for user "{secure.user}"' in p.stderr


def test_plain_text_is_refused_when_tls_is_required(secure):
    with pytest.raises(psycopg.OperationalError) as e:
        secure.connect(sslmode="disable")
    assert "TLS is required" in str(e.value)
    p = secure.psql("SHOW FLOWS", check=False, sslmode="disable")
    assert p.returncode != 0
    assert "TLS is required" in p.stderr


def test_hash_password_prints_a_users_file_line():
    line = hash_password("pencil", "alice")
    name, verifier = line.split(":", 1)
    assert name == "alice"
    assert verifier.startswith("SCRAM-SHA-256$4096:")
    # A fresh salt each time.
    assert hash_password("pencil") != hash_password("pencil")
    p = subprocess.run([str(RTSQLD), "--hash-password"], input="", capture_output=True,
                       text=True, timeout=30)
    assert p.returncode != 0


def test_non_loopback_host_needs_a_users_file(tmp_path):
    p = subprocess.run([str(RTSQLD), "--host", "0.0.0.0", "--port", "0",
                        "--data-dir", str(tmp_path / "data")],
                       capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert p.returncode == 2
    assert "--users-file" in p.stderr


def test_bad_users_file_stops_the_server(tmp_path):
    users = tmp_path / "users"
    users.write_text("alice\n")
    p = subprocess.run([str(RTSQLD), "--port", "0", "--data-dir", str(tmp_path / "data"),
                        "--users-file", str(users)],
                       capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert p.returncode == 1
    assert "line 1" in p.stderr


# -- CREATE / ALTER / DROP USER ---------------------------------------------

def test_create_alter_drop_user(secure):
    """A user created with SQL logs in over TLS with SCRAM at once (psycopg and
    psql); after ALTER USER only the new password works; after DROP USER
    neither does. The users file follows every change and never holds a
    password; neither does the server's log."""
    name = unique("u")
    first, second = "first p4ss'word", "second-p4ss"
    with secure.connect() as admin:
        admin.execute(f"CREATE USER {name} WITH PASSWORD {sql_str(first)}")
        names = [r[0] for r in admin.execute("SHOW USERS").fetchall()]
        assert name in names and secure.user in names
        assert names == sorted(names)

        with secure.connect(user=name, password=first) as conn:
            assert conn.pgconn.ssl_in_use
            assert conn.execute("SELECT 41 + 1").fetchone()[0] == 42
        p = secure.psql_as(name, first, "SHOW USERS")
        assert f"{name}|f" in p.stdout.split()

        text = secure.users.read_text()
        assert f"\n{name}:SCRAM-SHA-256$4096:" in text
        assert first not in text
        # bob's plain password line became a verifier on the first rewrite.
        assert OTHER_PASSWORD not in text and "\nbob:SCRAM-SHA-256$" in text
        assert text.startswith("# rtsql users\n")

        # A user may change its own password.
        with secure.connect(user=name, password=first) as conn:
            conn.execute(f"ALTER USER {name} WITH PASSWORD {sql_str(second)}")
        with pytest.raises(psycopg.OperationalError) as e:
            secure.connect(user=name, password=first)
        assert f'password authentication failed for user "{name}"' in str(e.value)
        assert secure.psql_as(name, first, "SHOW USERS", check=False).returncode != 0
        with secure.connect(user=name, password=second) as conn:
            conn.execute("SHOW FLOWS").fetchall()

        admin.execute(f"DROP USER {name}")
        with pytest.raises(psycopg.OperationalError) as e:
            secure.connect(user=name, password=second)
        assert f'password authentication failed for user "{name}"' in str(e.value)
        assert name not in secure.users.read_text()
        assert name not in [r[0] for r in admin.execute("SHOW USERS").fetchall()]
        admin.execute(f"DROP USER IF EXISTS {name}")

    log = secure.log_path.read_bytes().decode(errors="replace")
    assert first not in log and second not in log


def test_user_statement_errors_hide_the_password(secure):
    with secure.connect() as conn:
        with pytest.raises(psycopg.errors.DuplicateObject) as e:
            conn.execute("CREATE USER bob WITH PASSWORD 'hunter2-secret'")
        assert "hunter2" not in str(e.value)
        with pytest.raises(psycopg.errors.SyntaxError) as e:
            conn.execute("CREATE USER carl WITH PASSWORD hunter2-secret")
        assert "hunter2" not in str(e.value)
        with pytest.raises(psycopg.errors.UndefinedObject):
            conn.execute("ALTER USER nobody_here PASSWORD 'hunter2-secret'")
        with pytest.raises(psycopg.errors.ObjectInUse):
            conn.execute(f"DROP USER {secure.user}")
    # psql prints the statement's line beside an error with a position; these
    # errors have none, so the password does not show up on the terminal.
    p = secure.psql("CREATE USER bob PASSWORD 'hunter2-secret'", check=False)
    assert p.returncode != 0 and "already exists" in p.stderr
    assert "hunter2" not in p.stderr


def test_user_statements_need_a_users_file(server):
    with server.connect() as conn:
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as e:
            conn.execute("CREATE USER someone WITH PASSWORD 'hunter2-secret'")
        assert "--users-file" in (e.value.diag.message_hint or "")
        assert "hunter2" not in str(e.value)
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):
            conn.execute("SHOW USERS")


# -- Privileges on a shared server -------------------------------------------

class SharedServer(Server):
    """An rtsqld with a users file (owner first, then bob and carol), files
    confined to one directory, and one live-query slot per user."""

    PASSWORDS = {"owner": "owner-pw", "bob": "bob-pw", "carol": "carol-pw"}

    def __init__(self, tmp):
        super().__init__(tmp)
        self.users = self.tmp / "users"
        self.users.write_text("".join(f"{u}:{p}\n" for u, p in self.PASSWORDS.items()))
        self.files = self.tmp / "files"
        (self.files / "sub").mkdir(parents=True)
        (self.files / "codes.csv").write_text("A\nB\nC\n")
        (self.files / "env.csv").symlink_to("/proc/self/environ")

    def extra_args(self):
        return ["--users-file", str(self.users), "--files-dir", str(self.files),
                "--max-live-query-slots-per-user", "1", "--slots", "8"]

    def connect(self, connect_timeout=10, user="owner", password=None):
        return psycopg.connect(host=self.host, port=self.port, user=user,
                               password=password or self.PASSWORDS[user], dbname="rtsql",
                               connect_timeout=connect_timeout, autocommit=True)


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    s = SharedServer(tmp_path_factory.mktemp("rtsqld_shared"))
    s.start()
    yield s
    code = s.stop()
    assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{s.log_tail()}"


def table_sql(name, path):
    return f"CREATE TABLE {name} (a STRING) WITH (connector = 'file', path = {sql_str(path)})"


def test_only_superusers_create_python_functions(shared):
    """Python code runs with rtsqld's rights: bob may create SQL functions but
    not Python ones; the owner may create both."""
    body = "$$ return __import__('os').getpid() $$"
    with shared.connect(user="bob") as conn:
        name = unique("py")
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as e:
            conn.execute(f"CREATE FUNCTION {name}(a BIGINT) RETURNS BIGINT LANGUAGE PYTHON AS {body}")
        assert "not a superuser" in str(e.value) and "superuser" in (e.value.diag.message_hint or "")
        assert e.value.diag.statement_position is not None
        conn.execute(f"CREATE FUNCTION {name}_sql(a BIGINT) RETURNS BIGINT AS a + 1")
        conn.execute(f"DROP FUNCTION {name}_sql")
        assert not any(r[0] == name for r in conn.execute("SHOW USER FUNCTIONS").fetchall())
    with shared.connect(user="owner") as conn:
        name = unique("py")
        conn.execute(f"CREATE FUNCTION {name}(a BIGINT) RETURNS BIGINT LANGUAGE PYTHON AS {body}")
        conn.execute(f"DROP FUNCTION {name}")


def test_server_files_only_inside_files_dir(shared):
    """/proc/self/environ cannot be loaded by anyone: not by name, not through
    '..' out of the allowed directory, not through a link inside it; a file
    inside loads."""
    escapes = ["/proc/self/environ",
               str(shared.files / "sub" / "..") + "/.." * 12 + "/proc/self/environ",
               str(shared.files / "env.csv")]
    for user in ("bob", "owner"):
        with shared.connect(user=user) as conn:
            for path in escapes:
                name = unique("t")
                with pytest.raises(psycopg.errors.InsufficientPrivilege) as e:
                    conn.execute(table_sql(name, path))
                assert "outside the directories rtsqld allows" in str(e.value)
                assert str(shared.files) in (e.value.diag.message_hint or "")
                assert "PATH=" not in str(e.value)
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(f"CREATE SINK {unique('s')} WITH (connector = 'file', "
                             f"path = {sql_str(shared.tmp / 'out.jsonl')})")
    with shared.connect(user="bob") as conn:
        notices = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary))
        name = unique("codes")
        conn.execute(table_sql(name, shared.files / "sub" / ".." / "codes.csv"))
        assert any("loaded 3 rows" in n for n in notices), notices
        conn.execute(f"DROP TABLE {name}")


def flow_error(server, flow, timeout=60):
    """The error of FLOW: CREATE FLOW's own, or the one SHOW FLOWS gives once
    the flow failed; None when it keeps running for TIMEOUT seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for row in server.query("SHOW FLOWS"):
            if row[0] == flow and row[4]:
                return row[4]
        time.sleep(0.3)
    return None


@pytest.mark.parametrize("swapped", ["file", "directory"])
def test_a_link_swapped_in_after_create_sink_is_not_followed(shared, swapped):
    """bob's file sink was inside --files-dir when he created it; then the file,
    or the directory it is in, becomes a symbolic link to a file outside. The
    flow into the sink fails with an error saying why, and nothing is written
    outside."""
    outside = shared.tmp / unique("outside")
    outside.mkdir()
    victim = outside / "victim.jsonl"
    victim.write_text("untouched\n")
    inner = shared.files / unique("out")
    inner.mkdir()
    path = inner / "victim.jsonl"
    src, sink, flow = unique("gen"), unique("s"), unique("f")
    with shared.connect(user="bob") as conn:
        conn.execute(f"CREATE SOURCE {src} (a BIGINT) WITH (connector = 'datagen', "
                     f"rowsPerSecond = '100')")
        conn.execute(f"CREATE SINK {sink} WITH (connector = 'file', path = {sql_str(path)})")
        if swapped == "file":
            path.symlink_to(victim)
        else:
            inner.rmdir()
            inner.symlink_to(outside, target_is_directory=True)
        try:
            conn.execute(f"CREATE FLOW {flow} INTO {sink} AS SELECT a FROM {src}")
            error = flow_error(shared, flow)
        except psycopg.Error as e:
            error = str(e)
        assert error is not None, "the flow ran through the link"
        assert f'could not open "{path}"' in error, error
        assert "outside the directories rtsqld allows" in error, error
        assert victim.read_text() == "untouched\n"
        conn.execute(f"DROP FLOW IF EXISTS {flow}")
        conn.execute(f"DROP SINK {sink}")
        conn.execute(f"DROP SOURCE {src}")


def test_only_superusers_change_other_passwords(shared):
    with shared.connect(user="bob") as bob:
        rows = bob.execute("SHOW USERS").fetchall()
        assert rows == [("bob", False), ("carol", False), ("owner", True)]
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as e:
            bob.execute("ALTER USER carol PASSWORD 'taken-over'")
        assert 'user "bob" is not a superuser' in str(e.value)
        assert "taken-over" not in str(e.value)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            bob.execute("CREATE USER mallory PASSWORD 'm'")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            bob.execute("DROP USER carol")
        bob.execute("ALTER USER bob PASSWORD 'bob-pw-2'")
    with shared.connect(user="carol") as conn:
        assert conn.execute("SELECT 1").fetchone()[0] == 1
    with shared.connect(user="bob", password="bob-pw-2") as conn:
        assert conn.execute("SELECT 1").fetchone()[0] == 1
    with shared.connect(user="owner") as owner:
        owner.execute("ALTER USER bob PASSWORD 'bob-pw'")
    with shared.connect(user="bob") as conn:
        assert conn.execute("SELECT 1").fetchone()[0] == 1


def slots_used(server):
    with server.connect() as conn:
        return int(conn.execute("SHOW slots").fetchone()[0].split()[0])


def test_live_query_slots_are_bounded_per_user(shared):
    """bob's live query holds his one slot: his second is refused with 53400
    while carol still runs hers; the slot comes back when his query ends."""
    src = unique("gen")
    with shared.connect() as owner:
        owner.execute(f"CREATE SOURCE {src} (a BIGINT) WITH (connector = 'datagen', "
                      f"rowsPerSecond = '100')")
    before = slots_used(shared)
    conn = shared.connect(user="bob")
    failure = []

    def run():
        try:
            conn.execute(f"SELECT a FROM {src}").fetchall()  # no LIMIT: until cancelled
        except psycopg.Error as e:
            failure.append(e)

    t = threading.Thread(target=run)
    t.start()
    try:
        deadline = time.monotonic() + 30
        while slots_used(shared) == before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert slots_used(shared) > before, "bob's live query did not start"

        with shared.connect(user="bob") as bob:
            with pytest.raises(psycopg.errors.ConfigurationLimitExceeded) as e:
                bob.execute(f"SELECT a FROM {src} LIMIT 1")
            assert 'user "bob"' in str(e.value)
            assert "--max-live-query-slots-per-user" in (e.value.diag.message_hint or "")
        with shared.connect(user="carol") as carol:
            assert len(carol.execute(f"SELECT a FROM {src} LIMIT 1").fetchall()) == 1
    finally:
        conn.cancel()
        t.join(timeout=30)
        conn.close()
    assert not t.is_alive(), "cancel did not end bob's live query"
    with shared.connect(user="bob") as bob:
        assert len(bob.execute(f"SELECT a FROM {src} LIMIT 1").fetchall()) == 1
        bob.execute(f"DROP SOURCE {src}")
