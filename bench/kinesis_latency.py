#!/usr/bin/env python3
"""The Kinesis source's latency: records put into kinesalite at a fixed rate,
read by a stateless flow (the `stateless` scenario's query) into a Kafka sink
on rtsqld's embedded broker, and timed from the put to their arrival on the
sink topic. Beside it, the floor: the same records read straight from the
service by a GetRecords loop at the same poll interval, timed from the put to
the read. See docs/benchmarks.md, "Kinesis source".

  bench/kinesis_latency.py --endpoint http://127.0.0.1:4567 [--rate 200]
                           [--seconds 10] [--warmup 2] [--poll-interval-ms 200]
                           [--shards 1]

The endpoint is kinesalite's (scripts/kinesalite.sh start prints it); rtsqld
comes from ${RTSQL_BIN_DIR:-build}. Everything listens on 127.0.0.1 only."""

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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
from kinesalite import Kinesalite  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100.0 * len(values)))] if values else float("nan")


def put_steadily(kinesis, stream, rate, seconds, stop):
    """Records {"ts_us": put time, "user_id", "url", "amount"} in batches every 10 ms."""
    per_tick = max(1, rate // 100)
    n = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end and not stop.is_set():
        t0 = time.monotonic()
        now_us = time.time_ns() // 1000
        kinesis.put_records(stream, [(json.dumps({"ts_us": now_us, "user_id": f"u{(n + i) % 100}",
                                                  "url": "/p", "amount": 20.0}), f"u{(n + i) % 100}")
                                     for i in range(per_tick)])
        n += per_tick
        time.sleep(max(0.0, 0.01 - (time.monotonic() - t0)))
    return n


def floor_reader(kinesis, stream, interval_s, stop, out):
    """Put-to-read latency of a plain GetRecords loop at the flow's interval."""
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
                out.append(now_us - json.loads(base64.b64decode(r["Data"]))["ts_us"])
            its[shard] = page["NextShardIterator"]
        time.sleep(max(0.0, interval_s - (time.monotonic() - t0)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--endpoint", default=os.environ.get("RTSQL_KINESIS_ENDPOINT"))
    ap.add_argument("--rate", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--warmup", type=float, default=2)
    ap.add_argument("--poll-interval-ms", type=int, default=200)
    ap.add_argument("--shards", type=int, default=1)
    a = ap.parse_args()
    if not a.endpoint:
        ap.error("--endpoint (or RTSQL_KINESIS_ENDPOINT) is needed")
    bin_dir = Path(os.environ.get("RTSQL_BIN_DIR", "build"))
    kinesis = Kinesalite(a.endpoint)
    stream = f"bench_{uuid.uuid4().hex[:8]}"
    kinesis.create_stream(stream, a.shards)

    work = Path(tempfile.mkdtemp(prefix="rtsql-kinesis-bench-"))
    port = free_port()
    log = open(work / "rtsqld.log", "wb")
    proc = subprocess.Popen([str(bin_dir / "server" / "rtsqld"), "--host", "127.0.0.1", "--port", str(port),
                             "--data-dir", str(work / "data"), "--embedded-kafka"],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    stop = threading.Event()
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
        conn.execute(f"""CREATE SOURCE clicks (ts_us BIGINT, user_id STRING, url STRING, amount DOUBLE)
            WITH (connector = 'kinesis', 'kinesis.stream' = '{stream}', 'kinesis.region' = 'us-east-1',
                  'kinesis.endpoint' = '{a.endpoint}', 'kinesis.accessKeyId' = 'bench',
                  'kinesis.secretKey' = 'bench', 'kinesis.startingPosition' = 'LATEST',
                  'kinesis.pollInterval' = '{a.poll_interval_ms} ms')""")
        conn.execute(f"CREATE SINK out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded', "
                     f"topic = '{topic}', format = 'json')")
        conn.execute("CREATE FLOW f INTO out AS SELECT ts_us, user_id, upper(url) AS url, amount * 2 AS amount "
                     "FROM clicks WHERE amount > 10")

        flow_lat, floor_lat = [], []
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{stream}",
                             "auto.offset.reset": "earliest", "fetch.wait.max.ms": 1})

        def consume():
            md = consumer.list_topics(topic, timeout=10)
            parts = len(md.topics[topic].partitions) if topic in md.topics else 1
            consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(parts)])
            while not stop.is_set():
                m = consumer.poll(0.05)
                if m is None or m.error():
                    continue
                flow_lat.append(time.time_ns() // 1000 - json.loads(m.value())["ts_us"])

        threads = [threading.Thread(target=consume),
                   threading.Thread(target=floor_reader,
                                    args=(kinesis, stream, a.poll_interval_ms / 1000.0, stop, floor_lat))]
        for t in threads:
            t.start()
        put_steadily(kinesis, stream, a.rate, a.warmup, stop)
        warm_flow, warm_floor = len(flow_lat), len(floor_lat)
        sent = put_steadily(kinesis, stream, a.rate, a.seconds, stop)
        time.sleep(max(1.0, 3 * a.poll_interval_ms / 1000.0))
        stop.set()
        for t in threads:
            t.join(timeout=30)
        consumer.close()
        flow = flow_lat[warm_flow:]
        floor = floor_lat[warm_floor:]
        result = {"scenario": "kinesis", "rate": a.rate, "shards": a.shards,
                  "pollIntervalMs": a.poll_interval_ms, "sent": sent, "received": len(flow),
                  "e2eP50Ms": round(percentile(flow, 50) / 1000, 2), "e2eP99Ms": round(percentile(flow, 99) / 1000, 2),
                  "floorP50Ms": round(percentile(floor, 50) / 1000, 2),
                  "floorP99Ms": round(percentile(floor, 99) / 1000, 2)}
        print(json.dumps(result))
    finally:
        stop.set()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    main()
