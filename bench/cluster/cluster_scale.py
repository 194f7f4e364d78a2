#!/usr/bin/python3
"""Throughput and latency of a cluster of rtsqld on 1, 2 and 3 nodes
(docs/operations.md, "Running a cluster"; docs/benchmarks.md, "Cluster scale").

    bench/cluster/cluster_scale.py [--nodes "1 2 3"] [--rounds 3] [--rate 1000]
                           [--seconds 20] [--warmup 3] [--p99-ms 100]
                           [--start-rate 4000] [--max-rate 64000] [--max-steps 5]
                           [--step-seconds 3] [--step-warmup 1] [--partitions 16]
                           [--node-core 1] [--client-core 0]
                           [--bootstrap 127.0.0.1:29700] [--results FILE] [--watermark]

The scenarios `stateless` and `groupby` of bench/scenarios/scenario.sh (the same
queries over the same 200-byte JSON records of 1,000 users, produced and read
back by rtsql_latency), on Apache Kafka at --bootstrap (scripts/kafka.sh;
RTSQL_BIN_DIR names the build, RTSQL_LATENCY the collector). Every source
topic has --partitions partitions (16: one per slot of the cluster), so the
stateless flow, one stage over one multi-partition source at least once, is
spread over the nodes (each reads the partitions of the slots it holds);
the GROUP BY flow runs whole on one node whatever the node count. On 2 nodes
or more, `groupby-sharded` is the same GROUP BY with `'shards'` = the node
count: that many copies, each reading its share of the partitions and
keeping its share of the users, the rows crossing to their user's copy
through the flow's exchange topic, or in process to the copy's own stateful
stage (docs/operations.md, "Sharded stateful flows").

For each round (--rounds) and each node count (--nodes, in that order, so
the counts interleave: 1, 2, 3, 1, 2, 3), a new cluster (a fresh name, so no
internal topic is shared with another run) of that many nodes is started,
and the benchmark waits (bounded) until every node holds slots. Then, each
on fresh topics and a fresh flow deployed through the first node, and each
only once the flow runs where it should (stateless: its partitions read on
every node, as SHOW FLOWS on each says; groupby: on one node, remote on the
others):
- the broker's floor at --rate (rtsql_latency --floor on a topic of the same
  partitions: produce to consume, no flow), the baseline of that cluster's
  figures;
- each scenario at --rate for --seconds after --warmup;
- each scenario's highest rate whose end-to-end P99 stays under --p99-ms with
  nothing lost: doubling from --start-rate until a step fails, then
  bisection to within 10%, at most --max-steps steps of --step-seconds after
  --step-warmup (as bench/scenarios/scenario.sh --find-max does); --max-steps 0: none.
Once per round, before the clusters, the same search on the floor alone (up
to --max-rate): what the broker and the collector sustain without rtsql.
Before the first round, one floor run of 10 s at --rate, not reported, warms
the broker up.

With --watermark, the source also declares the records' event time `ts`
with a watermark (`ts - INTERVAL '1' SECOND`), which no query uses: what a
watermark costs, above all a sharded flow's, whose fronts send it on to
every other copy as markers in the exchange topic.

Fairness: every rtsqld of every run is pinned to the one core --node-core
(taskset), the collector and this script to --client-core, so 1, 2 and 3
nodes share the same CPU and the ratio shows what spreading costs, not added
hardware. The nodes also share this script's session, so where the kernel
groups scheduling by session (autogroups) they are one group against other
work on their core, not one group each. Kafka is not pinned (it runs on both
cores).

It prints one JSON line per measurement (stdout), then a summary table.
Fields of a line:
- round, nodes, scenario (`stateless`, `groupby`, or `floor`), kind (`fixed`:
  at --rate; `step`: a step of the search, with `step`), rate (records/s);
- p50_ms, p99_ms, max_ms: end-to-end latency (send to receipt by the
  collector, the records of the measured window), from rtsql_latency;
- sent, expected, received, lost, duplicates: the collector's counts;
- pass (steps): P99 under --p99-ms, nothing lost, something received;
- cpu_s, cpu_pct, us_per_record: CPU time (user + system, /proc/PID/stat) of
  all the run's rtsqld together over the measured window, as seconds, % of
  one core, and microseconds per input record;
- core_busy_pct: how busy --node-core was over the window (/proc/stat), all
  processes: above cpu_pct is what others (Kafka, other work) took of it;
- rss_peak_mib: each node's peak resident set (VmHWM, reset before the run);
- placement: where the flow ran before the run ({node: partitions read, or
  null for the whole flow}; sharded: {copy: node}); moved: whether that
  changed by the run's end;
- load: the load average before and after.
A line `{"search": ...}` closes each search: best (highest passing rate),
worst (lowest failing one, null if none failed). A line `{"cluster": ...}`
gives each cluster's start (seconds until every node held slots) and, at its
end, each node's exit code and the count of its log lines that report a
failure. The run directory (node logs and data) is kept under
/tmp/cluster_scale_*; its path is printed at the start.

Every wait is bounded; the nodes are stopped on the way out (also on Ctrl-C),
and everything listens on 127.0.0.1 only.
"""

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

import psycopg
from confluent_kafka.admin import AdminClient, NewTopic

BIN = os.environ.get("RTSQL_BIN_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
RTSQLD = os.path.join(BIN, "server", "rtsqld")
LATENCY = os.environ.get("RTSQL_LATENCY", os.path.join(BIN, "bench", "rtsql_latency"))
SIZE = 200
KEYS = 1000
CLK_TCK = os.sysconf("SC_CLK_TCK")

# bench/scenarios/scenario.sh's queries, over the source {src}.
QUERIES = {
    "stateless": "SELECT ts_us, user_id, upper(url) AS url, amount * 2 AS doubled "
                 "FROM {src} WHERE amount > 10",
    "groupby": "SELECT user_id, count(*) AS n, max(ts_us) AS ts_us FROM {src} GROUP BY user_id",
    "groupby-sharded": "SELECT user_id, count(*) AS n, max(ts_us) AS ts_us FROM {src} "
                       "GROUP BY user_id",
}


def scenarios(nodes):
    """The scenarios run on NODES nodes: a sharded flow needs two at least."""
    return [sc for sc in QUERIES if nodes > 1 or not sc.endswith("-sharded")]
COLUMNS = ("ts_us BIGINT, seq BIGINT, user_id STRING, url STRING, amount DOUBLE, "
           "merchant_id BIGINT, pad STRING")

CHILDREN = []  # processes to stop on the way out


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def emit(obj, results):
    line = json.dumps(obj)
    print(line, flush=True)
    if results:
        with open(results, "a") as f:
            f.write(line + "\n")


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, check, timeout):
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
    raise RuntimeError(f"{what}: not within {timeout} s (last: {last!r})")


def cpu_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return 0


def core_ticks(core):
    """(busy, total) clock ticks of CPU CORE so far, from /proc/stat."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith(f"cpu{core} "):
                v = [int(x) for x in line.split()[1:]]
                return sum(v) - v[3] - v[4], sum(v)
    return 0, 0


class Node:
    def __init__(self, home, cluster, bootstrap, name, core):
        self.name = name
        self.port = free_port()
        os.makedirs(home, exist_ok=True)
        self.log_path = os.path.join(home, f"rtsqld.{name}.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            ["taskset", "-c", str(core), RTSQLD, "--host", "127.0.0.1", "--port", str(self.port),
             "--data-dir", os.path.join(home, "data"), "--cluster", cluster, "--kafka", bootstrap,
             "--node-name", name],
            # A process group of its own (no terminal's Ctrl-C), but this
            # script's session: with the kernel's autogroups every session is
            # one scheduling group, so the nodes of a run share one group's
            # part of their core against other work, whatever their number.
            stdout=self.log, stderr=subprocess.STDOUT, process_group=0)
        CHILDREN.append(self.proc)

    def wait_ready(self):
        def answers():
            if self.proc.poll() is not None:
                raise RuntimeError(f"node {self.name} exited ({self.proc.returncode}); "
                                   f"see {self.log_path}")
            return self.query("SELECT 1")
        wait_for(f"node {self.name} answers", answers, 60)

    def query(self, sql):
        with psycopg.connect(host="127.0.0.1", port=self.port, dbname="rtsql", user="rtsql",
                             autocommit=True, connect_timeout=10) as c:
            cur = c.execute(sql)
            return cur.fetchall() if cur.description else True

    def run(self, sql, attempts=50):
        """SQL, again while it fails with 40001 (another node's change not applied here yet)."""
        for _ in range(attempts):
            try:
                return self.query(sql)
            except psycopg.Error as e:
                if e.sqlstate != "40001":
                    raise
                time.sleep(0.2)
        raise RuntimeError(f"{sql}: 40001 {attempts} times")

    def flows(self):
        return {r[0]: (r[2], r[4] or "") for r in self.query("SHOW FLOWS")}

    def slots(self):
        """The slots this node holds by its log's last word on them (None: not yet said)."""
        held = None
        with open(self.log_path, errors="replace") as f:
            for line in f:
                m = re.search(r'cluster: node "[^"]+" .*; holds (.*)$', line)
                if m:
                    held = set() if m.group(1).strip() == "none" else {
                        int(s) for s in m.group(1).split(",")}
        return held

    def sees(self):
        """The nodes this one last said it sees holding slots (None: not yet
        said). CREATE FLOW spreads a sharded flow's copies over those."""
        seen = None
        with open(self.log_path, errors="replace") as f:
            for line in f:
                m = re.search(r'cluster: node "[^"]+" sees slots held by nodes (.*)$', line)
                if m:
                    seen = set(m.group(1).strip().split(", "))
        return seen

    def reset_peak(self):
        try:
            with open(f"/proc/{self.proc.pid}/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass

    def peak_mib(self):
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return round(int(line.split()[1]) / 1024, 1)
        except OSError:
            pass
        return None

    def failure_lines(self):
        with open(self.log_path, errors="replace") as f:
            return [line.rstrip() for line in f
                    if re.search(r"\b(error|failed|fails|cannot|fenced|exception)\b", line, re.I)]

    def stop(self):
        """SIGTERM, then SIGKILL after 15 s; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(timeout=15)


def copies_placement(flow, shards, nodes):
    """Where each copy of sharded FLOW runs over NODES when settled: {copy:
    node}; None while one of them runs nowhere or on two nodes."""
    listed = {n.name: n.flows() for n in nodes}
    out = {}
    for i in range(shards):
        copy = flow + (f"#{i}" if i else "")
        states = {name: flows.get(copy, ("", ""))[0] for name, flows in listed.items()}
        running = [name for name, st in states.items() if st == "running"]
        if len(running) != 1 or any(st not in ("running", "remote") for st in states.values()):
            return None
        out[copy] = running[0]
    return out


def placement(flow, nodes):
    """Where FLOW runs over NODES when settled: {node: sorted partitions it
    reads} for a spread flow, {node: None} for a flow run whole on one node;
    None while unsettled (as tests/e2e/cluster.py's placement())."""
    states = {n.name: n.flows().get(flow, ("", "")) for n in nodes}
    running = {name: why for name, (st, why) in states.items() if st == "running"}
    idle = [why for name, (st, why) in states.items() if st != "running"]
    if not running or any(st not in ("running", "remote") for st, _ in states.values()):
        return None
    shares, total = {}, None
    for name, why in running.items():
        m = re.match(r"reads partitions ([0-9, ]+) of (\d+) here", why)
        if not m:
            whole = len(running) == 1 and all(f"node {name}" in w for w in idle)
            return {name: None} if whole else None
        if total not in (None, int(m.group(2))):
            return None
        total = int(m.group(2))
        shares[name] = sorted(int(p) for p in m.group(1).split(","))
    if sorted(p for ps in shares.values() for p in ps) != list(range(total)):
        return None
    return shares


class Bench:
    def __init__(self, args, home):
        self.a = args
        self.home = home
        self.admin = AdminClient({"bootstrap.servers": args.bootstrap})
        self.seq = 0

    def topics(self, tag, partitions):
        names = [f"{tag}_{i}" for i in range(len(partitions))]
        for f in self.admin.create_topics(
                [NewTopic(t, p, 1) for t, p in zip(names, partitions)]).values():
            f.result(timeout=30)

        # A created topic may not be in the broker's metadata answers at once
        # (a loaded machine): a CREATE SOURCE over it would fail (42704).
        def known():
            md = self.admin.list_topics(timeout=10).topics
            return all(t in md and len(md[t].partitions) == p for t, p in zip(names, partitions))
        wait_for(f"topics {names} in the broker's metadata", known, 30)
        return names

    def drop_topics(self, names):
        try:
            self.admin.delete_topics(names, operation_timeout=30)
        except Exception as e:  # noqa: BLE001 (hygiene only)
            log(f"deleting {names}: {e}")

    def collect(self, rate, seconds, warmup, drain, topic_in, topic_out=None, nodes=()):
        """One rtsql_latency run (the flow's, or the floor's without TOPIC_OUT)
        on the client core, with the nodes' CPU and the node core's load over
        the measured window and each node's peak RSS."""
        cmd = ["taskset", "-c", str(self.a.client_core), LATENCY, "--bootstrap", self.a.bootstrap,
               "--in", topic_in, "--rate", str(rate), "--seconds", str(seconds), "--warmup",
               str(warmup), "--drain", str(drain), "--size", str(SIZE), "--keys", str(KEYS),
               "--json"]
        cmd += ["--floor"] if topic_out is None else ["--out", topic_out]
        for n in nodes:
            n.reset_peak()
        before = load()
        out_path = os.path.join(self.home, "collector.out")
        with open(out_path, "w") as out:
            p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, process_group=0)
            CHILDREN.append(p)
            t0 = time.monotonic()
            # The measured window: after the warm-up, for SECONDS (the
            # collector's warm-up starts with its first record, at most a few
            # tenths of a second after its start).
            time.sleep(warmup)
            c0, k0, w0 = sum(cpu_ticks(n.proc.pid) for n in nodes), core_ticks(
                self.a.node_core), time.monotonic()
            time.sleep(seconds)
            c1, k1, w1 = sum(cpu_ticks(n.proc.pid) for n in nodes), core_ticks(
                self.a.node_core), time.monotonic()
            try:
                p.wait(timeout=warmup + seconds + drain + 60 - (time.monotonic() - t0))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
            CHILDREN.remove(p)
        text = open(out_path).read()
        got = {}
        for line in text.splitlines():
            if line.startswith("{"):
                got = json.loads(line)
        if not got:
            log(f"rtsql_latency gave no result (exit {p.returncode}): {text[-500:]}")
        lat = got.get("latencyMs", {})
        wall = w1 - w0
        cpu = (c1 - c0) / CLK_TCK
        r = {"rate": rate,
             "p50_ms": lat.get("P50"), "p99_ms": lat.get("P99"), "max_ms": lat.get("max"),
             **{k: got.get(k) for k in ("sent", "expected", "received", "lost", "duplicates")},
             "load": [before, load()]}
        if nodes:
            r.update({
                "cpu_s": round(cpu, 3), "cpu_pct": round(100 * cpu / wall, 1),
                "us_per_record": round(1e6 * cpu / (rate * wall), 1),
                "core_busy_pct": round(100 * (k1[0] - k0[0]) / max(1, k1[1] - k0[1]), 1),
                "rss_peak_mib": {n.name: n.peak_mib() for n in nodes}})
        return r

    def passes(self, r):
        return bool(r.get("received") and r.get("lost") == 0 and r.get("p99_ms") is not None
                    and r["p99_ms"] < self.a.p99_ms)

    def floor(self, rate, seconds, warmup, drain):
        self.seq += 1
        (t,) = self.topics(f"cs_floor_{uuid.uuid4().hex[:8]}", [self.a.partitions])
        try:
            return self.collect(rate, seconds, warmup, drain, t)
        finally:
            self.drop_topics([t])

    def flow(self, nodes, scenario, rate, seconds, warmup, drain):
        """Deploys SCENARIO's flow on fresh topics through the first node,
        waits until it runs where it should, measures it, drops it."""
        tag = f"{scenario[:2]}{uuid.uuid4().hex[:8]}"
        sharded = scenario.endswith("-sharded")
        t_in, t_out = self.topics(f"cs_{tag}", [self.a.partitions, 1])
        opts = f"connector = 'kafka', 'kafka.bootstrap.servers' = '{self.a.bootstrap}'"
        first = nodes[0]
        flow = f"f_{tag}"
        try:
            columns = COLUMNS
            if self.a.watermark:
                # The records' event time `ts` (bench/scenarios/latency.cpp), with a
                # watermark: every front task then sends it on as it advances.
                columns += ", ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND"
            first.run(f"CREATE SOURCE s_{tag} ({columns}) WITH ({opts}, subscribe = '{t_in}', "
                      "startingOffsets = 'earliest', format = 'json')")
            first.run(f"CREATE SINK o_{tag} WITH ({opts}, topic = '{t_out}', format = 'json')")
            options = f" WITH ('shards' = '{len(nodes)}')" if sharded else ""
            first.run(f"CREATE FLOW {flow} INTO o_{tag} TRIGGER REALTIME{options} AS "
                      + QUERIES[scenario].format(src=f"s_{tag}"))

            def settled():
                if sharded:
                    return copies_placement(flow, len(nodes), nodes)
                p = placement(flow, nodes)
                if p and scenario == "stateless" and len(p) != len(nodes):
                    return None
                return p
            where = wait_for(f"{flow} placed on {len(nodes)} node(s)", settled, 60)
            r = self.collect(rate, seconds, warmup, drain, t_in, t_out, nodes)
            try:
                after = copies_placement(flow, len(nodes), nodes) if sharded else placement(
                    flow, nodes)
            except psycopg.Error:
                after = None
            r["placement"] = where
            r["moved"] = after != where
            return r
        finally:
            try:
                first.run(f"DROP FLOW IF EXISTS {flow}")
                wait_for(f"{flow} gone from every node",
                         lambda: all(flow not in n.flows() for n in nodes), 30)
                first.run(f"DROP SINK IF EXISTS o_{tag}")
                first.run(f"DROP SOURCE IF EXISTS s_{tag}")
            except (psycopg.Error, RuntimeError) as e:
                log(f"dropping {flow}: {e}")
            time.sleep(0.5)  # the running node stops its tasks once it read the DROP
            self.drop_topics([t_in, t_out])

    def search(self, step, start, max_rate):
        """scenario.sh --find-max's search: doubling from START until a step
        fails, then bisection until within 10%, at most --max-steps steps;
        rates rounded to 100. STEP(rate, n) returns a result dict."""
        lo, hi, rate, steps = 0, 0, start, []
        for n in range(1, self.a.max_steps + 1):
            r = step(rate, n)
            r["pass"] = self.passes(r)
            steps.append(r)
            if r["pass"]:
                lo = rate
            else:
                hi = rate
            if hi == 0:
                if rate >= max_rate:
                    break
                rate = min(rate * 2, max_rate)
            elif lo == 0:
                rate = rate // 2 // 100 * 100
                if rate < 100:
                    break
            else:
                if hi - lo <= lo // 10:
                    break
                nxt = (lo + hi) // 2 // 100 * 100
                if not lo < nxt < hi:
                    break
                rate = nxt
        return steps, (lo or None), (hi or None)


def start_cluster(bench, n, rnd, args):
    cluster = "cs" + uuid.uuid4().hex[:10]
    home = os.path.join(bench.home, f"r{rnd}_n{n}_{cluster}")
    nodes = []
    t0 = time.monotonic()
    for i in range(1, n + 1):
        nodes.append(Node(os.path.join(home, f"n{i}"), cluster, args.bootstrap, f"n{i}",
                          args.node_core))
    for node in nodes:
        node.wait_ready()

    def joined():
        held = [node.slots() for node in nodes]
        if any(not h for h in held):
            return None
        union = set().union(*held)
        return len(union) == sum(len(h) for h in held) == 16 and held
    held = wait_for(f"every node of {cluster} holds slots", joined, 90)
    # The node the flows are made on knows every node's slots.
    wait_for(f"{nodes[0].name} sees every node's slots",
             lambda: nodes[0].sees() == {node.name for node in nodes}, 60)
    return cluster, home, nodes, round(time.monotonic() - t0, 1), held


def fmt(v, digits=2):
    return "n/a" if v is None else f"{v:,.{digits}f}"


def summary(rows, args):
    def pick(**kw):
        return [r for r in rows if all(r.get(k) == v for k, v in kw.items())]

    print()
    print(f"Summary: e2e latency at {args.rate:,} rec/s ({args.seconds} s after {args.warmup} s "
          f"warm-up), P50 / P99 ms, one value per round; floor: the broker alone in the same "
          f"round; cpu: all nodes' CPU per input record; rss: each node's peak")
    hdr = ("scenario", "nodes", "P50 / P99", "floor P50 / P99", "lost", "cpu us/rec",
           "node core busy %", "peak rss MiB", f"max rate, P99 < {args.p99_ms:g} ms",
           "floor max rate")
    print(" | ".join(hdr))
    print(" | ".join("-" * len(h) for h in hdr))
    for sc in QUERIES:
        for n in (n for n in args.nodes if sc in scenarios(n)):
            fixed = pick(scenario=sc, nodes=n, kind="fixed")
            floors = {r["round"]: r for r in pick(scenario="floor", nodes=n, kind="fixed")}
            maxes = pick(search=sc, nodes=n)
            fmaxes = {r["round"]: r for r in pick(search="floor")}
            lat = ", ".join(f"{fmt(r['p50_ms'])} / {fmt(r['p99_ms'])}" for r in fixed)
            fl = ", ".join(f"{fmt(floors[r['round']]['p50_ms'])} / "
                           f"{fmt(floors[r['round']]['p99_ms'])}"
                           for r in fixed if r["round"] in floors)
            lost = ", ".join(str(r.get("lost")) for r in fixed)
            cpu = ", ".join(fmt(r.get("us_per_record"), 1) for r in fixed)
            busy = ", ".join(fmt(r.get("core_busy_pct"), 0) for r in fixed)
            rss = ", ".join("/".join(fmt(v, 0) for v in (r.get("rss_peak_mib") or {}).values())
                            for r in fixed)
            mx = "-" if not maxes else ", ".join(f"{r['best'] or 0:,}" + (f" (<{r['worst']:,})" if r["worst"] else "")
                           for r in maxes)
            fmx = "-" if not fmaxes else ", ".join(f"{fmaxes[r['round']]['best'] or 0:,}" for r in maxes
                            if r["round"] in fmaxes)
            print(" | ".join((sc, str(n), lat, fl, lost, cpu, busy, rss, mx, fmx)))
    print()
    print("max rate: the highest passing rate of each round's search, in parentheses the lowest "
          "failing one; floor max rate: the same search on the broker alone, capped at "
          f"{args.max_rate:,}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", default="1 2 3")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--warmup", type=float, default=3)
    ap.add_argument("--p99-ms", type=float, default=100)
    ap.add_argument("--start-rate", type=int, default=4000)
    ap.add_argument("--max-rate", type=int, default=64000)
    ap.add_argument("--max-steps", type=int, default=5)
    ap.add_argument("--step-seconds", type=float, default=3)
    ap.add_argument("--step-warmup", type=float, default=1)
    ap.add_argument("--partitions", type=int, default=16)
    ap.add_argument("--node-core", type=int, default=1)
    ap.add_argument("--client-core", type=int, default=0)
    ap.add_argument("--bootstrap", default="127.0.0.1:29700")
    ap.add_argument("--results", help="also append the JSON lines to this file")
    ap.add_argument("--watermark", action="store_true",
                    help="declare the records' event time `ts` with a watermark on the source "
                         "(the queries do not use it; a sharded flow's fronts send it on)")
    args = ap.parse_args()
    args.nodes = [int(x) for x in args.nodes.split()]
    host = args.bootstrap.rsplit(":", 1)[0]
    if host not in ("127.0.0.1", "localhost", "::1", "[::1]"):
        raise SystemExit("cluster_scale.py: --bootstrap must be a loopback address")
    for b in (RTSQLD, LATENCY):
        if not os.access(b, os.X_OK):
            raise SystemExit(f"cluster_scale.py: {b} is not built (RTSQL_BIN_DIR={BIN})")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started in the background
    # This script (psycopg, the admin client) on the collector's core.
    os.sched_setaffinity(0, {args.client_core})

    home = tempfile.mkdtemp(prefix="cluster_scale_", dir="/tmp")
    bench = Bench(args, home)
    t_start = time.monotonic()
    load_start = load()
    log(f"run directory {home}; load average {load_start}; nodes on core {args.node_core}, "
        f"collector on core {args.client_core}; Kafka at {args.bootstrap}")
    rows = []

    def out(obj):
        rows.append(obj)
        emit(obj, args.results)

    nodes = []
    try:
        # The broker's first seconds of work (a JVM warming up) are nobody's figure.
        log("priming the broker: a floor run, not reported")
        bench.floor(args.rate, 10, 2, 3)
        for rnd in range(1, args.rounds + 1):
            if args.max_steps > 0:
                log(f"round {rnd}: floor search")
                steps, best, worst = bench.search(
                    lambda rate, n: bench.floor(rate, args.step_seconds, args.step_warmup, 3),
                    args.start_rate, args.max_rate)
                for i, r in enumerate(steps, 1):
                    out({"round": rnd, "nodes": 0, "scenario": "floor", "kind": "step", "step": i,
                         **r})
                out({"round": rnd, "nodes": 0, "search": "floor", "best": best, "worst": worst})
            for n in args.nodes:
                cluster, chome, nodes, start_s, held = start_cluster(bench, n, rnd, args)
                log(f"round {rnd}, {n} node(s): cluster {cluster} ready in {start_s} s "
                    f"(slots {[sorted(h) for h in held]})")
                out({"cluster": cluster, "round": rnd, "nodes": n, "start_s": start_s,
                     "dir": chome})
                base = {"round": rnd, "nodes": n}
                log(f"round {rnd}, {n} node(s): floor at {args.rate}")
                out({**base, "scenario": "floor", "kind": "fixed",
                     **bench.floor(args.rate, args.seconds, args.warmup, 5)})
                for sc in scenarios(n):
                    log(f"round {rnd}, {n} node(s): {sc} at {args.rate}")
                    r = bench.flow(nodes, sc, args.rate, args.seconds, args.warmup, 5)
                    out({**base, "scenario": sc, "kind": "fixed", **r})
                for sc in scenarios(n) if args.max_steps > 0 else ():
                    log(f"round {rnd}, {n} node(s): {sc} search")

                    def step(rate, i, sc=sc):
                        r = bench.flow(nodes, sc, rate, args.step_seconds, args.step_warmup, 3)
                        log(f"  step {i}: {rate} rec/s P99 {fmt(r['p99_ms'])} ms, lost {r['lost']}")
                        return r
                    steps, best, worst = bench.search(step, args.start_rate, args.max_rate)
                    for i, r in enumerate(steps, 1):
                        out({**base, "scenario": sc, "kind": "step", "step": i, **r})
                    out({**base, "search": sc, "best": best, "worst": worst})
                codes = {node.name: node.stop() for node in nodes}
                fails = {node.name: len(node.failure_lines()) for node in nodes}
                out({"cluster": cluster, "round": rnd, "nodes": n, "exit": codes,
                     "log_failure_lines": fails})
                for node in nodes:
                    for line in node.failure_lines()[:5]:
                        log(f"  {node.name}: {line}")
                nodes = []
    finally:
        for node in nodes:
            node.stop()
        for p in list(CHILDREN):
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
        log(f"load average at the start {load_start}, at the end {load()}; "
            f"{(time.monotonic() - t_start) / 60:.1f} min; run directory {home}")
    summary(rows, args)


if __name__ == "__main__":
    sys.exit(main())
