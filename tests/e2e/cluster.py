"""Helpers of the cluster tests: nodes of one cluster on one broker, and
bounded waits for what each node shows."""

import os
import re
import signal
import time

import psycopg
import pytest

from conftest import Server, unique

WAIT_S = 60


class Node(Server):
    """An rtsqld of cluster CLUSTER on BROKER, named NAME."""

    # The shortest silence after which the others take a node's flows that
    # Apache Kafka's default group.min.session.timeout.ms allows.
    node_timeout_s = 6

    def __init__(self, tmp, cluster, broker, name):
        super().__init__(tmp)
        self.cluster = cluster
        self.bootstrap = broker.bootstrap
        self.name = name
        self.log_path = self.tmp / f"rtsqld.{name}.log"

    def extra_args(self):
        return ["--cluster", self.cluster, "--kafka", self.bootstrap, "--node-name", self.name,
                "--node-timeout", str(self.node_timeout_s)]


@pytest.fixture
def start_node(tmp_path):
    """start_node(CLUSTER, BROKER, NAME) starts a node in the test's directory
    (NAME's data directory again when it was started before); every node it
    started is killed when the test ends, whether it passed or not."""
    started = []

    def start(cluster, broker, name):
        home = tmp_path / name
        home.mkdir(exist_ok=True)
        node = Node(home, cluster, broker, name)
        started.append(node)
        return node.start()

    yield start
    for node in started:
        node.kill()


class SlowNode(Node):
    """A node whose flows stay put for a minute after it falls silent, so that
    a read of a view held by a node that was just killed is sent to it."""

    node_timeout_s = 60


@pytest.fixture
def start_kind(tmp_path):
    """start_kind(CLUSTER, BROKER, NAME, kind=Node, **args) as start_node, for
    nodes of another kind (SlowNode, or a test's own); a node stopped with
    SIGSTOP is let go on before it is killed."""
    started = []

    def start(cluster, broker, name, kind=Node, **args):
        home = tmp_path / name
        home.mkdir(exist_ok=True)
        node = kind(home, cluster, broker, name, **args)
        started.append(node)
        return node.start()

    yield start
    for node in started:
        if node.proc is not None and node.proc.poll() is None:
            try:
                os.kill(node.proc.pid, signal.SIGCONT)
            except OSError:
                pass
        node.kill()


def wait_for(what, check, timeout=WAIT_S):
    """Calls CHECK until it returns a true value (which it returns), at most TIMEOUT s."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except psycopg.Error as e:
            last = e
        time.sleep(0.2)
    raise AssertionError(f"{what} within {timeout} s; last: {last!r}")


def flows(node):
    return {r[0]: (r[2], r[4] or "") for r in node.query("SHOW FLOWS")}


def sources(node):
    return sorted((r[0], r[3]) for r in node.query("SHOW SOURCES"))


def settle_s(nodes):
    """How long the slots of NODES may take to settle, beyond the usual wait:
    a rebalance of the nodes' group can wait up to their node timeout for a
    member (the embedded broker's group coordinator restarts a rebalance
    when a member's SyncGroup comes after the leader's, and then waits the
    session timeout less a second for every member to join again)."""
    return max((getattr(n, "node_timeout_s", 0) for n in nodes), default=0)


def runner(flow, *nodes, timeout=WAIT_S):
    """The one node of NODES that runs FLOW (waits until exactly one does, and
    every other one shows it as remote, running on that node), within
    TIMEOUT plus the time the nodes' slots may take to settle."""
    timeout += settle_s(nodes)
    seen = {}

    def one():
        states = {n.name: flows(n).get(flow, ("", "")) for n in nodes}
        seen.update(states)
        running = [n for n in nodes if states[n.name][0] == "running"]
        if len(running) != 1:
            return None
        name = running[0].name
        others = [st for node, st in states.items() if node != name]
        if all(st[0] == "remote" and f"node {name}" in st[1] for st in others):
            return running[0]
        return None
    try:
        return wait_for(f"one node runs {flow}", one, timeout=timeout)
    except AssertionError as e:
        logs = "\n".join(f"--- {n.name}\n{n.log_tail(30)}" for n in nodes)
        raise AssertionError(f"{e}\nSHOW FLOWS on each node: {seen}\n{logs}") from None


def placement(flow, nodes):
    """Where FLOW runs over NODES now, when that is settled: {node name: None}
    for a flow that runs whole on one node (every other one shows it remote
    there); for a flow spread over the nodes, {node name: the partitions it
    reads} when every partition is read on exactly one node (as SHOW FLOWS
    says: `reads partitions 1, 4 of 6 here`) and every other node shows it
    remote. None otherwise (a rebalance under way)."""
    states = {n.name: flows(n).get(flow, ("", "")) for n in nodes}
    running = {name: reason for name, (state, reason) in states.items() if state == "running"}
    idle = [reason for name, (state, reason) in states.items() if state != "running"]
    if not running or any(states[name][0] not in ("running", "remote") for name in states):
        return None
    shares, total = {}, None
    for name, reason in running.items():
        m = re.match(r"reads partitions ([0-9, ]+) of (\d+) here", reason)
        if not m:
            whole = len(running) == 1 and all(f"node {name}" in r for r in idle)
            return {name: None} if whole else None
        if total not in (None, int(m.group(2))):
            return None
        total = int(m.group(2))
        shares[name] = {int(p) for p in m.group(1).split(",")}
    if sorted(p for ps in shares.values() for p in ps) != list(range(total)):
        return None
    return shares


def readers(flow, *nodes, timeout=WAIT_S):
    """placement(), waited for: the nodes of NODES that run FLOW, each with the
    partitions it reads (None: the whole flow)."""
    return wait_for(f"every partition of {flow} read on one node", lambda: placement(flow, nodes),
                    timeout=timeout)


def running_anywhere(flow, *nodes):
    return any(flows(n).get(flow, ("", ""))[0] == "running" for n in nodes)


def stop_all(*nodes):
    for n in nodes:
        code = n.stop()
        assert code == 0, f"node {n.name} exit code on SIGTERM: {code}\n{n.log_tail()}"


def run_again_on_40001(node, sql, attempts=50):
    """Runs SQL on NODE, again while it fails with 40001 (another node's change
    not applied there yet), at most ATTEMPTS times."""
    for _ in range(attempts):
        try:
            return node.query(sql)
        except psycopg.Error as e:
            if e.sqlstate != "40001":
                raise
            time.sleep(0.2)
    raise AssertionError(f"{sql} on {node.name}: 40001 {attempts} times")


def two_nodes_reading_a_topic(start_node, broker, prefix, sink):
    """Topics <uid>_in and <uid>_out on BROKER, nodes a and b of cluster <uid>,
    and on a the source ev (k STRING, n BIGINT) over <uid>_in and the sink
    SINK over <uid>_out. Returns (uid, a, b)."""
    uid = unique(prefix)
    for t in (f"{uid}_in", f"{uid}_out"):
        broker.create_topic(t)
    a = start_node(uid, broker, "a")
    b = start_node(uid, broker, "b")
    opts = broker.options()
    a.run_script(f"""
        CREATE SOURCE ev (k STRING, n BIGINT)
            WITH ({opts}, subscribe = '{uid}_in', startingOffsets = 'earliest', format = 'json');
        CREATE SINK {sink} WITH ({opts}, topic = '{uid}_out', format = 'json');
    """)
    return uid, a, b
