"""Fixtures and helpers of the end-to-end tests.

Every test here runs the real binaries: `rtsqld` with its embedded Kafka broker,
the `rtsql` shell, `psql`, psycopg, and a real Kafka client (confluent_kafka). When
RTSQL_KAFKA_BOOTSTRAP names a real broker (scripts/kafka.sh start), every test
that takes the `kafka` fixture runs twice: once with sources and sinks on the
embedded broker, once on the real one.

Every wait is bounded in time; topic names are unique per test so that runs and
parametrizations never see each other's records.
"""

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import psycopg
import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

SOURCE_DIR = Path(os.environ.get("RTSQL_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BIN_DIR = Path(os.environ.get("RTSQL_BIN_DIR", SOURCE_DIR / "build"))
RTSQLD = BIN_DIR / "server" / "rtsqld"
RTSQL = BIN_DIR / "client" / "rtsql"
PSQL = shutil.which("psql") or "/usr/bin/psql"
KCAT = shutil.which("kcat") or shutil.which("kafkacat")

START_TIMEOUT_S = 30
STOP_TIMEOUT_S = 10


def wait_for(cond, timeout, what):
    """Polls COND until it returns something true, and returns that; fails
    after TIMEOUT seconds saying WHAT was not reached."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"{what} within {timeout}s")


def cancel_until_ended(conn, sql, timeout, what):
    """Runs SQL on CONN (fetching its rows) in a thread of its own and sends
    cancel requests until it has ended: a cancel that arrives before the
    statement starts applies to nothing, as in PostgreSQL. Returns the
    psycopg errors it raised; fails if it had not ended within TIMEOUT
    seconds, saying WHAT did not end."""
    done = threading.Event()
    errors = []

    def run():
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                cur.fetchall()
        except psycopg.Error as e:
            errors.append(e)
        done.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    deadline = time.monotonic() + timeout
    while not done.is_set() and time.monotonic() < deadline:
        conn.cancel()
        done.wait(0.5)
    assert done.is_set(), f"the cancel request did not end {what}"
    t.join(timeout)
    return errors


def unique(prefix):
    """A name no other test or run uses: topics, sources, flows."""
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def shortest_float(x):
    """X as a 32-bit float (an Avro or protobuf float, a FLOAT as Spark reads
    it) written as JSON: the fewest digits that read back as the same float,
    as Java's Float.toString."""
    f32 = struct.unpack("<f", struct.pack("<f", x))[0]
    for digits in range(1, 10):
        text = f"{f32:.{digits}g}"
        if struct.unpack("<f", struct.pack("<f", float(text)))[0] == f32:
            return float(text)
    return f32


def sql_str(s):
    """A SQL string literal."""
    return "'" + str(s).replace("'", "''") + "'"


class Server:
    """One running rtsqld and the ways to talk to it."""

    # How long start() waits for rtsqld to answer (a kind of server that
    # starts a broker of its own takes longer).
    start_timeout_s = START_TIMEOUT_S

    def __init__(self, tmp):
        self.host = "127.0.0.1"
        self.port = free_port()
        self.tmp = Path(tmp)
        self.data_dir = self.tmp / "data"
        self.log_path = self.tmp / "rtsqld.log"
        self.proc = None
        self.embedded_bootstrap = None

    # -- lifecycle -------------------------------------------------------
    def extra_args(self):
        """Flags a kind of server adds to rtsqld's command line (TLS, HTTP...)."""
        return []

    def start(self):
        """Starts rtsqld and waits until it answers through this server's own
        connect() (which subclasses may make use TLS or a password)."""
        assert RTSQLD.exists(), f"{RTSQLD} is not built"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [str(RTSQLD), "--host", self.host, "--port", str(self.port),
             "--data-dir", str(self.data_dir), "--embedded-kafka", *self.extra_args()],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + self.start_timeout_s
        last_error = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"rtsqld exited with {self.proc.returncode} during start:\n{self.log_tail()}")
            try:
                with self.connect(connect_timeout=2) as conn:
                    row = conn.execute("SHOW embedded_kafka").fetchone()
                    self.embedded_bootstrap = row[0]
                    return self
            except psycopg.Error as e:
                last_error = e
                time.sleep(0.2)
        self.kill()
        raise AssertionError(
            f"rtsqld did not accept connections within {self.start_timeout_s}s: {last_error}\n"
            f"{self.log_tail()}")

    def stop(self, timeout=STOP_TIMEOUT_S):
        """SIGTERM and a bounded wait; returns the exit code (None: had to kill)."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def log_tail(self, n=60):
        try:
            self.log.flush()
            lines = self.log_path.read_text(errors="replace").splitlines()
            return "\n".join(lines[-n:])
        except OSError:
            return "(no log)"

    # -- clients ---------------------------------------------------------
    def connect(self, connect_timeout=10):
        """A psycopg connection in autocommit mode (every statement is its own)."""
        return psycopg.connect(host=self.host, port=self.port, user="rtsql", dbname="rtsql",
                               connect_timeout=connect_timeout, autocommit=True)

    def query(self, sql):
        """Rows of one statement through psycopg."""
        with self.connect() as conn:
            cur = conn.execute(sql)
            return cur.fetchall() if cur.description else []

    def psql(self, sql, check=True, timeout=60):
        """psql -X -A -t -c SQL; returns the CompletedProcess."""
        p = subprocess.run(
            [PSQL, "-h", self.host, "-p", str(self.port), "-U", "rtsql", "-d", "rtsql",
             "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
            capture_output=True, text=True, timeout=timeout,
            env={**os.environ, "PGCONNECT_TIMEOUT": "10"})
        if check and p.returncode != 0:
            raise AssertionError(f"psql failed ({p.returncode}) on {sql!r}:\n{p.stderr}")
        return p

    def rtsql(self, *args, check=True, timeout=60, cwd=None):
        """The rtsql shell with the given arguments (-f FILE, -c SQL, ...)."""
        p = subprocess.run(
            [str(RTSQL), "-h", self.host, "-p", str(self.port), *args],
            capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, cwd=cwd)
        if check and p.returncode != 0:
            raise AssertionError(
                f"rtsql {' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
        return p

    def run_script(self, sql_text, name="script.sql", check=True):
        """Writes SQL_TEXT to a file and runs `rtsql -f` on it."""
        path = self.tmp / f"{uuid.uuid4().hex[:8]}_{name}"
        path.write_text(sql_text)
        return self.rtsql("-f", str(path), check=check, cwd=str(path.parent))

    def progress(self, flow):
        """SHOW PROGRESS FLOW as a dict (one row, one column of JSON)."""
        # A copy of a sharded flow (`cnt#1`) is named in quotes.
        name = f'"{flow}"' if "#" in flow else flow
        rows = self.query(f"SHOW PROGRESS {name}")
        assert len(rows) == 1 and len(rows[0]) == 1, rows
        value = rows[0][0]
        return value if isinstance(value, dict) else json.loads(value)

    def wait_progress(self, flow, predicate, timeout=20):
        """Polls SHOW PROGRESS until PREDICATE(progress) holds; returns the last one."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            last = self.progress(flow)
            if predicate(last):
                return last
            time.sleep(0.3)
        return last


HTTP_TIMEOUT_S = 10


def start_server(tmp, run):
    """A Server on data directory `tmp`, started, its log rtsqld.<run>.log: a
    test that kills and restarts rtsqld keeps each run's log apart."""
    s = Server(tmp)
    s.log_path = tmp / f"rtsqld.{run}.log"
    return s.start()


class SteadyProducer:
    """Sends `count` records to `topic` at `rate` a second from a thread of its
    own, a tenth of a second's worth at a time; `make(start, end)` gives the
    records start to end - 1. finish() waits for it (the time the rate takes
    and two minutes more) and raises what it met."""

    def __init__(self, broker, topic, count, rate, make):
        self.errors = []
        self.done = threading.Event()
        self.count, self.rate = count, rate
        self.thread = threading.Thread(target=self._run, args=(broker, topic, make))
        self.thread.start()

    def _run(self, broker, topic, make):
        try:
            chunk = max(1, self.rate // 10)
            for start in range(0, self.count, chunk):
                t0 = time.monotonic()
                broker.produce(topic, make(start, min(self.count, start + chunk)))
                time.sleep(max(0.0, 0.1 - (time.monotonic() - t0)))
        except Exception as e:  # reported by finish(), in the test's thread
            self.errors.append(e)
        finally:
            self.done.set()

    def finish(self):
        self.thread.join(timeout=self.count / self.rate + 120)
        assert self.done.is_set(), "the producer did not finish"
        assert not self.errors, self.errors


class HttpServer(Server):
    """An rtsqld with --embedded-kafka and --http-port."""

    def __init__(self, tmp):
        super().__init__(tmp)
        self.http_port = free_port()

    def extra_args(self):
        return ["--http-port", str(self.http_port)]

    def http(self, path, method="GET"):
        """(status, content type, body text) of one request."""
        req = urllib.request.Request(f"http://{self.host}:{self.http_port}{path}", method=method)
        try:
            with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S) as r:
                return r.status, r.headers.get("Content-Type"), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type"), e.read().decode()


class Kafka:
    """A broker the tests use: the SQL spelling of its address and the client's."""

    def __init__(self, name, sql_bootstrap, bootstrap):
        self.name = name
        self.sql_bootstrap = sql_bootstrap  # what CREATE SOURCE/SINK says
        self.bootstrap = bootstrap  # what a Kafka client connects to

    def __repr__(self):
        return f"Kafka({self.name})"

    def options(self):
        """The connector options of a Kafka source or sink on this broker."""
        return f"connector = 'kafka', 'kafka.bootstrap.servers' = {sql_str(self.sql_bootstrap)}"

    # -- producing -------------------------------------------------------
    def produce(self, topic, records, key=None, headers=None, timeout=30, partition=None):
        """Sends RECORDS (dicts as JSON, str or bytes as they are) and waits for
        every delivery report. KEY and PARTITION may be functions of the record;
        without PARTITION the producer's partitioner picks one."""
        p = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 5,
                      "message.timeout.ms": timeout * 1000})
        errors = []

        def report(err, _msg):
            if err is not None:
                errors.append(err)

        for r in records:
            value = json.dumps(r) if isinstance(r, dict) else r
            k = key(r) if callable(key) else key
            part = {}
            if partition is not None:
                part["partition"] = partition(r) if callable(partition) else partition
            while True:
                try:
                    p.produce(topic, value=value, key=k, headers=headers, on_delivery=report, **part)
                    break
                except BufferError:
                    p.poll(0.1)
            p.poll(0)
        left = p.flush(timeout)
        assert left == 0, f"{left} records not delivered to {topic}"
        assert not errors, f"delivery errors on {topic}: {errors[:3]}"

    def create_topic(self, topic, timeout=30):
        """Creates TOPIC with the broker's default partition count and waits until
        its metadata lists partitions. A producer's metadata request for an
        unknown topic makes a broker with auto-creation create it; that works on
        the embedded broker (which has no CreateTopics) and on Apache Kafka alike."""
        p = Producer({"bootstrap.servers": self.bootstrap})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            md = p.list_topics(topic, timeout=5)
            t = md.topics.get(topic)
            if t is not None and t.error is None and t.partitions:
                return len(t.partitions)
            time.sleep(0.2)
        raise AssertionError(f"topic {topic} was not created within {timeout}s")

    # -- consuming -------------------------------------------------------
    def consume(self, topic, n=None, timeout=30, grace=0.0):
        """Reads TOPIC from the beginning (all partitions, assigned, no group
        protocol) until N records arrived (or, with N None, until the deadline),
        then for GRACE seconds more to catch extras. Returns confluent_kafka
        Message objects in arrival order."""
        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": unique("e2e"),
                      "enable.auto.commit": False, "auto.offset.reset": "earliest",
                      "fetch.wait.max.ms": 10, "topic.metadata.refresh.interval.ms": 500})
        out = []
        try:
            deadline = time.monotonic() + timeout
            partitions = 0
            while time.monotonic() < deadline:
                md = c.list_topics(topic, timeout=5)
                t = md.topics.get(topic)
                if t is not None and t.error is None and t.partitions:
                    partitions = len(t.partitions)
                    break
                time.sleep(0.2)
            if partitions == 0:
                return out
            c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
            end = deadline
            while time.monotonic() < end:
                m = c.poll(0.1)
                if m is None:
                    continue
                if m.error():
                    continue
                out.append(m)
                if n is not None and len(out) >= n and end == deadline:
                    end = min(deadline, time.monotonic() + grace)
            return out
        finally:
            c.close()

    def consume_to_end(self, topic, timeout=30):
        """Reads TOPIC from the beginning up to each partition's end offset as
        it is when the call starts, or until TIMEOUT (then returns what it
        has: an open transaction's records stay unread until it commits).
        Where consume() with no N waits out its whole timeout, this returns as
        soon as it has everything written before the call."""
        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": unique("e2e"),
                      "enable.auto.commit": False, "auto.offset.reset": "earliest",
                      "fetch.wait.max.ms": 10})
        out = []
        try:
            deadline = time.monotonic() + timeout
            md = c.list_topics(topic, timeout=min(5, timeout))
            t = md.topics.get(topic)
            if t is None or t.error is not None or not t.partitions:
                return out
            ends = {}
            for p in t.partitions:
                _, high = c.get_watermark_offsets(TopicPartition(topic, p),
                                                  timeout=max(0.1, deadline - time.monotonic()))
                if high > 0:
                    ends[p] = high
            c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in ends])
            while ends and time.monotonic() < deadline:
                m = c.poll(0.1)
                if m is None:
                    # A transaction's markers take offsets no message has:
                    # the position tells when a partition is read to its end.
                    for tp in c.position([TopicPartition(topic, p) for p in ends]):
                        if tp.offset >= ends[tp.partition]:
                            ends.pop(tp.partition, None)
                    continue
                if m.error():
                    continue
                out.append(m)
                if m.offset() + 1 >= ends.get(m.partition(), 0):
                    ends.pop(m.partition(), None)
            return out
        finally:
            c.close()

    def consume_json(self, topic, n=None, timeout=30, grace=0.0):
        return [json.loads(m.value()) for m in self.consume(topic, n, timeout, grace)]


# -- fixtures --------------------------------------------------------------

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """An rtsqld with --embedded-kafka for the module's tests; stopping it with
    SIGTERM must end it cleanly (exit code 0) within 10 s."""
    s = Server(tmp_path_factory.mktemp("rtsqld"))
    s.start()
    yield s
    code = s.stop()
    assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{s.log_tail()}"


def service_or_skip(variable, how):
    """The address a test service's script exported in VARIABLE. Where it is not
    set, the test skips, except under CI (CI set), which starts every service
    its tests need: there it fails."""
    value = os.environ.get(variable, "")
    if not value:
        if os.environ.get("CI"):
            pytest.fail(f"CI must set {variable} ({how})")
        pytest.skip(f"{variable} is not set ({how} prints it)")
    return value


def _brokers():
    params = ["embedded"]
    if os.environ.get("RTSQL_KAFKA_BOOTSTRAP"):
        params.append("real")
    return params


@pytest.fixture(scope="module", params=_brokers())
def kafka(request, server):
    """The broker sources and sinks use: the server's embedded one, and a real
    Apache Kafka broker as well when RTSQL_KAFKA_BOOTSTRAP is set."""
    if request.param == "embedded":
        return Kafka("embedded", "embedded", server.embedded_bootstrap)
    addr = os.environ["RTSQL_KAFKA_BOOTSTRAP"]
    return Kafka("real", addr, addr)


@pytest.fixture(scope="module", params=_brokers())
def broker(request, tmp_path_factory):
    """A broker that outlives the servers a test kills: the embedded broker of
    a second rtsqld that is never killed, and Apache Kafka as well when
    RTSQL_KAFKA_BOOTSTRAP is set. Sources and sinks name it by address."""
    if request.param == "embedded":
        host = Server(tmp_path_factory.mktemp("broker_host"))
        host.start()
        yield Kafka("embedded", host.embedded_bootstrap, host.embedded_bootstrap)
        host.stop()
    else:
        addr = os.environ["RTSQL_KAFKA_BOOTSTRAP"]
        yield Kafka("real", addr, addr)


@pytest.fixture
def tmp_sql(tmp_path):
    """Writes a .sql file in the test's temporary directory."""
    def write(text, name="script.sql"):
        p = tmp_path / name
        p.write_text(text)
        return p
    return write
