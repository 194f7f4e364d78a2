"""Owners on a server shared by several users: a function, processor or flow
belongs to the user who created it. Another user (not a superuser) may not
CREATE OR REPLACE or DROP it, nor stop, start or drop the flow (42501, the
hint naming the owner), and sees no function body in SHOW USER FUNCTIONS,
DESCRIBE FUNCTION or the HTTP endpoint's /sql; the owner and the superusers
may. The owners survive a restart."""

import base64
import json
import urllib.error
import urllib.request

import psycopg
import pytest

from conftest import free_port, unique
from test_security import SharedServer


class OwnersServer(SharedServer):
    """SharedServer (owner, the superuser, then bob and carol) with the HTTP
    endpoint."""

    def __init__(self, tmp):
        super().__init__(tmp)
        self.http_port = free_port()

    def extra_args(self):
        return [*super().extra_args(), "--http-port", str(self.http_port)]

    def sql_over_http(self, user, sql):
        """The rows /sql answers USER for SQL."""
        req = urllib.request.Request(f"http://{self.host}:{self.http_port}/sql",
                                     data=json.dumps({"sql": sql}).encode())
        req.add_header("Content-Type", "application/json")
        token = base64.b64encode(f"{user}:{self.PASSWORDS[user]}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return json.loads(r.read().decode())["rows"]
        except urllib.error.HTTPError as e:
            raise AssertionError(f"/sql answered {e.code}: {e.read().decode()}") from None


@pytest.fixture
def owners(tmp_path):
    s = OwnersServer(tmp_path)
    s.start()
    yield s
    s.kill()


def refused(server, user, sql, owner):
    """SQL run as USER is refused with 42501, naming OWNER."""
    with server.connect(user=user) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as e:
            conn.execute(sql)
    assert f'belongs to user "{owner}"' in str(e.value), str(e.value)
    assert f'"{owner}"' in (e.value.diag.message_hint or ""), e.value.diag.message_hint
    assert e.value.diag.statement_position is not None


def bodies(server, user):
    """{function: body} as SHOW USER FUNCTIONS shows them to USER."""
    with server.connect(user=user) as conn:
        return {r[0]: r[4] for r in conn.execute("SHOW USER FUNCTIONS").fetchall()}


def described(server, user, function):
    """{row: value} of DESCRIBE FUNCTION as USER sees it."""
    with server.connect(user=user) as conn:
        return {r[0]: r[1] for r in conn.execute(f"DESCRIBE FUNCTION {function}").fetchall()}


def test_only_owners_and_superusers_change_or_read_what_they_own(owners):
    py, mine, flow = unique("py"), unique("bob_f"), unique("bob_flow")
    sink_topic = unique("owned_out")
    with owners.connect(user="owner") as conn:
        conn.execute(f"CREATE FUNCTION {py}(a BIGINT) RETURNS BIGINT LANGUAGE PYTHON AS "
                     "$$return a + 41$$")
    with owners.connect(user="bob") as conn:
        conn.execute(f"CREATE FUNCTION {mine}(a BIGINT) RETURNS BIGINT AS a * 2")
        conn.execute("CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen', "
                     "rowsPerSecond = '5')")
        conn.execute("CREATE SINK out WITH (connector = 'kafka', "
                     f"'kafka.bootstrap.servers' = 'embedded', topic = '{sink_topic}')")
        conn.execute(f"CREATE FLOW {flow} INTO out AS SELECT a FROM gen")

    def others_are_refused():
        refused(owners, "carol", f"CREATE OR REPLACE FUNCTION {mine}(a BIGINT) RETURNS BIGINT "
                                 "AS a * 3", "bob")
        refused(owners, "carol", f"DROP FUNCTION {mine}", "bob")
        # A superuser's Python function is no one else's to replace with SQL.
        refused(owners, "bob", f"CREATE OR REPLACE FUNCTION {py}(a BIGINT) RETURNS BIGINT AS a",
                "owner")
        refused(owners, "bob", f"DROP FUNCTION IF EXISTS {py}", "owner")
        refused(owners, "carol", f"STOP FLOW {flow}", "bob")
        refused(owners, "carol", f"DROP FLOW {flow}", "bob")
        # Bodies: only the owner's and, for a superuser, every one.
        assert bodies(owners, "carol")[mine] is None
        assert bodies(owners, "carol")[py] is None
        assert bodies(owners, "bob") == {mine: "a * 2", py: None}
        assert bodies(owners, "owner") == {mine: "a * 2", py: "return a + 41"}
        assert described(owners, "bob", py)["body"] is None
        assert described(owners, "bob", py)["owner"] == "owner"
        assert described(owners, "owner", mine)["body"] == "a * 2"
        over_http = {r[0]: r[4] for r in owners.sql_over_http("carol", "SHOW USER FUNCTIONS")}
        assert over_http == {mine: None, py: None}
        # Calling another user's function stays open.
        with owners.connect(user="carol") as conn:
            assert conn.execute(f"SELECT {py}(1), {mine}(4)").fetchone() == (42, 8)

    others_are_refused()
    code = owners.stop()
    assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{owners.log_tail()}"
    owners.start()
    # The catalog brought the owners back.
    others_are_refused()
    with owners.connect(user="bob") as conn:
        conn.execute(f"STOP FLOW {flow}")
    refused(owners, "carol", f"START FLOW {flow}", "bob")
    with owners.connect(user="owner") as conn:
        conn.execute(f"START FLOW {flow}")  # a superuser may
    with owners.connect(user="bob") as conn:
        conn.execute(f"CREATE OR REPLACE FUNCTION {mine}(a BIGINT) RETURNS BIGINT AS a * 5")
        conn.execute(f"DROP FLOW {flow}")
        conn.execute(f"DROP FUNCTION {mine}")
    with owners.connect(user="owner") as conn:
        conn.execute(f"DROP FUNCTION {py}")
        assert conn.execute("SHOW USER FUNCTIONS").fetchall() == []
