#!/usr/bin/env python3
"""The Kinesis source's latency: records put into kinesalite at a fixed rate,
read by a stateless flow (the `stateless` scenario's query) into a Kafka sink
on rtsqld's embedded broker, and timed from the put to their arrival on the
sink topic. Beside it, the floor: the same records read straight from the
service by a GetRecords loop at the same poll interval, timed from the put to
the read. See docs/benchmarks.md, "Kinesis source".

  bench/scenarios/kinesis_latency.py --endpoint http://127.0.0.1:4567 [--rate 200]
                           [--seconds 10] [--warmup 2] [--poll-interval-ms 200]
                           [--shards 1] [--size 200] [--keys 1000]

starts its own rtsqld and flow. bench/scenarios/scenario.sh's `kinesis` scenario deploys
the flow itself and uses the two other forms:

  bench/scenarios/kinesis_latency.py --endpoint URL --create-stream NAME [--shards 1]
  bench/scenarios/kinesis_latency.py --endpoint URL --stream NAME --bootstrap HOST:PORT
                           --out TOPIC [--rate ...] [--seconds ...] ...

the first makes the stream, the second puts into it and reads the flow's
sink topic TOPIC, and prints one JSON line shaped as rtsql_latency --json's
(sent, expected, received, lost, duplicates, latencyMs) with the poll floor
(pollFloorMs) beside it.

Each record is {"ts_us": put time, "seq", "user_id", "url", "amount",
"merchant_id", "pad"}, padded to --size bytes as rtsql_latency pads its own,
keyed by user_id over --keys users; ts_us is unique (a record put in the same
microsecond as the one before is stamped one microsecond later), which is how
the records are matched. The endpoint is kinesalite's (scripts/kinesalite.sh
start prints it); rtsqld comes from ${RTSQL_BIN_DIR:-build}. Everything listens
on 127.0.0.1 only."""

import argparse
import base64
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import psycopg
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "e2e"))
from kinesalite import Kinesalite  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100.0 * len(values)))] if values else float("nan")


def record_json(ts_us, seq, keys, size):
    """One record as the Kafka scenarios' generator makes it: every amount is
    above 10 (the stateless filter keeps it), padded to `size` bytes."""
    r = {"ts_us": ts_us, "seq": seq, "user_id": f"user-{seq % keys}", "url": f"/p/{seq % 977}",
         "amount": 11.0 + seq % 90, "merchant_id": seq % 10000, "pad": ""}
    text = json.dumps(r)
    r["pad"] = "x" * max(0, size - len(text))
    return json.dumps(r), r["user_id"]


class Putter:
    """Puts records at a fixed rate, paced by the clock: every 10 ms, one
    PutRecords call with the records due by then (at most 500, the API's
    limit). Keeps the stamps of the records put while measuring."""

    def __init__(self, kinesis, stream, rate, keys, size):
        self.kinesis, self.stream, self.rate, self.keys, self.size = kinesis, stream, rate, keys, size
        self.seq = 0
        self.last_us = 0
        self.measured = set()

    def run(self, seconds, stop, measure):
        start = time.monotonic()
        total = int(self.rate * seconds)
        sent = 0
        tick = 0
        while sent < total and not stop.is_set():
            due = min(int(self.rate * (time.monotonic() - start)) + 1, total) - sent
            batch = []
            for _ in range(max(0, min(due, 500))):
                self.last_us = max(time.time_ns() // 1000, self.last_us + 1)
                batch.append(record_json(self.last_us, self.seq, self.keys, self.size))
                if measure:
                    self.measured.add(self.last_us)
                self.seq += 1
            if batch:
                self.kinesis.put_records(self.stream, batch)
                sent += len(batch)
            tick += 1
            time.sleep(max(0.0, start + tick * 0.01 - time.monotonic()))
        return sent


def floor_reader(kinesis, stream, interval_s, stop, out):
    """Put-to-read latency of a plain GetRecords loop at the flow's interval:
    appends (ts_us, microseconds) per record read."""
    its = {}
    for s in kinesis.shards(stream):
        its[s["ShardId"]] = kinesis.call("GetShardIterator", {
            "StreamName": stream, "ShardId": s["ShardId"], "ShardIteratorType": "LATEST"})["ShardIterator"]
    while not stop.is_set():
        t0 = time.monotonic()
        for shard, it in list(its.items()):
            page = kinesis.call("GetRecords", {"ShardIterator": it, "Limit": 10000})
            now_us = time.time_ns() // 1000
            for r in page["Records"]:
                ts = json.loads(base64.b64decode(r["Data"]))["ts_us"]
                out.append((ts, now_us - ts))
            its[shard] = page["NextShardIterator"]
        time.sleep(max(0.0, interval_s - (time.monotonic() - t0)))


def latency_ms(values_us):
    return {p: round(percentile(values_us, float(p[1:])) / 1000, 3) for p in ("P50", "P90", "P99")} | {
        "max": round(max(values_us) / 1000, 3) if values_us else float("nan")}


def measure(kinesis, stream, bootstrap, topic, rate, seconds, warmup, poll_interval_ms, keys, size):
    """Puts `warmup` then `seconds` of records at `rate` into `stream` while a
    consumer reads the flow's sink `topic` from the start and a GetRecords loop
    reads the stream; waits (at most 5 s past three poll intervals) for the
    last records. Returns rtsql_latency's JSON fields and pollFloorMs."""
    stop = threading.Event()
    first = {}  # ts_us -> latency of its first receipt, microseconds
    receipts = [0]
    floor = []
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{stream}",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 1, "fetch.min.bytes": 1})
    md = consumer.list_topics(topic, timeout=10)
    parts = len(md.topics[topic].partitions) if topic in md.topics else 1
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(parts)])

    def consume():
        while not stop.is_set():
            m = consumer.poll(0.05)
            if m is None or m.error():
                continue
            now_us = time.time_ns() // 1000
            ts = json.loads(m.value())["ts_us"]
            receipts[0] += 1
            first.setdefault(ts, now_us - ts)

    threads = [threading.Thread(target=consume),
               threading.Thread(target=floor_reader,
                                args=(kinesis, stream, poll_interval_ms / 1000.0, stop, floor))]
    for t in threads:
        t.start()
    putter = Putter(kinesis, stream, rate, keys, size)
    try:
        sent = putter.run(warmup, stop, False)
        measured_from = putter.last_us + 1
        sent += putter.run(seconds, stop, True)
        deadline = time.monotonic() + 3 * poll_interval_ms / 1000.0 + 5
        while time.monotonic() < deadline and not putter.measured <= first.keys():
            time.sleep(0.05)
        time.sleep(3 * poll_interval_ms / 1000.0)  # the floor loop's last reads
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
        consumer.close()
    got = [first[t] for t in putter.measured if t in first]
    all_received = [t for t in first if t >= 1000]  # the topic's warm-up record has ts_us 1
    floor_measured = [lat for ts, lat in floor if ts >= measured_from]
    return {"sent": sent, "expected": len(putter.measured), "received": len(got),
            "lost": len(putter.measured) - len(got),
            "duplicates": max(0, receipts[0] - len(first)), "measured": len(got),
            "receivedAll": len(all_received),
            "latencyMs": latency_ms(got), "pollFloorMs": latency_ms(floor_measured),
            "pollIntervalMs": poll_interval_ms}


def source_sql(name, stream, endpoint, poll_interval_ms):
    """The Kinesis source of the stateless scenario's columns. Without a poll
    interval the source's own default (200 ms) holds."""
    poll = f",\n    'kinesis.pollInterval' = '{poll_interval_ms} ms'" if poll_interval_ms else ""
    return f"""CREATE SOURCE {name} (
    ts_us BIGINT, seq BIGINT, user_id STRING, url STRING, amount DOUBLE,
    merchant_id BIGINT, pad STRING
) WITH (
    connector = 'kinesis', 'kinesis.stream' = '{stream}', 'kinesis.region' = 'us-east-1',
    'kinesis.endpoint' = '{endpoint}', 'kinesis.accessKeyId' = 'bench',
    'kinesis.secretKey' = 'bench', 'kinesis.startingPosition' = 'LATEST'{poll}
);"""


def standalone(a, kinesis):
    """Its own rtsqld (embedded broker), stream, source, sink and flow."""
    bin_dir = Path(os.environ.get("RTSQL_BIN_DIR", "build"))
    stream = f"bench_{uuid.uuid4().hex[:8]}"
    kinesis.create_stream(stream, a.shards)
    work = Path(tempfile.mkdtemp(prefix="rtsql-kinesis-bench-"))
    port = free_port()
    log = open(work / "rtsqld.log", "wb")
    proc = subprocess.Popen([str(bin_dir / "server" / "rtsqld"), "--host", "127.0.0.1", "--port", str(port),
                             "--data-dir", str(work / "data"), "--embedded-kafka"],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                conn = psycopg.connect(host="127.0.0.1", port=port, user="rtsql", dbname="rtsql",
                                       autocommit=True, connect_timeout=5)
                bootstrap = conn.execute("SHOW embedded_kafka").fetchone()[0]
                break
            except psycopg.Error:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        topic = f"out_{stream}"
        conn.execute(source_sql("clicks", stream, a.endpoint, a.poll_interval_ms))
        conn.execute(f"CREATE SINK out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded', "
                     f"topic = '{topic}', format = 'json')")
        conn.execute("CREATE FLOW f INTO out AS SELECT ts_us, user_id, upper(url) AS url, amount * 2 AS doubled "
                     "FROM clicks WHERE amount > 10")
        r = measure(kinesis, stream, bootstrap, topic, a.rate, a.seconds, a.warmup,
                    a.poll_interval_ms or 200, a.keys, a.size)
        return {"scenario": "kinesis", "rate": a.rate, "shards": a.shards,
                "e2eP50Ms": r["latencyMs"]["P50"], "e2eP99Ms": r["latencyMs"]["P99"],
                "floorP50Ms": r["pollFloorMs"]["P50"], "floorP99Ms": r["pollFloorMs"]["P99"]} | r
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--endpoint", default=os.environ.get("RTSQL_KINESIS_ENDPOINT"))
    ap.add_argument("--rate", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--warmup", type=float, default=2)
    ap.add_argument("--poll-interval-ms", type=int, default=None,
                    help="the source's kinesis.pollInterval and the floor loop's (default 200)")
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--size", type=int, default=200)
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--create-stream", metavar="NAME")
    ap.add_argument("--stream", metavar="NAME")
    ap.add_argument("--bootstrap", metavar="HOST:PORT")
    ap.add_argument("--out", metavar="TOPIC")
    ap.add_argument("--source-sql", nargs=2, metavar=("NAME", "STREAM"),
                    help="print the CREATE SOURCE of the scenario's columns and exit")
    a = ap.parse_args()
    if a.source_sql:
        print(source_sql(a.source_sql[0], a.source_sql[1], a.endpoint, a.poll_interval_ms))
        return
    if not a.endpoint:
        ap.error("--endpoint (or RTSQL_KINESIS_ENDPOINT) is needed")
    kinesis = Kinesalite(a.endpoint)
    if a.create_stream:
        kinesis.create_stream(a.create_stream, a.shards)
        return
    if a.stream:
        if not (a.bootstrap and a.out):
            ap.error("--stream needs --bootstrap and --out")
        r = measure(kinesis, a.stream, a.bootstrap, a.out, a.rate, a.seconds, a.warmup,
                    a.poll_interval_ms or 200, a.keys, a.size)
    else:
        r = standalone(a, kinesis)
    print(json.dumps(r))


if __name__ == "__main__":
    main()
