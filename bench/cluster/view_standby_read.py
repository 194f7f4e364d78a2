#!/usr/bin/python3
"""What a read of a view from a standby copy costs beside a read sent to the
view's holder (docs/sql.md, "Reading a view from a standby copy"), on a
2-node cluster over rtsqld's embedded broker:

    RTSQL_BIN_DIR=build bench/cluster/view_standby_read.py [--keys 1000] [--lookups 2000]

The view per_k (a count and a sum per key, 'standby.replicas' = '1') is
loaded with --keys keys; once the other node's standby copy holds every key,
one connection runs --lookups prepared lookups by key (keys in turn), one
after another, in each of three ways, in this order, in the same run:
- `holder`: on the holder itself (its own snapshot);
- `forwarded`: on the other node with rtsql.view_read = 'holder' (each
  lookup sent to the holder over the PostgreSQL protocol);
- `standby`: on the other node with rtsql.view_read = 'standby' (its copy).
For each: P50/P99 of a lookup's round trip (wall time, client side), and the
CPU time both rtsqld took over the lookups (utime + stime from /proc) per
lookup. One JSON line each, with the load average before and after. The
machine is shared: the CPU figures are the ones to compare.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "e2e"))

from cluster import Node, runner, run_again_on_40001  # noqa: E402
from conftest import Kafka, Server, wait_for  # noqa: E402


class BenchNode(Node):
    node_timeout_s = 60


def cpu_s(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def standby_epoch(node):
    text = "\n".join(r[0] for r in node.query("EXPLAIN FLOW per_k"))
    return f"{node.name} (here, at epoch" in text


def measure(node, settings, keys, lookups, nodes):
    lat = []
    with node.connect() as conn:
        for s in settings:
            conn.execute(s)
        for i in range(50):  # prepared, warmed
            conn.execute("SELECT c, s FROM per_k WHERE k = %s", (f"k{i % keys}",),
                         prepare=True).fetchall()
        cpu0 = sum(cpu_s(n.proc.pid) for n in nodes)
        load0 = os.getloadavg()[0]
        for i in range(lookups):
            t = time.perf_counter()
            rows = conn.execute("SELECT c, s FROM per_k WHERE k = %s", (f"k{i % keys}",),
                                prepare=True).fetchall()
            lat.append(time.perf_counter() - t)
            assert len(rows) == 1
        cpu1 = sum(cpu_s(n.proc.pid) for n in nodes)
    lat.sort()
    return {"p50_ms": round(lat[len(lat) // 2] * 1000, 3),
            "p99_ms": round(lat[int(len(lat) * 0.99)] * 1000, 3),
            "cpu_us_per_lookup": round((cpu1 - cpu0) / lookups * 1e6, 1),
            "load": [round(load0, 2), round(os.getloadavg()[0], 2)]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--lookups", type=int, default=2000)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="view_standby_read_"))
    print(f"run directory {tmp}", file=sys.stderr)
    host = Server(tmp / "broker")
    (tmp / "broker").mkdir()
    host.start()
    nodes = []
    try:
        broker = Kafka("embedded", host.embedded_bootstrap, host.embedded_bootstrap)
        broker.create_topic("vsr_in")
        for name in ("a", "b"):
            (tmp / name).mkdir()
            nodes.append(BenchNode(tmp / name, "vsr", broker, name).start())
        run_again_on_40001(nodes[0], f"""
            CREATE SOURCE ev (k STRING, n BIGINT)
                WITH ({broker.options()}, subscribe = 'vsr_in',
                      startingOffsets = 'earliest', format = 'json')""")
        broker.produce("vsr_in", [{"k": f"k{i}", "n": i} for i in range(args.keys)])
        run_again_on_40001(nodes[0], "CREATE MATERIALIZED VIEW per_k WITH "
                                     "('standby.replicas' = '1', 'shuffle.partitions' = '2') AS "
                                     "SELECT k, count(*) AS c, sum(n) AS s FROM ev GROUP BY k")
        holder = runner("per_k", *nodes)
        other = next(n for n in nodes if n is not holder)
        wait_for(lambda: standby_epoch(other), 120, "the standby copy applied a checkpoint")
        with other.connect() as conn:
            conn.execute("SET rtsql.view_read = 'standby'")
            wait_for(lambda: conn.execute("SELECT count(*) FROM per_k").fetchone()[0]
                     == args.keys, 120, "the standby copy holds every key")
        for way, node, settings in (
                ("holder", holder, ()),
                ("forwarded", other, ("SET rtsql.view_read = 'holder'",)),
                ("standby", other, ("SET rtsql.view_read = 'standby'",))):
            out = {"way": way, "keys": args.keys, "lookups": args.lookups}
            out.update(measure(node, settings, args.keys, args.lookups, nodes))
            print(json.dumps(out), flush=True)
    finally:
        for n in nodes:
            n.kill()
        host.stop()


if __name__ == "__main__":
    main()
