#!/usr/bin/python3
"""Latency a hop between two cluster nodes through Kafka adds: two chained
flows on one node and on two nodes, against one flow and the broker's floor
(docs/operations.md, "Running a cluster"; docs/benchmarks.md, "Cluster hop").

    bench/cluster/cluster_hop.py [--rounds 2] [--rate 1000] [--seconds 15] [--warmup 3]
                         [--tries 8] [--node-core 1] [--client-core 0]
                         [--bootstrap 127.0.0.1:29700] [--results FILE]

A stateful flow is not spread over the nodes yet; spreading it would put a
repartition topic between nodes: one produce and one consume through Kafka.
This measures what such a hop costs, on Apache Kafka at --bootstrap
(scripts/kafka.sh; RTSQL_BIN_DIR names the build, RTSQL_LATENCY the
collector), with the 200-byte JSON records of 1,000 users of bench/scenarios/scenario.sh
sent to a topic IN and read back from a topic OUT by rtsql_latency (latency
from the ts_us each record carries through), every topic of one partition (so
no flow is spread: each runs whole on the node that holds its slot):
- `direct`: the `stateless` scenario's flow, IN to OUT, on a 1-node cluster;
- `chain_same`: flow A, IN to an intermediate topic MID (every column kept,
  a sink keyed by user_id), and flow B, MID to OUT (the stateless query),
  both on that 1-node cluster;
- `chain_cross`: the same two flows on a 2-node cluster, A on one node and B
  on the other. A flow's node is the holder of its slot (a hash of its
  name): B is created, and when SHOW FLOWS on every node shows it on A's
  node it is dropped and created again under another name, at most --tries
  times; the run is skipped (a line with `skipped`) when none landed apart;
- `floor`: rtsql_latency --floor on a topic of one partition (produce to
  consume, no flow), the broker's own latency in the same round.
Each at --rate for --seconds after --warmup, on fresh topics and fresh
flows, only once every flow runs where it should (`running` on its node,
`remote` naming that node on the other). For each round (--rounds) the four
come in that order (direct, chain_same, chain_cross, floor, then again);
each round starts a fresh 1-node cluster (direct and chain_same) and a fresh
2-node one (chain_cross), each under a fresh name and stopped before the
next starts. Before the first round, one floor run of 10 s at --rate, not
reported, warms the broker up.

Every rtsqld is pinned to the one core --node-core (taskset), the collector
and this script to --client-core, as bench/cluster/cluster_scale.py does, so one
and two nodes share the same CPU. Kafka is not pinned.

It prints one JSON line per measurement (stdout), then a summary table.
Fields of a line:
- round, scenario (`direct`, `chain_same`, `chain_cross`, `floor`), rate;
- p50_ms, p99_ms, max_ms: end-to-end latency (send to receipt by the
  collector, the records of the measured window), from rtsql_latency;
- sent, expected, received, lost, duplicates: the collector's counts;
- cpu_s, cpu_pct, us_per_record, core_busy_pct, rss_peak_mib: as in
  bench/cluster/cluster_scale.py (all the cluster's rtsqld over the window);
- flows: {flow: node that runs it} before the run; explain: each flow's
  placement lines of EXPLAIN FLOW on the first node; moved: whether a flow's
  node changed by the run's end; tries: the names B took to land apart;
- load: the load average before and after.
A line `{"cluster": ...}` gives each cluster's start and, at its end, each
node's exit code and the count of its log lines that report a failure. The
summary gives per round hop = chain - direct (P50 and P99), same node and
across nodes, beside the floor. The run directory (node logs and data) is
kept under /tmp/cluster_hop_*; its path is printed at the start.

Every wait is bounded; the nodes are stopped on the way out (also on Ctrl-C),
and everything listens on 127.0.0.1 only.
"""

import argparse
import os
import signal
import sys
import tempfile
import time
import uuid

import psycopg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_scale as cs  # noqa: E402  (its nodes, waits and collector)

STATELESS = cs.QUERIES["stateless"]
PASS = "SELECT ts_us, seq, user_id, url, amount, merchant_id, pad FROM {src}"
SCENARIOS = ("direct", "chain_same", "chain_cross", "floor")


def where(flow, nodes):
    """The node that runs FLOW whole, once settled (running there, remote
    naming it everywhere else); None before."""
    p = cs.placement(flow, nodes)
    if not p or len(p) != 1:
        return None
    return next(iter(p))


def explain(node, flow):
    rows = node.query(f"EXPLAIN FLOW {flow}")
    lines = [str(r[0]) for r in rows]
    for i, line in enumerate(lines):
        if line.startswith("Placement"):
            return " / ".join(x.strip() for x in lines[i:])
    return None


class Hop(cs.Bench):
    def chain(self, nodes, scenario):
        """Deploys SCENARIO's flows (one, or two chained) on fresh topics
        through the first node, waits until they run where they should,
        measures, drops them."""
        a = self.a
        tag = uuid.uuid4().hex[:8]
        two = scenario != "direct"
        t_in, t_mid, t_out = self.topics(f"ch_{tag}", [1, 1, 1])
        opts = f"connector = 'kafka', 'kafka.bootstrap.servers' = '{a.bootstrap}'"
        first = nodes[0]
        made = []  # (kind, name) to drop, newest last
        flows = {}
        r = {}
        try:
            def source(name, topic):
                first.run(f"CREATE SOURCE {name} ({cs.COLUMNS}) WITH ({opts}, subscribe = "
                          f"'{topic}', startingOffsets = 'earliest', format = 'json')")
                made.append(("SOURCE", name))

            def sink(name, topic, key=""):
                first.run(f"CREATE SINK {name} WITH ({opts}, topic = '{topic}', format = 'json'"
                          + (f", key = '{key}')" if key else ")"))
                made.append(("SINK", name))

            def flow(name, sink_name, query):
                first.run(f"CREATE FLOW {name} INTO {sink_name} TRIGGER REALTIME AS {query}")
                made.append(("FLOW", name))
                return cs.wait_for(f"{name} placed", lambda: where(name, nodes), 60)

            source(f"s_in_{tag}", t_in)
            sink(f"o_out_{tag}", t_out)
            if not two:
                name = f"fd_{tag}"
                flows[name] = flow(name, f"o_out_{tag}", STATELESS.format(src=f"s_in_{tag}"))
            else:
                sink(f"o_mid_{tag}", t_mid, "user_id")
                source(f"s_mid_{tag}", t_mid)
                fa = f"fa_{tag}"
                flows[fa] = flow(fa, f"o_mid_{tag}", PASS.format(src=f"s_in_{tag}"))
                tries = 0
                for k in range(1, a.tries + 1):
                    tries = k
                    fb = f"fb{k}_{tag}"
                    node_b = flow(fb, f"o_out_{tag}", STATELESS.format(src=f"s_mid_{tag}"))
                    if scenario == "chain_same" or node_b != flows[fa]:
                        flows[fb] = node_b
                        break
                    cs.log(f"  {fb} landed on {node_b} with {fa}: dropped, another name")
                    self.drop_flow(first, nodes, fb)
                    made.remove(("FLOW", fb))
                else:
                    cs.log(f"  no name of B landed apart from A in {a.tries} tries: skipped")
                    return {"skipped": True, "tries": tries, "flows": flows}
                r["tries"] = tries
            expl = {f: explain(first, f) for f in flows}
            r.update(self.collect(a.rate, a.seconds, a.warmup, 5, t_in, t_out, nodes))
            try:
                after = {f: where(f, nodes) for f in flows}
            except psycopg.Error:
                after = None
            r.update({"flows": flows, "explain": expl, "moved": after != flows})
            return r
        finally:
            for kind, name in reversed(made):
                try:
                    if kind == "FLOW":
                        self.drop_flow(first, nodes, name)
                    else:
                        first.run(f"DROP {kind} IF EXISTS {name}")
                except (psycopg.Error, RuntimeError) as e:
                    cs.log(f"dropping {kind} {name}: {e}")
            time.sleep(0.5)
            self.drop_topics([t_in, t_mid, t_out])

    def drop_flow(self, first, nodes, name):
        first.run(f"DROP FLOW IF EXISTS {name}")
        cs.wait_for(f"{name} gone from every node",
                    lambda: all(name not in n.flows() for n in nodes), 30)

    def floor1(self, seconds, warmup):
        (t,) = self.topics(f"ch_floor_{uuid.uuid4().hex[:8]}", [1])
        try:
            return self.collect(self.a.rate, seconds, warmup, 5, t)
        finally:
            self.drop_topics([t])


def fmt(v):
    return "n/a" if v is None else f"{v:,.2f}"


def diff(a, b):
    return None if a is None or b is None else a - b


def summary(rows, args):
    print()
    print(f"Summary: e2e latency at {args.rate:,} rec/s ({args.seconds:g} s after {args.warmup:g} s "
          "warm-up), P50 / P99 / max ms; hop = chain - direct of the same round")
    hdr = ("round", "direct", "chain_same", "chain_cross", "floor", "hop same P50 / P99",
           "hop cross P50 / P99", "lost", "dup")
    print(" | ".join(hdr))
    print(" | ".join("-" * len(h) for h in hdr))
    for rnd in range(1, args.rounds + 1):
        got = {r["scenario"]: r for r in rows if r.get("round") == rnd and "scenario" in r}

        def cell(sc):
            r = got.get(sc, {})
            return (f"{fmt(r.get('p50_ms'))} / {fmt(r.get('p99_ms'))} / {fmt(r.get('max_ms'))}"
                    if r and not r.get("skipped") else "-")

        def hop(sc):
            d, c = got.get("direct", {}), got.get(sc, {})
            return (f"{fmt(diff(c.get('p50_ms'), d.get('p50_ms')))} / "
                    f"{fmt(diff(c.get('p99_ms'), d.get('p99_ms')))}")
        lost = ", ".join(str(got.get(sc, {}).get("lost")) for sc in SCENARIOS)
        dup = ", ".join(str(got.get(sc, {}).get("duplicates")) for sc in SCENARIOS)
        print(" | ".join((str(rnd), cell("direct"), cell("chain_same"), cell("chain_cross"),
                          cell("floor"), hop("chain_same"), hop("chain_cross"), lost, dup)))
    print()
    print("lost, dup: direct, chain_same, chain_cross, floor")


def start(bench, n, rnd, args):
    cluster = "ch" + uuid.uuid4().hex[:10]
    home = os.path.join(bench.home, f"r{rnd}_n{n}_{cluster}")
    t0 = time.monotonic()
    nodes = [cs.Node(os.path.join(home, f"n{i}"), cluster, args.bootstrap, f"n{i}",
                     args.node_core) for i in range(1, n + 1)]
    for node in nodes:
        node.wait_ready()

    def joined():
        held = [node.slots() for node in nodes]
        if any(not h for h in held):
            return None
        return len(set().union(*held)) == sum(len(h) for h in held) == 16 and held
    held = cs.wait_for(f"every node of {cluster} holds slots", joined, 90)
    return cluster, home, nodes, round(time.monotonic() - t0, 1), held


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--warmup", type=float, default=3)
    ap.add_argument("--tries", type=int, default=8)
    ap.add_argument("--node-core", type=int, default=1)
    ap.add_argument("--client-core", type=int, default=0)
    ap.add_argument("--bootstrap", default="127.0.0.1:29700")
    ap.add_argument("--results", help="also append the JSON lines to this file")
    args = ap.parse_args()
    host = args.bootstrap.rsplit(":", 1)[0]
    if host not in ("127.0.0.1", "localhost", "::1", "[::1]"):
        raise SystemExit("cluster_hop.py: --bootstrap must be a loopback address")
    for b in (cs.RTSQLD, cs.LATENCY):
        if not os.access(b, os.X_OK):
            raise SystemExit(f"cluster_hop.py: {b} is not built (RTSQL_BIN_DIR={cs.BIN})")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.sched_setaffinity(0, {args.client_core})

    home = tempfile.mkdtemp(prefix="cluster_hop_", dir="/tmp")
    bench = Hop(args, home)
    t_start = time.monotonic()
    load_start = cs.load()
    cs.log(f"run directory {home}; load average {load_start}; nodes on core {args.node_core}, "
           f"collector on core {args.client_core}; Kafka at {args.bootstrap}")
    rows = []

    def out(obj):
        rows.append(obj)
        cs.emit(obj, args.results)

    nodes = []

    def stop(cluster, rnd, n):
        nonlocal nodes
        codes = {node.name: node.stop() for node in nodes}
        fails = {node.name: len(node.failure_lines()) for node in nodes}
        out({"cluster": cluster, "round": rnd, "nodes": n, "exit": codes,
             "log_failure_lines": fails})
        for node in nodes:
            for line in node.failure_lines()[:5]:
                cs.log(f"  {node.name}: {line}")
        nodes = []

    try:
        cs.log("priming the broker: a floor run, not reported")
        bench.floor1(10, 2)
        for rnd in range(1, args.rounds + 1):
            for n, scenarios in ((1, ("direct", "chain_same")), (2, ("chain_cross",))):
                cluster, chome, nodes, start_s, held = start(bench, n, rnd, args)
                cs.log(f"round {rnd}, {n} node(s): cluster {cluster} ready in {start_s} s "
                       f"(slots {[sorted(h) for h in held]})")
                out({"cluster": cluster, "round": rnd, "nodes": n, "start_s": start_s,
                     "dir": chome})
                for sc in scenarios:
                    cs.log(f"round {rnd}: {sc} at {args.rate}")
                    r = bench.chain(nodes, sc)
                    out({"round": rnd, "scenario": sc, "nodes": n, **r})
                stop(cluster, rnd, n)
            cs.log(f"round {rnd}: floor at {args.rate}")
            out({"round": rnd, "scenario": "floor", "nodes": 0,
                 **bench.floor1(args.seconds, args.warmup)})
    finally:
        for node in nodes:
            node.stop()
        for p in list(cs.CHILDREN):
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
        cs.log(f"load average at the start {load_start}, at the end {cs.load()}; "
               f"{(time.monotonic() - t_start) / 60:.1f} min; run directory {home}")
    summary(rows, args)


if __name__ == "__main__":
    sys.exit(main())
