#!/usr/bin/python3
"""Runs rtsql's SQL logic test files (tests/sql/**/*.test).

A .test file is a session in the spirit of DuckDB's sqllogictest, extended for
streams: statements and queries with their expected results, records produced
into Kafka topics, the records a flow must write, and progress counters. The
runner starts one rtsqld per file (with its embedded Kafka broker, on a free
loopback port and a temporary data directory), runs the records in order over
one autocommit connection, stops the server with SIGTERM and checks that it
exits with code 0. It stops at the first failure and exits non-zero, naming
FILE:LINE, the statement, and what was expected and what came instead.

Records (separated by blank lines; `#` starts a comment line):

    statement ok
    CREATE SOURCE ...

    statement error [SQLSTATE] [@POS]
    SELECT nope
    ----
    column "nope" does not exist        (optional: substrings of the error text)

    query TI [rowsort] [wait]           (one letter per column; rowsort sorts both sides;
                                         wait retries until the rows match, up to 10 s)
    SELECT upper('a'), 1 + 1
    ----
    A	2

    produce TOPIC [keyed] [partition=N] (each line one record value; keyed: KEY|VALUE,
                                         KEY|<tombstone> a record with no value;
                                         partition=N: every record to partition N)
    {"user_id":"u1","amount":12.5}

    expect TOPIC [ordered] [keyed]      (the topic holds exactly these records)
    expect TOPIC latest                 (the last record of each key: KEY|VALUE lines;
                                         KEY|<tombstone> is a record with no value)
    {"user_id":"u1","doubled":25.0}

    expect-empty TOPIC                  (no record arrives within the grace period)

    progress FLOW PATH VALUE            (SHOW PROGRESS FLOW; PATH dotted, e.g. sources.0.numInputRows)

    sleep MS

    restart                             (SIGTERM, exit code 0, start again on the same
                                         data directory; the embedded broker starts empty)

Expected rows are separated by tabs; without a tab, a one-column row is the
whole line and a row of several columns is split on runs of spaces. `NULL` is a
null, `(empty)` the empty string. JSON records compare as parsed JSON (key order
and spacing do not matter, numbers compare numerically); other records compare
as text. `${uid}` anywhere in the file is replaced by an id unique to the run,
so topics on the broker never collide. `${srcdir}` is replaced by the absolute
path of the directory holding the runner (tests/sql), for data files under
tests/sql/data/.

A comment line `# rtsqld: FLAGS` before the first record adds FLAGS to the
server's command line for that file, for instance
`# rtsqld: --slots 30 --embedded-kafka-partitions 4`.

Usage: run_sqllogic.py FILE.test [FILE.test ...]; RTSQL_BIN_DIR names the build
directory (server/rtsqld under it).
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import psycopg
from psycopg.adapt import Loader
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

START_TIMEOUT_S = 30
STOP_TIMEOUT_S = 10
STATEMENT_TIMEOUT_S = 30     # a statement taking longer is cancelled and fails
EXPECT_TIMEOUT_S = 10        # how long `expect` waits for the records
GRACE_S = 0.3                # how long `expect` watches for extra records
PROGRESS_TIMEOUT_S = 10
QUERY_WAIT_S = 10           # how long `query ... wait` retries
MAX_SLEEP_MS = 10000
BOOL_OID = 16               # PostgreSQL's bool type


class TestFailure(Exception):
    """A failed record; the message says where and why."""


class TextLoader(Loader):
    """Loads every value as the server's text, so results compare as text."""

    def load(self, data):
        return bytes(data).decode("utf-8", errors="replace")


# -- parsing ------------------------------------------------------------------

class Record:
    def __init__(self, kind, args, line, sql="", expected=None):
        self.kind = kind          # statement, query, produce, expect, expect-empty, progress, sleep
        self.args = args          # the words after the kind
        self.line = line          # 1-based line of the record's header
        self.sql = sql
        self.expected = expected if expected is not None else []


def parse(text, path):
    lines = text.split("\n")
    records = []
    i = 0
    n = len(lines)

    def block(start, stop_at_dashes):
        """Lines from START until a blank line (or `----` when asked)."""
        out = []
        j = start
        while j < n and lines[j].strip() != "":
            if stop_at_dashes and lines[j].strip() == "----":
                break
            out.append(lines[j])
            j += 1
        return out, j

    while i < n:
        raw = lines[i]
        stripped = raw.strip()
        if stripped == "" or stripped.startswith("#"):
            i += 1
            continue
        words = stripped.split()
        kind, args, line_no = words[0], words[1:], i + 1
        i += 1
        if kind in ("statement", "query"):
            body, i = block(i, True)
            # Comment lines inside a statement are dropped; SQL comments stay.
            sql = "\n".join(b for b in body if not b.lstrip().startswith("#"))
            if not sql.strip():
                raise TestFailure(f"{path}:{line_no}: {kind} without SQL")
            expected = []
            if i < n and lines[i].strip() == "----":
                # Expected rows may be empty lines only as `(empty)`; the block
                # ends at the first blank line.
                expected, i = block(i + 1, False)
            records.append(Record(kind, args, line_no, sql, expected))
        elif kind in ("produce", "expect"):
            body, i = block(i, False)
            records.append(Record(kind, args, line_no, expected=body))
        elif kind in ("expect-empty", "progress", "sleep", "restart"):
            records.append(Record(kind, args, line_no))
        else:
            raise TestFailure(f"{path}:{line_no}: unknown record '{kind}'")
    return records


# -- the server ---------------------------------------------------------------

def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, rtsqld, tmp, extra_args=()):
        self.rtsqld = rtsqld
        self.extra_args = list(extra_args)
        self.port = free_port()
        self.tmp = Path(tmp)
        self.log_path = self.tmp / "rtsqld.log"
        self.proc = None
        self.bootstrap = None

    def connect(self, timeout=10):
        conn = psycopg.connect(host="127.0.0.1", port=self.port, user="rtsql", dbname="rtsql",
                               connect_timeout=timeout, autocommit=True,
                               prepare_threshold=None)
        # No automatic prepared statements: a statement repeated while
        # polling (SHOW PROGRESS) stays a plain query.
        return conn

    def start(self):
        if self.proc is not None:
            self.port = free_port()  # a restart: the old port may still be in TIME_WAIT
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [str(self.rtsqld), "--host", "127.0.0.1", "--port", str(self.port),
             "--data-dir", str(self.tmp / "data"), "--embedded-kafka", *self.extra_args],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT_S
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise TestFailure(f"rtsqld exited with {self.proc.returncode} during start\n"
                                  f"{self.log_tail()}")
            try:
                with self.connect(timeout=2) as conn:
                    self.bootstrap = conn.execute("SHOW embedded_kafka").fetchone()[0]
                    return
            except psycopg.Error as e:
                last = e
                time.sleep(0.1)
        self.kill()
        raise TestFailure(f"rtsqld did not answer within {START_TIMEOUT_S}s: {last}\n"
                          f"{self.log_tail()}")

    def stop(self):
        """SIGTERM and a bounded wait; the exit code, or None when it had to be killed."""
        if self.proc is None:
            return None
        if self.proc.poll() is not None:
            return self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def exit_status(self):
        """A sentence when the server is no longer running, else None."""
        if self.proc is None:
            return None
        try:
            code = self.proc.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            return None
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"rtsqld died from {name}"
        return f"rtsqld exited with code {code}"

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def log_tail(self, n=40):
        try:
            self.log.flush()
            text = self.log_path.read_text(errors="replace").splitlines()
            return "--- rtsqld log (last lines) ---\n" + "\n".join(text[-n:])
        except (OSError, AttributeError):
            return "(no server log)"


# -- comparing values -----------------------------------------------------------

def cell_text(v):
    if v is None:
        return "NULL"
    if v == "":
        return "(empty)"
    return v


def split_row(line, ncols):
    if "\t" in line:
        return line.split("\t")
    if ncols == 1:
        return [line]
    return line.split()


def normalize_json(v):
    """JSON value with every number as float, so 25 and 25.0 compare equal."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, list):
        return [normalize_json(x) for x in v]
    if isinstance(v, dict):
        return {k: normalize_json(x) for k, x in v.items()}
    return v


def canonical_value(text):
    """A record value as a comparable string: canonical JSON for objects and
    arrays, else the text itself."""
    if text is None:
        return "<tombstone>"
    s = text.strip()
    if s[:1] in ("{", "["):
        try:
            return "json:" + json.dumps(normalize_json(json.loads(s)), sort_keys=True)
        except ValueError:
            pass
    return "text:" + text


def canonical_record(key, value, keyed):
    v = canonical_value(value)
    if keyed:
        return ("NULL" if key is None else key) + " | " + v
    return v


def show_canonical(c):
    return c.replace("text:", "", 1).replace("json:", "", 1) if c.startswith(("text:", "json:")) \
        else c.replace(" | json:", " | ").replace(" | text:", " | ")


def parse_expected_record(line, keyed):
    if keyed:
        if "|" not in line:
            raise TestFailure(f"keyed record without 'KEY|VALUE': {line!r}")
        k, v = line.split("|", 1)
        return canonical_record(None if k == "NULL" else k, None if v == "<tombstone>" else v,
                                True)
    return canonical_record(None, line, False)


# -- running ------------------------------------------------------------------

class Runner:
    def __init__(self, path, server, conn):
        self.path = path
        self.server = server
        self.conn = conn

    def fail(self, rec, msg):
        where = f"{self.path}:{rec.line}"
        text = f"{where}: {msg}"
        if rec.sql:
            text += "\n  statement:\n    " + rec.sql.replace("\n", "\n    ")
        died = self.server.exit_status()
        if died:
            text += f"\n  {died}"
        raise TestFailure(text)

    def execute(self, rec, sql):
        """Runs SQL with a client-side time bound (the query is cancelled after it)."""
        timer = threading.Timer(STATEMENT_TIMEOUT_S, self.conn.cancel)
        timer.start()
        try:
            cur = self.conn.execute(sql)
            rows = cur.fetchall() if cur.description else None
            if rows:
                # Booleans arrive in PostgreSQL's text form (t/f); the files
                # spell them true/false, as Spark does.
                bools = {i for i, d in enumerate(cur.description) if d.type_code == BOOL_OID}
                if bools:
                    rows = [tuple({"t": "true", "f": "false"}.get(v, v) if i in bools else v
                                  for i, v in enumerate(r)) for r in rows]
            return cur, rows
        finally:
            timer.cancel()

    # statement ok / statement error
    def do_statement(self, rec):
        if not rec.args or rec.args[0] not in ("ok", "error"):
            self.fail(rec, "expected 'statement ok' or 'statement error [SQLSTATE] [@POS]'")
        if rec.args[0] == "ok":
            try:
                self.execute(rec, rec.sql)
            except psycopg.Error as e:
                self.fail(rec, f"expected success, got error {e.sqlstate}: {e}")
            return
        want_state, want_pos = None, None
        for a in rec.args[1:]:
            if a.startswith("@"):
                want_pos = int(a[1:])
            else:
                want_state = a
        try:
            self.execute(rec, rec.sql)
        except psycopg.Error as e:
            got = str(e)
            if want_state is not None and e.sqlstate != want_state:
                self.fail(rec, f"expected SQLSTATE {want_state}, got {e.sqlstate}: {got}")
            if want_pos is not None:
                pos = e.diag.statement_position
                if pos is None or int(pos) != want_pos:
                    self.fail(rec, f"expected error position {want_pos}, got {pos}: {got}")
            for sub in rec.expected:
                if sub.strip() and sub.strip() not in got:
                    self.fail(rec, f"error text lacks {sub.strip()!r}; got: {got}")
            return
        self.fail(rec, f"expected error {want_state or ''}, but the statement succeeded")

    # query
    def do_query(self, rec):
        if not rec.args:
            self.fail(rec, "query needs its column types (e.g. 'query TI')")
        types = rec.args[0]
        sort = "rowsort" in rec.args[1:]
        wait = "wait" in rec.args[1:]
        deadline = time.monotonic() + QUERY_WAIT_S
        while True:
            msg = self.query_once(rec, types, sort)
            if msg is None:
                return
            if not wait or time.monotonic() >= deadline:
                if wait:
                    msg += f"\n  (still different after {QUERY_WAIT_S}s)"
                self.fail(rec, msg)
            time.sleep(0.1)

    def query_once(self, rec, types, sort):
        """Runs the query once; None when the result is the expected one, else
        the reason it is not."""
        try:
            cur, rows = self.execute(rec, rec.sql)
        except psycopg.Error as e:
            return f"expected rows, got error {e.sqlstate}: {e}"
        if rows is None:
            return "expected rows, the statement returned none"
        ncols = len(cur.description)
        if ncols != len(types):
            return (f"expected {len(types)} columns ({types}), got {ncols}: "
                    f"{[d.name for d in cur.description]}")
        got = [[cell_text(v) for v in r] for r in rows]
        want = [split_row(line, ncols) for line in rec.expected]
        if sort:
            got.sort()
            want.sort()
        if got == want:
            return None
        msg = "wrong result\n  expected:\n" + fmt_rows(want) + "\n  got:\n" + fmt_rows(got)
        bad = [line for line in rec.expected if len(split_row(line, ncols)) != ncols]
        if bad:
            msg += (f"\n  (expected row {bad[0]!r} does not have {ncols} cells: "
                    "separate cells with tabs)")
        return msg

    # produce
    def do_produce(self, rec):
        if not rec.args:
            self.fail(rec, "produce needs a topic")
        topic, keyed = rec.args[0], "keyed" in rec.args[1:]
        partition = None
        for a in rec.args[1:]:
            if a.startswith("partition="):
                if not a[len("partition="):].isdigit():
                    self.fail(rec, f"bad partition: {a!r}")
                partition = int(a[len("partition="):])
            elif a != "keyed":
                self.fail(rec, f"unknown produce option {a!r}")
        p = Producer({"bootstrap.servers": self.server.bootstrap, "linger.ms": 0,
                      "message.timeout.ms": 10000})
        errors = []

        def report(err, _msg):
            if err is not None:
                errors.append(err)

        for line in rec.expected:
            key = None
            value = line
            if keyed:
                if "|" not in line:
                    self.fail(rec, f"keyed record without 'KEY|VALUE': {line!r}")
                key, value = line.split("|", 1)
                if key == "NULL":
                    key = None
                if value == "<tombstone>":
                    value = None
            # Records go one at a time and in order, each acknowledged before
            # the next, so a one-partition topic keeps the file's order.
            kwargs = {} if partition is None else {"partition": partition}
            p.produce(topic, value=None if value is None else value.encode(),
                      key=None if key is None else key.encode(),
                      on_delivery=report, **kwargs)
            left = p.flush(10)
            if left:
                self.fail(rec, f"record not delivered to {topic} within 10 s: {line!r}")
        if errors:
            self.fail(rec, f"delivery errors on {topic}: {errors[:3]}")

    def consume(self, topic, want_count, timeout, done=None):
        """Reads TOPIC from the beginning: until WANT_COUNT records arrived (or,
        with DONE, until DONE(records) holds), then GRACE_S more for extras, or
        until TIMEOUT. Returns (key, value) texts."""
        c = Consumer({"bootstrap.servers": self.server.bootstrap,
                      "group.id": "sqllogic-" + uuid.uuid4().hex[:10],
                      "enable.auto.commit": False, "auto.offset.reset": "earliest",
                      "fetch.wait.max.ms": 10, "topic.metadata.refresh.interval.ms": 500})
        out = []
        try:
            deadline = time.monotonic() + timeout
            partitions = 0
            while time.monotonic() < deadline:
                md = c.list_topics(topic, timeout=max(0.1, min(2.0, deadline - time.monotonic())))
                t = md.topics.get(topic)
                if t is not None and t.error is None and t.partitions:
                    partitions = len(t.partitions)
                    break
                time.sleep(0.1)
            if partitions == 0:
                return out
            c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
            end = deadline
            if want_count == 0 and done is None:
                end = time.monotonic() + GRACE_S
            while time.monotonic() < end:
                m = c.poll(0.05)
                if m is None or m.error():
                    continue
                key = None if m.key() is None else m.key().decode("utf-8", errors="replace")
                value = None if m.value() is None else m.value().decode("utf-8", errors="replace")
                out.append((key, value))
                reached = done(out) if done is not None else len(out) >= want_count
                if reached and end == deadline:
                    end = min(deadline, time.monotonic() + GRACE_S)
            return out
        finally:
            c.close()

    # expect / expect-empty
    def do_expect(self, rec):
        if not rec.args:
            self.fail(rec, "expect needs a topic")
        topic = rec.args[0]
        ordered, keyed = "ordered" in rec.args[1:], "keyed" in rec.args[1:]
        latest = "latest" in rec.args[1:]
        if latest:
            keyed, ordered = True, False
        try:
            want = [parse_expected_record(l, keyed) for l in rec.expected]
        except TestFailure as e:
            self.fail(rec, str(e))
        if latest:
            # The last record of each Kafka key: an update-mode result's final
            # rows, whatever the order of the updates before them.
            def reduce(raw):
                last = {}
                for k, v in raw:
                    last[k] = v
                return sorted(canonical_record(k, v, True) for k, v in last.items())
            got_raw = self.consume(topic, 0, EXPECT_TIMEOUT_S,
                                   done=lambda raw: reduce(raw) == sorted(want))
            got = reduce(got_raw)
        else:
            got_raw = self.consume(topic, len(want), EXPECT_TIMEOUT_S)
            got = [canonical_record(k, v, keyed) for k, v in got_raw]
        ok = got == want if ordered else sorted(got) == sorted(want)
        if not ok:
            missing = multiset_minus(want, got)
            extra = multiset_minus(got, want)
            msg = (f"topic {topic}: expected {len(want)} record(s)"
                   f"{' in this order' if ordered else ''}, got {len(got)}")
            if missing:
                msg += "\n  missing:\n" + fmt_records(missing)
            if extra:
                msg += "\n  unexpected:\n" + fmt_records(extra)
            if ordered and not missing and not extra:
                msg += "\n  got, in this order:\n" + fmt_records(got)
            self.fail(rec, msg)

    def do_expect_empty(self, rec):
        if not rec.args:
            self.fail(rec, "expect-empty needs a topic")
        got = self.consume(rec.args[0], 0, EXPECT_TIMEOUT_S)
        if got:
            self.fail(rec, f"topic {rec.args[0]}: expected no record, got {len(got)}:\n"
                      + fmt_records([canonical_record(k, v, True) for k, v in got]))

    # progress
    def do_progress(self, rec):
        if len(rec.args) < 3:
            self.fail(rec, "usage: progress FLOW PATH VALUE")
        flow, path, value_text = rec.args[0], rec.args[1], " ".join(rec.args[2:])
        try:
            want = json.loads(value_text)
        except ValueError:
            want = value_text
        deadline = time.monotonic() + PROGRESS_TIMEOUT_S
        last, found = None, None
        while True:
            try:
                _, rows = self.execute(rec, f"SHOW PROGRESS {flow}")
            except psycopg.Error as e:
                self.fail(rec, f"SHOW PROGRESS {flow} failed: {e.sqlstate}: {e}")
            last = json.loads(rows[0][0])
            found = lookup(last, path)
            if found is not MISSING and values_equal(found, want):
                return
            if time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        got = "(no such path)" if found is MISSING else json.dumps(found)
        self.fail(rec, f"progress of {flow}: {path} expected {json.dumps(want)}, got {got} "
                  f"after {PROGRESS_TIMEOUT_S}s\n  progress: {json.dumps(last)}")

    def do_restart(self, rec):
        """Stops the server with SIGTERM (it must exit 0) and starts it again on
        the same data directory; the session reconnects."""
        try:
            self.conn.close()
        except psycopg.Error:
            pass
        code = self.server.stop()
        if code != 0:
            self.fail(rec, f"rtsqld exit code on SIGTERM: {code} (want 0)")
        try:
            self.server.start()
        except TestFailure as e:
            self.fail(rec, f"restart failed: {e}")
        self.conn = self.server.connect()
        register_text_loaders(self.conn)

    def do_sleep(self, rec):
        if len(rec.args) != 1 or not rec.args[0].isdigit():
            self.fail(rec, "usage: sleep MILLISECONDS")
        time.sleep(min(int(rec.args[0]), MAX_SLEEP_MS) / 1000.0)

    def run(self, records):
        handlers = {"statement": self.do_statement, "query": self.do_query,
                    "produce": self.do_produce, "expect": self.do_expect,
                    "expect-empty": self.do_expect_empty, "progress": self.do_progress,
                    "sleep": self.do_sleep, "restart": self.do_restart}
        for rec in records:
            handlers[rec.kind](rec)


MISSING = object()


def lookup(obj, path):
    for part in path.split("."):
        if isinstance(obj, list):
            if not part.isdigit() or int(part) >= len(obj):
                return MISSING
            obj = obj[int(part)]
        elif isinstance(obj, dict):
            if part not in obj:
                return MISSING
            obj = obj[part]
        else:
            return MISSING
    return obj


def values_equal(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return a == b


def multiset_minus(a, b):
    rest = list(b)
    out = []
    for x in a:
        if x in rest:
            rest.remove(x)
        else:
            out.append(x)
    return out


def fmt_rows(rows):
    if not rows:
        return "    (no rows)"
    return "\n".join("    " + "\t".join(r) for r in rows)


def fmt_records(recs):
    return "\n".join("    " + show_canonical(r) for r in recs)


def register_text_loaders(conn):
    """Every result column loads as the server's text, arrays too (a catalog
    query's arrays are PostgreSQL's array types)."""
    for info in psycopg.postgres.types:
        conn.adapters.register_loader(info.oid, TextLoader)
        if getattr(info, "array_oid", 0):
            conn.adapters.register_loader(info.array_oid, TextLoader)


def server_flags(text):
    """The flags of a `# rtsqld: FLAGS` comment line before the first record."""
    for line in text.split("\n"):
        s = line.strip()
        if not s:
            continue
        if not s.startswith("#"):
            break
        body = s[1:].strip()
        if body.startswith("rtsqld:"):
            return body[len("rtsqld:"):].split()
    return []


def run_file(path, rtsqld):
    text = Path(path).read_text()
    uid = uuid.uuid4().hex[:10]
    text = text.replace("${uid}", uid)
    text = text.replace("${srcdir}", str(Path(__file__).resolve().parent))
    records = parse(text, path)
    tmp = tempfile.mkdtemp(prefix="rtsql-sqllogic-")
    server = Server(rtsqld, tmp, server_flags(text))
    ok = False
    try:
        server.start()
        conn = server.connect()
        register_text_loaders(conn)
        runner = Runner(path, server, conn)
        try:
            runner.run(records)
        except TestFailure as e:
            raise TestFailure(f"{e}\n{server.log_tail()}")
        except psycopg.OperationalError as e:
            raise TestFailure(f"{path}: connection lost: {e}\n{server.log_tail()}")
        finally:
            try:
                runner.conn.close()
            except psycopg.Error:
                pass
        code = server.stop()
        if code != 0:
            raise TestFailure(f"{path}: rtsqld exit code on SIGTERM: {code} (want 0)\n"
                              f"{server.log_tail()}")
        ok = True
        return len(records)
    finally:
        server.kill()
        if ok:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"(server files kept in {tmp})", file=sys.stderr)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    source_dir = Path(__file__).resolve().parents[2]
    bin_dir = Path(os.environ.get("RTSQL_BIN_DIR", source_dir / "build"))
    rtsqld = bin_dir / "server" / "rtsqld"
    if not rtsqld.exists():
        print(f"{rtsqld} is not built (set RTSQL_BIN_DIR to the build directory)",
              file=sys.stderr)
        return 2
    for path in argv[1:]:
        t0 = time.monotonic()
        try:
            n = run_file(path, rtsqld)
        except TestFailure as e:
            print(f"FAIL {e}", file=sys.stderr)
            return 1
        print(f"ok {path}: {n} records in {time.monotonic() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
