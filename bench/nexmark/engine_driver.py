#!/usr/bin/env python3
"""The engine-only Nexmark runs of bench/nexmark/nexmark_engine.sh, against an rtsqld
it already started (without a broker).

For each query: creates the nexmark sources (engine/sources.sql) and the
query's statements (engine/qN.sql: its flow into a blackhole sink), samples
the flow's progress and rtsqld's CPU time (/proc/PID/stat, utime + stime)
every 50 ms until the run is over, and drops what it created. The run is over
when every event has been read (for flows with one source: the sum of its
partitions' endOffset is the event count; a flow with two sources shows no
per-partition offsets) and for `settle` seconds neither the blackhole's row
count nor the offsets moved and rtsqld used less than a fifth of a core over
any half second. Its end is the last sample at which any of them moved. Throughput is events over
the time from CREATE FLOW to the end; events per core-second is events over
rtsqld's CPU seconds in the same time, the measure of the Nexmark project's
"Throughput/Cores". Events are those of the generator (persons, auctions and
bids together), as the Nexmark project counts them, whichever table the query
reads.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import psycopg

import reference

HERE = Path(__file__).resolve().parent
QUERIES = ["q0", "q1", "q2", "q5", "q7", "q8", "q11", "q13", "q14"]
TICKS = os.sysconf("SC_CLK_TCK")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def cpu_seconds(pid):
    """utime + stime of the process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class Rtsql:
    def __init__(self, args):
        self.args = args
        # One connection for the progress polls: a new connection per poll
        # would cost rtsqld more CPU than some of the runs it measures.
        self.conn = psycopg.connect(host="127.0.0.1", port=args.port, user="rtsql", dbname="rtsql",
                                    connect_timeout=10, autocommit=True)

    def psql(self, sql, check=True):
        p = subprocess.run(
            ["psql", "-h", "127.0.0.1", "-p", str(self.args.port), "-U", "rtsql", "-d", "rtsql",
             "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
            capture_output=True, text=True, timeout=60, env={**os.environ, "PGCONNECT_TIMEOUT": "10"})
        if check and p.returncode != 0:
            raise RuntimeError(f"{sql}: {p.stderr.strip()}")
        return p.stdout.strip()

    def script(self, path):
        p = subprocess.run([self.args.rtsql, "-h", "127.0.0.1", "-p", str(self.args.port), "-q",
                            "-f", str(path)], capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            raise RuntimeError(f"rtsql -f {path} failed:\n{p.stdout}\n{p.stderr}")

    def progress(self, flow):
        try:
            rows = self.conn.execute(f"SHOW PROGRESS {flow}").fetchall()
            if not rows:
                return {}
            v = rows[0][0]
            return v if isinstance(v, dict) else json.loads(v)
        except (psycopg.Error, json.JSONDecodeError, TypeError):
            return {}


def substitute(text, values):
    return re.sub(r"\$\{(\w+)\}", lambda m: str(values[m.group(1)]), text)


def created(text):
    """(kind, name) of every CREATE in a script, in order."""
    return [(m.group(1).upper(), m.group(2)) for m in
            re.finditer(r"(?im)^\s*CREATE\s+(SOURCE|SINK|TABLE|FLOW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)",
                        text)]


def events_read(prog):
    """Events the flow's sources have read (the sum of their partitions'
    endOffset), or None when the progress shows no offsets."""
    total, seen = 0, False
    for s in prog.get("sources", []):
        for parts in (s.get("endOffset") or {}).values():
            for v in parts.values():
                total += int(v)
                seen = True
    return total if seen else None


def sink_rows(prog):
    m = re.search(r"rows=(\d+)", (prog.get("sink") or {}).get("description", ""))
    return int(m.group(1)) if m else None


def run_query(args, db, pid, q):
    text = substitute((HERE / "engine" / "sources.sql").read_text() + "\n" +
                      (HERE / "engine" / f"{q}.sql").read_text(), {
        "EVENTS": args.events, "PARTITIONS": args.partitions, "DELAY": args.delay,
        "JOIN_DELAY": args.join_delay, "SIDE_INPUT": args.work / "side_input.csv"})
    script = args.work / f"engine_{q}.sql"
    script.write_text(text)
    objs = created(text)
    flow = [n for k, n in objs if k == "FLOW"][-1]
    row = {"query": q, "events": args.events}
    try:
        cpu0 = cpu_seconds(pid)
        t0 = time.monotonic()
        db.script(script)
        deadline = t0 + args.timeout
        last = (None, None)
        t_end, cpu_end = t0, cpu0
        read_all = False
        samples = [(t0, cpu0)]
        prog = {}
        while time.monotonic() < deadline:
            time.sleep(0.05)
            prog = db.progress(flow)
            now, cpu = time.monotonic(), cpu_seconds(pid)
            read = events_read(prog)
            rows = sink_rows(prog)
            # Busy: more than a fifth of a core over the last half second (CPU
            # time comes in 10 ms ticks; a checkpoint or a poll is a tick now
            # and then, not a fifth of a core).
            samples.append((now, cpu))
            while len(samples) > 2 and samples[1][0] <= now - 0.5:
                samples.pop(0)
            busy = (cpu - samples[0][1]) / max(now - samples[0][0], 1e-3) > 0.2
            moved = (read, rows) != last
            last = (read, rows)
            if moved or (busy and cpu > cpu_end):
                # The run is still going: its end is at least this sample.
                t_end, cpu_end = now, cpu
            if read is not None and read >= args.events:
                read_all = True
            if read is None and rows is not None:
                # Several sources: the progress shows no offsets per
                # partition; the output and the CPU going quiet say the input
                # is done.
                read_all = True
            if read_all and now - t_end >= args.settle:
                break
        state = db.psql("SHOW FLOWS", check=False)
        row["state"] = ",".join(line.split("|")[2] for line in state.splitlines()
                                if line.split("|")[0] == flow)
        row["complete"] = read_all and time.monotonic() < deadline
        row["seconds"] = t_end - t0
        row["cpuSeconds"] = cpu_end - cpu0
        row["outputRows"] = sink_rows(prog)
        row["eventsRead"] = events_read(prog)
    finally:
        for kind, name in reversed(objs):
            db.psql(f"DROP {kind} IF EXISTS {name}", check=False)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--rtsql", required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--queries", default=" ".join(QUERIES))
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--partitions", type=int, default=1)
    ap.add_argument("--delay", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--settle", type=float, default=2.0)
    ap.add_argument("--results", help="append the rows as JSON lines to this file")
    args = ap.parse_args()
    # Event time runs at 10,000 events/s (the nexmark source's default); more
    # than the run's event-time span: nothing is ever late in q8's join.
    args.join_delay = int(args.events / 10_000) + 60
    queries = args.queries.split()
    for q in queries:
        if q not in QUERIES:
            log(f"nexmark_engine: unknown query {q} (known: {' '.join(QUERIES)})")
            return 2
    reference.write_side_input(args.work / "side_input.csv")
    db = Rtsql(args)
    # What rtsqld costs while nothing runs and the driver polls as it does
    # during a run: the floor under every run's CPU seconds.
    idle0, t_idle0 = cpu_seconds(args.pid), time.monotonic()
    while time.monotonic() - t_idle0 < 2.0:
        db.progress("nexmark_engine_none")
        time.sleep(0.05)
    idle = (cpu_seconds(args.pid) - idle0) / (time.monotonic() - t_idle0)
    rows = []
    for q in queries:
        log(f"{q}: running")
        try:
            row = run_query(args, db, args.pid, q)
        except Exception as e:  # a broken query is a row of the table, not the end of the run
            row = {"query": q, "error": str(e)}
            log(f"{q}: {e}")
        rows.append(row)
        if args.results:
            with open(args.results, "a") as f:
                f.write(json.dumps({**row, "partitions": args.partitions}) + "\n")

    hdr = ["query", "events", "seconds", "events/s", "rtsqld CPU s", "cores used",
           "events/s per core", "output rows", "state"]
    print(f"Nexmark engine-only (nexmark source, blackhole sink), {args.events:,} events, "
          f"{args.partitions} partition(s) per source; rtsqld with nothing running, polled as "
          f"during the runs: {100 * idle:.1f}% of a core")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "|".join(" --- " for _ in hdr) + "|")
    failed = False
    for r in rows:
        if "error" in r:
            cells = [r["query"], "error: " + r["error"].splitlines()[0]] + [""] * (len(hdr) - 2)
            failed = True
        else:
            secs, cpu = r["seconds"], r["cpuSeconds"]
            done = r["complete"] and secs > 0 and cpu > 0
            failed = failed or not done
            cells = [r["query"], f"{r['events']:,}", f"{secs:.2f}",
                     f"{r['events'] / secs:,.0f}" if done else "incomplete",
                     f"{cpu:.2f}", f"{cpu / secs:.2f}" if secs > 0 else "",
                     f"{r['events'] / cpu:,.0f}" if done else "incomplete",
                     "" if r["outputRows"] is None else f"{r['outputRows']:,}", r["state"]]
        print("| " + " | ".join(cells) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
