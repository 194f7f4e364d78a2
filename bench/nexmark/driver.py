#!/usr/bin/env python3
"""The Nexmark runs of bench/nexmark/nexmark.sh, against an rtsqld it already started.

For each query: creates the three sources (sources.sql) and the query's
statements (qN.sql) with the placeholders substituted, feeds the events, waits
(bounded) until every input record is read and the sink's output count has
settled, reads SHOW PROGRESS, optionally checks the sink's records against
reference.py (the query run in DuckDB), and drops what it created. Prints one
table row per query. A query whose statements the build refuses as not
supported yet, or whose sink format it lacks (refusal()), is a "refused" row.

Feeding: with --rate 0 the events are generated once, as fast as possible,
before the first query, and each query replays them from the beginning of the
topics: throughput = input records / (time from CREATE FLOW until the last
input record is read). With --rate R the same events are generated again for
each query, after it is deployed, paced at R events/s into fresh topics, so
the latencies are those of a live stream.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import reference

HERE = Path(__file__).resolve().parent


def log(*a):
    print(*a, file=sys.stderr, flush=True)


class Rtsql:
    def __init__(self, args):
        self.args = args

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
        out = self.psql(f"SHOW PROGRESS {flow}", check=False)
        try:
            return json.loads(out)
        except json.JSONDecodeError:
            return {}


def substitute(text, values):
    return re.sub(r"\$\{(\w+)\}", lambda m: str(values[m.group(1)]), text)


def created(text):
    """(kind, name) of every CREATE in a script, in order."""
    return [(m.group(1).upper(), m.group(2)) for m in
            re.finditer(r"(?im)^\s*CREATE\s+(SOURCE|SINK|TABLE|FLOW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)",
                        text)]


def generate(args, prefix, files, base_time, rate):
    cmd = [args.gen, "--bootstrap", args.client_bootstrap, "--prefix", prefix,
           "--events", str(args.events), "--rate", str(rate), "--event-rate", str(args.event_rate),
           "--seed", str(args.seed), "--base-time", str(base_time), "--files", str(files)]
    if args.partitions:
        cmd += ["--partitions", str(args.partitions)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)


def create_topics(bootstrap, topics, partitions=1):
    """Creates the sink topics first: q7 reads its q7_max sink back as a source,
    and a real broker's source needs its topic to exist (with --rate, the
    input topics too: the events are sent after the flow starts). Brokers
    without CreateTopics (the embedded one creates topics on demand) are fine."""
    from confluent_kafka.admin import AdminClient, NewTopic
    try:
        admin = AdminClient({"bootstrap.servers": bootstrap})  # alive until the results
        futures = admin.create_topics([NewTopic(t, partitions) for t in topics],
                                      request_timeout=10)
        for f in futures.values():
            try:
                f.result(timeout=15)
            except Exception:  # exists already, or CreateTopics unsupported
                pass
    except Exception:
        pass


def input_read(prog, topics):
    """Records read so far from the given topics, and whether the source caught
    up with the latest offsets it knows of."""
    n = 0
    caught_up = True
    for s in prog.get("sources", []):
        end = s.get("endOffset") or {}
        latest = s.get("latestOffset") or {}
        for topic, parts in end.items():
            if topic not in topics:
                continue
            n += sum(int(v) for v in parts.values())
            for p, v in (latest.get(topic) or {}).items():
                if int(parts.get(p, 0)) < int(v):
                    caught_up = False
    return n, caught_up


def consume(bootstrap, topic, timeout, at_least=0):
    """The JSON records of TOPIC (every partition, from the beginning), read
    until each partition's position reaches its end offset, once the ends
    add up to AT_LEAST records (the sink's count of rows written: the broker
    may acknowledge the last ones just after), or the timeout passed."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"nexmark-check-{time.time_ns()}",
                  "enable.auto.commit": False, "fetch.wait.max.ms": 10})
    out = collections.defaultdict(list)
    deadline = time.monotonic() + timeout
    try:
        md = c.list_topics(topic, timeout=10)
        t = md.topics.get(topic)
        if t is None or t.error is not None or not t.partitions:
            return []
        while True:
            offsets = {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
                       for p in t.partitions}
            ends = {p: o[1] for p, o in offsets.items()}
            pos = {p: o[0] for p, o in offsets.items()}
            if sum(ends.values()) >= at_least or time.monotonic() >= deadline:
                break
            time.sleep(0.2)
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in t.partitions])
        while time.monotonic() < deadline and any(pos[p] < ends[p] for p in ends):
            m = c.poll(0.2)
            if m is None or m.error():
                continue
            out[m.partition()].append(json.loads(m.value()))
            pos[m.partition()] = m.offset() + 1
    finally:
        c.close()
    # Partitions one after another: a key's updates are in one partition, in order.
    return [r for p in sorted(out) for r in out[p]]


def dropped(bootstrap, topic):
    """Records the broker no longer has at the start of TOPIC (the first offset
    still in its log, summed over partitions): rtsqld's embedded broker keeps
    only the last few megabytes of each partition."""
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"nexmark-low-{time.time_ns()}"})
    try:
        md = c.list_topics(topic, timeout=10)
        t = md.topics.get(topic)
        if t is None or t.error is not None:
            return 0
        return sum(c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[0]
                   for p in t.partitions)
    finally:
        c.close()


def read_file_output(path):
    """The JSON lines a file sink wrote."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def refusal(message):
    """The reason this build refuses a query's statements, when it is a
    refusal of something not supported yet (0A000, or q7's and q8's join of a
    windowed aggregation, which such builds refuse for want of a watermark on
    the aggregation's output), or a sink format this build does not have; None
    for any other error."""
    m = re.search(r"ERROR \[0A000\]: (.*)", message)
    if m:
        return "0A000: " + m.group(1).strip()
    # A join of an aggregation's result is refused this way by builds without
    # joins of aggregations: the aggregation's output has no watermark.
    m = re.search(r"ERROR \[42P10\]: (stream-stream join on source \"\w+\" needs a WATERMARK)",
                  message)
    if m:
        return "42P10: " + m.group(1) + " (a join with an aggregation's result)"
    m = re.search(r"ERROR \[22023\]: invalid value '([\w-]+)' for option 'format'", message)
    if m:
        return f"22023: no sink format '{m.group(1)}' on this build"
    return None


def pct(rtm, name, p):
    v = (rtm.get(name) or {}).get(p)
    return "n/a" if v is None else f"{v:.2f}"


def run_query(args, db, q, prefix, files, base_time, counts, results):
    out_dir = args.work / f"{prefix}{q}_files"
    out_dir.mkdir(parents=True, exist_ok=True)
    text = substitute((HERE / "sources.sql").read_text() + "\n" + (HERE / f"{q}.sql").read_text(), {
        "BOOTSTRAP": args.sql_bootstrap, "PREFIX": prefix, "DELAY": args.delay,
        "SIDE_INPUT": args.work / "side_input.csv",
        "OUTPUT_DIR": out_dir})
    script = args.work / f"{prefix}{q}.sql"
    script.write_text(text)
    objs = created(text)
    flows = [n for k, n in objs if k == "FLOW"]
    main_flow = flows[-1]
    kinds = reference.INPUTS.get(q, ["bid"])
    topics = {prefix + k for k in kinds}
    want = sum(counts[k] for k in kinds)
    row = {"query": q, "inputRecords": want}
    gen = None
    try:
        if args.sql_bootstrap != "embedded":  # the embedded broker creates topics on demand
            create_topics(args.client_bootstrap, re.findall(r"topic\s*=\s*'([^']+)'", text))
            if args.rate > 0:
                create_topics(args.client_bootstrap,
                              [prefix + k for k in ("person", "auction", "bid")],
                              max(args.partitions, 1))
        t0 = time.monotonic()
        try:
            db.script(script)
        except RuntimeError as e:
            why = refusal(str(e))
            if why is None:
                raise
            if "no sink format" in why:
                why += "; the flow itself: " + flow_verdict(db, script, text, objs)
            row["refused"] = why
            log(f"{q}: refused: {why}")
            return row
        if args.rate > 0:
            # A live stream meets a flow that is already reading: wait until
            # each source knows its topics' offsets, so that the first events
            # are not measured waiting for the flow to start.
            ready_by = time.monotonic() + min(args.timeout, 30)
            while time.monotonic() < ready_by:
                known = set()
                for f in flows:
                    for src in db.progress(f).get("sources", []):
                        known |= set((src.get("latestOffset") or {}).keys())
                if topics <= known:
                    break
                time.sleep(0.1)
            gen = generate(args, prefix, files, base_time, args.rate)
        deadline = t0 + args.timeout
        t_input = None
        last_out, t_out = -1, time.monotonic()
        last_wm, t_settled = None, time.monotonic()
        prog = {}
        while time.monotonic() < deadline:
            progs = {f: db.progress(f) for f in flows}
            prog = progs[main_flow]
            read_ok = True
            for f in flows:
                n, up = input_read(progs[f], topics)
                if n < want or not up:
                    read_ok = False
            if read_ok and t_input is None:
                t_input = time.monotonic()
            out = (prog.get("sink") or {}).get("numOutputRows", 0)
            if out != last_out:
                last_out, t_out = out, time.monotonic()
                t_settled = t_out
            # A watermark that moves may close windows still to be written.
            wm_now = (prog.get("eventTime") or {}).get("watermark")
            if wm_now != last_wm:
                last_wm, t_settled = wm_now, time.monotonic()
            # Done once every input record is read and the output and the
            # watermark have settled.
            if t_input is not None and time.monotonic() - t_settled >= args.settle:
                break
            time.sleep(0.1)
        if gen is not None:
            gen.wait(timeout=max(1, deadline - time.monotonic()))
        state = db.psql("SHOW FLOWS", check=False)
        row["state"] = ",".join(line.split("|")[2] for line in state.splitlines()
                                if line.split("|")[0] in flows)
        row["complete"] = t_input is not None
        # The end: every input record read and the last output row written
        # (a source reads ahead of processing, so reading alone is not the end).
        secs = (max(t_input, t_out) if t_input else time.monotonic()) - t0
        row["seconds"] = secs
        row["eventsPerSecond"] = want / secs if t_input and secs > 0 else None
        row["outputRows"] = last_out
        row["rtm"] = prog.get("rtmMetrics") or {}
        row["watermark"] = (prog.get("eventTime") or {}).get("watermark")
        if args.check:
            wm = None
            wflow = reference.WATERMARK_FLOW.get(q)
            if wflow:
                w = (db.progress(wflow).get("eventTime") or {}).get("watermark")
                wm = reference.ts_ms(w) if w else None
            if q in reference.FILE_OUTPUT:
                records = read_file_output(out_dir / reference.FILE_OUTPUT[q])
                out_topics = set()
            else:
                at_least = 0 if reference.OUTPUT[q] == "debezium" else max(last_out, 0)
                records = consume(args.client_bootstrap, f"{prefix}{q}_out",
                                  max(60, args.timeout), at_least)
                out_topics = {f"{prefix}{q}_out"}
            ok, msg = reference.compare(q, results["events"], records, wm)
            lost = sum(dropped(args.client_bootstrap, t) for t in topics | out_topics)
            if lost:
                ok, msg = False, (f"the broker dropped {lost} records from the start of the "
                                  "input or output topics before they were read; " + msg)
            if not row["complete"]:
                ok, msg = False, f"input not read within {args.timeout} s; " + msg
            row["check"] = "PASS" if ok else "FAIL"
            row["checkMessage"] = msg
            log(f"{q}: {row['check']}: {msg}")
    finally:
        if gen is not None and gen.poll() is None:
            gen.kill()
            gen.wait(timeout=10)
        for kind, name in reversed(objs):
            db.psql(f"DROP {kind} IF EXISTS {name}", check=False)
    return row


def flow_verdict(db, script, text, objs):
    """What this build says of a query's flow when its sink's format is
    missing: the same statements with a plain json sink, dropped again."""
    for kind, name in reversed(objs):
        db.psql(f"DROP {kind} IF EXISTS {name}", check=False)
    plain = re.sub(r"format\s*=\s*'debezium-json'", "format = 'json'", text)
    probe = script.with_name(script.stem + "_probe.sql")
    probe.write_text(plain)
    try:
        db.script(probe)
        return "accepted into a json sink"
    except RuntimeError as e:
        first = re.search(r"ERROR \[\w+\]: .*", str(e))
        return refusal(str(e)) or (first.group(0) if first else str(e).strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--sql-bootstrap", required=True)
    ap.add_argument("--client-bootstrap", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--rtsql", required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--queries", default=" ".join(reference.QUERIES))
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--rate", type=float, default=0)
    ap.add_argument("--event-rate", type=float, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--partitions", type=int, default=0)
    ap.add_argument("--delay", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--settle", type=float, default=2.0)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--results", help="append the rows as JSON lines to this file")
    args = ap.parse_args()
    if args.event_rate <= 0:
        args.event_rate = args.rate if args.rate > 0 else 10_000
    queries = args.queries.split()
    for q in queries:
        if q not in reference.QUERIES:
            log(f"nexmark: unknown query {q} (known: {' '.join(reference.QUERIES)})")
            return 2
    reference.write_side_input(args.work / "side_input.csv")
    db = Rtsql(args)
    run_id = int(time.time())
    base_time = run_id * 1000
    files = args.work / "events"
    shared_prefix = f"nx{run_id}_"
    if args.rate <= 0:
        log(f"generating {args.events} events")
        g = generate(args, shared_prefix, files, base_time, 0)
        out, _ = g.communicate(timeout=600)
        if g.returncode != 0:
            log("nexmark: the generator failed")
            return 1
        log(f"generator: {out.strip()}")
    else:
        # The events (identical for every query) for the counts and the reference.
        g = subprocess.run([args.gen, "--no-kafka", "--files", str(files), "--events",
                            str(args.events), "--event-rate", str(args.event_rate), "--seed",
                            str(args.seed), "--base-time", str(base_time)],
                           capture_output=True, text=True, timeout=600)
        if g.returncode != 0:
            log(f"nexmark: the generator failed: {g.stderr}")
            return 1
    summary = json.loads(g.stdout if isinstance(g, subprocess.CompletedProcess) else out)
    counts = {"person": summary["persons"], "auction": summary["auctions"], "bid": summary["bids"]}
    results = {"events": reference.load_events(files) if args.check else None}
    rows = []
    for q in queries:
        prefix = shared_prefix if args.rate <= 0 else f"nx{run_id}_{q}_"
        log(f"{q}: running")
        try:
            row = run_query(args, db, q, prefix, files, base_time, counts, results)
        except Exception as e:  # a broken query is a row of the table, not the end of the run
            row = {"query": q, "error": str(e), "check": "FAIL" if args.check else None}
            log(f"{q}: {e}")
        rows.append(row)
        if args.results:
            with open(args.results, "a") as f:
                f.write(json.dumps({**row, "events": args.events, "rate": args.rate,
                                    "eventRate": args.event_rate}) + "\n")

    hdr = ["query", "input records", "seconds", "events/s", "output rows",
           "proc P50", "proc P99", "e2e P50", "e2e P99", "state"]
    if args.check:
        hdr.append("check")
    print(f"Nexmark, {args.events} events ({counts['person']} persons, {counts['auction']} "
          f"auctions, {counts['bid']} bids), rate {'max' if args.rate <= 0 else args.rate}, "
          f"event rate {args.event_rate:g}/s; latencies in ms (SHOW PROGRESS rtmMetrics)")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "|".join(" --- " for _ in hdr) + "|")
    failed = False
    for r in rows:
        if "error" in r:
            cells = [r["query"], "error: " + r["error"].splitlines()[0]] + [""] * (len(hdr) - 2)
            failed = failed or args.check
        elif "refused" in r:
            cells = [r["query"], str(r["inputRecords"]), "refused: " + r["refused"]]
            cells += [""] * (len(hdr) - 3)
            if args.check:
                cells[-1] = "REFUSED"
        else:
            rtm = r["rtm"]
            eps = r["eventsPerSecond"]
            cells = [r["query"], str(r["inputRecords"]), f"{r['seconds']:.2f}",
                     "incomplete" if eps is None else f"{eps:,.0f}", str(r["outputRows"]),
                     pct(rtm, "processingLatencyMs", "P50"), pct(rtm, "processingLatencyMs", "P99"),
                     pct(rtm, "e2eLatencyMs", "P50"), pct(rtm, "e2eLatencyMs", "P99"), r["state"]]
            if args.check:
                cells.append(r["check"])
                failed = failed or r["check"] != "PASS"
        print("| " + " | ".join(cells) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
