"""Shared set-up of the cluster failover tests (test_cluster_failover.py,
test_cluster_failover_twice.py): stateful flows on a cluster of rtsqld nodes,
a steady input, and the checks that their results end exact.

Nodes a, b, c of one cluster (`--node-timeout 6`); through a, three sources
with a WATERMARK (5 seconds) and three flows, each checkpointed every second:
- cnt: `SELECT k, count(*) AS n FROM ev GROUP BY k`;
- win: the count per 1-second tumbling window and key of the same events;
- pay: the interval join of orders and payments, `ON o.oid = p.oid AND p.ts
  BETWEEN o.ts AND o.ts + INTERVAL '10' SECOND`.
Each flow runs on the one node that holds its slot; which node that is, the
cluster's group decides, so a test asks (`runners`).

A producer thread writes events, orders and their payments every 100 ms
until the test stops it. Event times follow the records' numbers, not the
clock, so a slow machine changes nothing of the results: what was written is
the truth. A record's event time is at most 3.5 seconds behind any written
before it, inside the watermark delay, so no record is late and every one
counts.
"""

import json
import re
import shutil
import threading
import time
from collections import Counter, defaultdict
from datetime import datetime, timedelta

import psycopg
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from cluster import WAIT_S, flows, runner, wait_for
from conftest import unique
from test_crash_recovery import event, window_of

FLOWS = ("cnt", "win", "pay")
TICK_S = 0.1
EVENTS_PER_TICK = 20      # event() puts them 10 ms apart: 200 ms of event time a tick
ORDERS_PER_TICK = 5       # 40 ms apart: the same pace
PAID_WITHIN = timedelta(seconds=10)
BASE = datetime(2026, 1, 1)
# Bounds for a test that fails before it stops the producer.
PRODUCE_AT_MOST_S = 180
CONVERGE_S = 120
TS_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


def order(oid):
    return {"oid": oid, "ts": (BASE + timedelta(milliseconds=40 * oid)).strftime(TS_FORMAT)[:-3]}


def payments_of(o):
    """The payments of order O: 2 s after it, and for every 4th order one more
    1 s after (both match); for every 3rd order one 1 s before it, which
    matches nothing (a payment before its order is out of the bound)."""
    t = datetime.strptime(o["ts"], TS_FORMAT)
    oid = o["oid"]
    out = [(3 * oid, 2)]
    if oid % 4 == 0:
        out.append((3 * oid + 2, 1))
    if oid % 3 == 0:
        out.append((3 * oid + 1, -1))
    return [{"pid": pid, "oid": oid, "ts": (t + timedelta(seconds=s)).strftime(TS_FORMAT)[:-3]}
            for pid, s in out]


class Input:
    """Writes events, orders and payments every TICK_S from a thread of its
    own, with one Kafka producer, until stop(). Every record is kept before it
    is sent; stop() checks each was delivered, so the lists are the truth."""

    def __init__(self, broker, topic):
        self.events, self.orders, self.payments = [], [], []
        self.errors = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(broker.bootstrap, topic),
                                        daemon=True)
        self._thread.start()

    def _run(self, bootstrap, topic):
        p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5,
                      "message.timeout.ms": 60000})

        def report(err, _msg):
            if err is not None:
                self.errors.append(err)

        def send(t, record, kept):
            kept.append(record)
            while True:
                try:
                    p.produce(t, value=json.dumps(record), on_delivery=report)
                    return
                except BufferError:
                    p.poll(0.1)

        try:
            deadline = time.monotonic() + PRODUCE_AT_MOST_S
            tick = 0
            while not self._stop.is_set() and time.monotonic() < deadline:
                t0 = time.monotonic()
                for i in range(tick * EVENTS_PER_TICK, (tick + 1) * EVENTS_PER_TICK):
                    send(topic["ev"], event(i, BASE), self.events)
                for oid in range(tick * ORDERS_PER_TICK, (tick + 1) * ORDERS_PER_TICK):
                    o = order(oid)
                    send(topic["orders"], o, self.orders)
                    for pay in payments_of(o):
                        send(topic["payments"], pay, self.payments)
                p.poll(0)
                tick += 1
                self._stop.wait(max(0.0, TICK_S - (time.monotonic() - t0)))
        except Exception as e:  # reported by stop(), in the test's thread
            self.errors.append(e)
        finally:
            left = p.flush(60)
            if left:
                self.errors.append(f"{left} records not delivered")

    def halt(self):
        self._stop.set()
        self._thread.join(timeout=90)

    def stop(self):
        """Stops the producer and checks that every record was delivered, and
        that it was still running (not out of its PRODUCE_AT_MOST_S)."""
        running = self._thread.is_alive()
        self.halt()
        assert not self._thread.is_alive(), "the producer did not stop"
        assert not self.errors, self.errors[:3]
        assert running, f"the producer ran out ({PRODUCE_AT_MOST_S} s) before the test stopped it"

    def truth(self):
        """(count per key, count per (window start, key), join pairs)."""
        counts = Counter(e["k"] for e in self.events)
        windows = Counter((window_of(e["ts"]), e["k"]) for e in self.events)
        ordered = {o["oid"]: datetime.strptime(o["ts"], TS_FORMAT) for o in self.orders}
        pairs = set()
        for p in self.payments:
            t = ordered.get(p["oid"])
            if t is not None and t <= datetime.strptime(p["ts"], TS_FORMAT) <= t + PAID_WITHIN:
                pairs.add((p["oid"], p["pid"]))
        return dict(counts), dict(windows), pairs


class FlowsCluster:
    """Nodes NAMES of a new cluster on BROKER, and through the first the
    sources, sinks and flows above, with 'delivery' = 'exactly-once' when
    DELIVERY says so (else the default, at least once)."""

    def __init__(self, broker, start_node, prefix, delivery, names="abc", standbys=0, shards=0,
                 partitions=0):
        self.broker = broker
        # The flows as SHOW FLOWS lists them: with SHARDS, each one's copies
        # too (`cnt#1`, ...), each run on the node that holds its slot.
        self.flows = [f + (f"#{i}" if i else "") for f in FLOWS for i in range(max(shards, 1))]
        self.start_node = start_node
        self.uid = unique(prefix)
        self.exactly_once = delivery == "exactly-once"
        self.topic = {t: f"{self.uid}_{t}"
                      for t in ("ev", "orders", "payments", "counts", "windows", "pairs")}
        # With PARTITIONS, the inputs have that many partitions (Apache Kafka).
        inputs = ("ev", "orders", "payments") if partitions else ()
        if inputs:
            admin = AdminClient({"bootstrap.servers": broker.bootstrap})
            for f in admin.create_topics([NewTopic(self.topic[t], partitions, 1)
                                          for t in inputs]).values():
                f.result(timeout=30)
        for name, t in self.topic.items():
            got = broker.create_topic(t)
            assert name not in inputs or got == partitions, (t, got)
        self.nodes = {}
        for name in names:
            self.start(name)
        # The group has shared the slots among all the nodes.
        for node in self.nodes.values():
            self.wait_holds_slots(node)
        if shards:
            # The node that makes the flows knows every node's slots: CREATE
            # FLOW spreads each flow's copies over the nodes it knows.
            self.wait_sees_nodes(self.nodes[names[0]], names)
        self.input = None
        opts = broker.options()
        src = f"{opts}, startingOffsets = 'earliest', format = 'json'"
        wm = "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND"
        options = "'shuffle.partitions' = '2'"
        if self.exactly_once:
            options += ", 'delivery' = 'exactly-once'"
        if standbys:
            options += f", 'standby.replicas' = '{standbys}'"
        if shards:
            options += f", 'shards' = '{shards}'"
        flow = f"CHECKPOINT INTERVAL '1 second' WITH ({options})"
        t = self.topic
        self.nodes[names[0]].run_script(f"""
            CREATE SOURCE ev (k STRING, id BIGINT, ts TIMESTAMP, {wm})
                WITH ({src}, subscribe = '{t["ev"]}');
            CREATE SOURCE orders (oid BIGINT, ts TIMESTAMP, {wm})
                WITH ({src}, subscribe = '{t["orders"]}');
            CREATE SOURCE payments (pid BIGINT, oid BIGINT, ts TIMESTAMP, {wm})
                WITH ({src}, subscribe = '{t["payments"]}');
            CREATE SINK counts WITH ({opts}, topic = '{t["counts"]}', format = 'json');
            CREATE SINK windows WITH ({opts}, topic = '{t["windows"]}', format = 'json');
            CREATE SINK pairs WITH ({opts}, topic = '{t["pairs"]}', format = 'json');
            CREATE FLOW cnt INTO counts {flow}
                AS SELECT k, count(*) AS n FROM ev GROUP BY k;
            CREATE FLOW win INTO windows {flow}
                AS SELECT window.start AS ws, k, count(*) AS n FROM ev
                   GROUP BY window(ts, '1 second'), k;
            CREATE FLOW pay INTO pairs {flow}
                AS SELECT o.oid, p.pid FROM orders o JOIN payments p
                   ON o.oid = p.oid AND p.ts BETWEEN o.ts AND o.ts + INTERVAL '10' SECOND;
        """)

    # -- nodes ---------------------------------------------------------------
    def start(self, name):
        node = self.start_node(self.uid, self.broker, name)
        self.nodes[name] = node
        return node

    def restart(self, name):
        """Starts NAME again on its data directory. The log of the run that was
        killed is kept beside (the new run writes its own from the start)."""
        old = self.nodes[name].log_path
        if old.exists():
            shutil.copy(old, old.with_name(old.name + ".killed"))
        return self.start(name)

    def alive(self):
        return [n for n in self.nodes.values() if n.proc.poll() is None]

    def kill(self, node):
        """SIGKILL: no epoch end, no flush, no last checkpoint, no leaving the group."""
        node.kill()

    def runners(self, timeout=WAIT_S * 2):
        """Each flow's one runner among the live nodes (every other one shows it
        remote there)."""
        alive = self.alive()
        return {f: runner(f, *alive, timeout=timeout) for f in self.flows}

    def checkpointed_runners(self, more=2):
        """Each flow's runner among the live nodes, once each flow has taken
        MORE checkpoints on it since it started there (a checkpoint is copied to
        Kafka before the next one is taken: with two taken, the copy holds one).
        Asked again at every poll, so that it is where the flows run now."""
        def ready():
            out = {}
            for f in self.flows:
                node = runner(f, *self.alive())
                p = node.progress(f)
                start = (p.get("recovery") or {}).get("fromEpoch") or 0
                if (p["status"]["state"] != "running"
                        or (p.get("checkpoint") or {}).get("epoch", 0) < start + more):
                    return None
                out[f] = node
            return out
        return wait_for(f"{more} checkpoints of each flow where it runs", ready,
                        timeout=WAIT_S * 2)

    def restored(self, how="restoring the state copy of epoch"):
        """How many times each live node has logged restoring each flow's state
        copy (HOW: the log's words for it)."""
        return {(n.name, f): n.log_path.read_text(errors="replace")
                .count(f'flow "{f}": {how}')
                for n in self.alive() for f in self.flows}

    def check_restored(self, before, after, victim, logged):
        """Each flow that ran on VICTIM runs on a live node now, which restored
        its state copy from Kafka (LOGGED: what restored() said before the kill)."""
        for f, node in before.items():
            if node is not victim:
                continue
            heir = after[f]
            assert heir is not victim
            wait_for(f"{heir.name} restores the state copy of {f}",
                     lambda f=f, heir=heir: self.restored()[(heir.name, f)]
                     > logged.get((heir.name, f), 0))

    def fail_over_and_back(self, before, victim):
        """Kills VICTIM (SIGKILL). Once the group has given up on it, each
        flow it ran (as BEFORE, the runners just before, says) runs on another
        node, restored from the state copy VICTIM left in Kafka. Then VICTIM
        comes back under its name, rejoins and takes a share of the slots
        while records still stream in, and the results end exact."""
        logged = self.restored()
        self.kill(victim)
        after = self.runners()
        self.check_restored(before, after, victim, logged)
        back = self.restart(victim.name)
        self.wait_holds_slots(back)
        self.runners()
        self.end_exact()

    def wait_holds_slots(self, node):
        """NODE has joined the group and was given a share of the slots."""
        taken = re.compile(rf'cluster: node "{re.escape(node.name)}" takes slots \d')
        wait_for(f"{node.name} takes slots",
                 lambda: taken.search(node.log_path.read_text(errors="replace")),
                 timeout=WAIT_S * 2)

    def wait_sees_nodes(self, node, names):
        """NODE has read that each node of NAMES (and no other) holds slots."""
        seen = re.compile(rf'cluster: node "{re.escape(node.name)}" sees slots held by nodes '
                          r'([^\n]*)')

        def sees_all():
            lines = seen.findall(node.log_path.read_text(errors="replace"))
            return lines and set(lines[-1].strip().split(", ")) == set(names)
        wait_for(f"{node.name} sees the slots of nodes {', '.join(names)}", sees_all,
                 timeout=WAIT_S * 2)

    def end_exact(self, nodes=3):
        """Stops the input; the results end exact; NODES nodes are alive, each
        flow runs on one of them and the results stay exact; every node stops
        cleanly on SIGTERM."""
        self.stop_input()
        self.check_exact()
        assert len(self.alive()) == nodes
        self.runners()
        self.check_exact()
        self.stop_all()

    def stop_all(self):
        for n in self.alive():
            code = n.stop()
            assert code == 0, f"node {n.name} exit code on SIGTERM: {code}\n{n.log_tail()}"

    # -- input and output ----------------------------------------------------
    def start_input(self):
        self.input = Input(self.broker, self.topic)

    def wait_output(self):
        wait_for("cnt writes counts", lambda: self.broker.consume_to_end(self.topic["counts"],
                                                                         timeout=3))

    def stop_input(self):
        self.input.stop()

    def close(self):
        if self.input is not None:
            self.input.halt()

    def output(self):
        """What a read_committed consumer sees: each key's counts, each (window,
        key)'s counts, the join's pairs, in order."""
        def rows(t):
            return [json.loads(m.value())
                    for m in self.broker.consume_to_end(self.topic[t], timeout=10)]
        counts, windows = defaultdict(list), defaultdict(list)
        for r in rows("counts"):
            counts[r["k"]].append(r["n"])
        for r in rows("windows"):
            windows[(r["ws"][:19].replace("T", " "), r["k"])].append(r["n"])
        pairs = [(r["oid"], r["pid"]) for r in rows("pairs")]
        return counts, windows, pairs

    def diagnosis(self):
        out = []
        for name, n in sorted(self.nodes.items()):
            if n.proc.poll() is None:
                try:
                    out.append(f"SHOW FLOWS on {name}: {flows(n)}")
                except psycopg.Error as e:
                    out.append(f"SHOW FLOWS on {name}: {e}")
            out.append(f"--- {n.log_path}:\n{n.log_tail(20)}")
        return "\n".join(out)

    def check_exact(self, timeout=CONVERGE_S):
        """Waits until the output holds the truth of what was written: the
        highest count of each key and of each (window, key) equals the true
        count, and every count below it was written too (each record's update
        reached the sink: 1, 2, ..., n, at least once); the join's pairs are
        the true ones. With exactly-once, every count and every pair is seen
        once. What can never heal fails at once: a count above the truth (a
        record counted twice), a pair that is not one, and with exactly-once a
        count or a pair seen twice."""
        true_counts, true_windows, true_pairs = self.input.truth()
        deadline = time.monotonic() + timeout
        while True:
            counts, windows, pairs = self.output()
            for what, got, truth in (("count", counts, true_counts),
                                     ("window count", windows, true_windows)):
                over = {k: (max(v), truth.get(k)) for k, v in got.items()
                        if max(v) > truth.get(k, 0)}
                assert not over, (f"{what}s above the truth (counted twice): "
                                  f"{sorted(over.items())[:5]}\n{self.diagnosis()}")
                if self.exactly_once:
                    twice = {k: sorted(n for n, times in Counter(v).items() if times > 1)
                             for k, v in got.items() if len(v) != len(set(v))}
                    assert not twice, (f"a read_committed consumer saw {what}s twice, for "
                                       f"{len(twice)} keys (key: values seen twice): "
                                       f"{sorted(twice.items())[:5]}\n{self.diagnosis()}")
            wrong = set(pairs) - true_pairs
            assert not wrong, f"join pairs that are not: {sorted(wrong)[:5]}\n{self.diagnosis()}"
            if self.exactly_once:
                twice = sorted(p for p, n in Counter(pairs).items() if n > 1)
                assert not twice, f"join pairs seen twice: {twice[:5]}\n{self.diagnosis()}"
            # Per key: (values missing below the truth, the truth), for the
            # keys whose values are not every one of 1..n.
            gaps = {k: (sorted(set(range(1, truth.get(k, 0) + 1)) - set(v)), truth.get(k))
                    for got, truth in ((counts, true_counts), (windows, true_windows))
                    for k, v in got.items() if set(v) != set(range(1, truth.get(k, 0) + 1))}
            gaps.update({k: (list(range(1, n + 1)), n) for got, truth in
                         ((counts, true_counts), (windows, true_windows))
                         for k, n in truth.items() if k not in got})
            if not gaps and set(pairs) == true_pairs:
                return
            if time.monotonic() > deadline:
                missing = sorted(true_pairs - set(pairs))
                raise AssertionError(
                    f"the flows did not reach the truth within {timeout} s: {len(gaps)} of "
                    f"{len(true_counts)} keys and {len(true_windows)} (window, key)s lack "
                    f"counts (key: (counts never written, true count)) "
                    f"{[(k, (m[:8], n)) for k, (m, n) in sorted(gaps.items(), key=str)[:6]]}; "
                    f"{len(missing)} of "
                    f"{len(true_pairs)} pairs missing {missing[:5]}\n{self.diagnosis()}")
            time.sleep(1)


@pytest.fixture
def flows_cluster(broker, start_node):
    """flows_cluster(PREFIX, DELIVERY='at-least-once') sets up a FlowsCluster on
    BROKER; its producer is stopped when the test ends, passed or not (before
    start_node kills the nodes). Apache Kafka only: on the embedded broker of
    another rtsqld each internal topic's creation waits out a 5 s refusal, which
    would make these tests several times longer; failover on it is tested by
    test_cluster_restart.py."""
    if broker.name == "embedded":
        pytest.skip("Apache Kafka only (RTSQL_KAFKA_BOOTSTRAP); test_cluster_restart.py "
                    "covers failover on the embedded broker")
    made = []

    def make(prefix, delivery="at-least-once", names="abc", standbys=0, shards=0, partitions=0):
        made.append(FlowsCluster(broker, start_node, prefix, delivery, names, standbys, shards,
                                 partitions))
        return made[-1]

    yield make
    for c in made:
        c.close()
