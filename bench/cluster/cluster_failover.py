#!/usr/bin/python3
"""Failover time of a cluster of rtsqld (docs/operations.md, "Running a cluster").

    bench/cluster/cluster_failover.py [--keys 100000] [--bootstrap 127.0.0.1:29700]
                              [--node-timeout 6] [--rate 200] [--restart | --standby]
                              [--shards N]

Two nodes of one cluster on the Kafka at --bootstrap (Apache Kafka from
scripts/kafka.sh; RTSQL_BIN_DIR names the build). A GROUP BY flow counts
--keys keys (one record each, written first), with a checkpoint every second
(so its state copy in Kafka holds them all). Then records of one more key
stream at --rate per second, each carrying its send time; the node that runs
the flow is killed with SIGKILL, and the benchmark waits for the other node's
first output. It prints one JSON line:

- failover_ms: kill to the first output record written after it (only the
  other node can write it), by the broker's timestamps;
- floor_ms: the group's session timeout (--node-timeout), the part of that
  which is Kafka's detection of the dead node and no work of rtsql;
- restore_ms: the new node's restore (reading the copy, writing it as a
  checkpoint, opening it), from its progress JSON;
- copy_keys: the keys the restored flow (or copy) holds after the failover.

With --standby the flow has 'standby.replicas' = '1': the other node keeps
a warm copy of its state (docs/operations.md, "Standby replicas"), caught up
before the kill, and starts the flow from it instead of reading the copy.

With --shards N the flow has 'shards' = 'N': N copies, each keeping about
1/N of the keys (docs/operations.md, "Sharded stateful flows"); the node
killed is the one that runs the copy of the streaming key, and the figures
are that copy's (restore_ms: its restore of its share of the state).

With --restart the killed node is started again at once under its name
instead (static membership gives it its slots back before the group moves
them), and failover_ms and restore_ms are its own: a restart on its own
newest checkpoint, which is also the copy's.

Every wait is bounded; the nodes are killed on the way out.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import psycopg
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_scale import free_port, wait_for  # noqa: E402  (the cluster benchmarks' waits)

BIN = os.environ.get("RTSQL_BIN_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))


class Node:
    def __init__(self, home, cluster, bootstrap, name, timeout):
        self.name = name
        self.port = free_port()
        os.makedirs(home, exist_ok=True)
        self.log = open(os.path.join(home, f"rtsqld.{name}.log"), "w")
        self.proc = subprocess.Popen(
            [os.path.join(BIN, "server", "rtsqld"), "--port", str(self.port), "--data-dir",
             os.path.join(home, "data"), "--cluster", cluster, "--kafka", bootstrap,
             "--node-name", name, "--node-timeout", str(timeout)],
            stdout=self.log, stderr=subprocess.STDOUT)
        wait_for(f"node {name} answers", lambda: self.query("SELECT 1"), 60)

    def query(self, sql):
        with psycopg.connect(host="127.0.0.1", port=self.port, dbname="rtsql", autocommit=True,
                             connect_timeout=10) as c:
            cur = c.execute(sql)
            return cur.fetchall() if cur.description else True

    def state(self, flow):
        return {r[0]: r[2] for r in self.query("SHOW FLOWS")}.get(flow)

    def progress(self, flow):
        v = self.query(f"SHOW PROGRESS {flow}")[0][0]
        return v if isinstance(v, dict) else json.loads(v)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)


def end_offset(bootstrap, topic):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-" + uuid.uuid4().hex})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
    finally:
        c.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=100000)
    ap.add_argument("--bootstrap", default="127.0.0.1:29700")
    ap.add_argument("--node-timeout", type=int, default=6)
    ap.add_argument("--rate", type=int, default=200)
    ap.add_argument("--restart", action="store_true")
    ap.add_argument("--standby", action="store_true")
    ap.add_argument("--shards", type=int, default=1)
    args = ap.parse_args()
    if args.restart and args.standby:
        ap.error("--restart and --standby measure two different things: give one")

    uid = "bf" + uuid.uuid4().hex[:8]
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    admin = AdminClient({"bootstrap.servers": args.bootstrap})
    for f in admin.create_topics([NewTopic(t, 1, 1) for t in (topic_in, topic_out)]).values():
        f.result(timeout=30)
    producer = Producer({"bootstrap.servers": args.bootstrap, "linger.ms": 20})
    for i in range(args.keys):
        producer.produce(topic_in, json.dumps({"k": f"k{i}", "ts": 0}).encode())
        if i % 10000 == 0:
            producer.poll(0)
    producer.flush(120)

    home = tempfile.mkdtemp(prefix="rtsql-failover-")
    nodes = []
    try:
        nodes = [Node(os.path.join(home, n), uid, args.bootstrap, n, args.node_timeout) for n in "ab"]
        opts = f"connector = 'kafka', 'kafka.bootstrap.servers' = '{args.bootstrap}'"
        nodes[0].query(f"CREATE SOURCE ev (k STRING, ts BIGINT) WITH ({opts}, subscribe = '{topic_in}', "
                       "startingOffsets = 'earliest', format = 'json')")
        nodes[0].query(f"CREATE SINK out WITH ({opts}, topic = '{topic_out}', format = 'json')")
        options = []
        if args.standby:
            options.append("'standby.replicas' = '1'")
        if args.shards > 1:
            options.append(f"'shards' = '{args.shards}'")
        with_options = f" WITH ({', '.join(options)})" if options else ""
        nodes[0].query("CREATE FLOW cnt INTO out CHECKPOINT INTERVAL '1 second'" + with_options +
                       " AS SELECT k, count(*) AS cnt, max(ts) AS ts FROM ev GROUP BY k")
        copies = ["cnt"] + [f"cnt#{i}" for i in range(1, args.shards)]
        # Every key counted, and checkpointed (so copied) twice after that,
        # on the node that runs the flow once the group has settled (the
        # second node to join takes half of the slots).
        wait_for("every key counted", lambda: end_offset(args.bootstrap, topic_out) >= args.keys, 600)

        def settled(flow):
            states = [n.state(flow) for n in nodes]
            return sorted(states) == ["remote", "running"] and nodes[states.index("running")]
        runners = {f: wait_for(f"one node runs {f}", lambda f=f: settled(f), 120) for f in copies}
        flow = "cnt"
        if args.shards > 1:
            # The copy that counts the streaming key: the one whose output grows
            # while only that key streams in.
            def outputs():
                return {f: runners[f].progress(f if f == "cnt" else f'"{f}"').get("sink", {})
                        .get("numOutputRows", 0) for f in copies}
            before = outputs()
            for i in range(50):
                producer.produce(topic_in, json.dumps({"k": "probe", "ts": 0}).encode())
            producer.flush(30)
            grown = wait_for("the probe key's copy writes",
                             lambda: [f for f, n in outputs().items() if n > before[f]], 120)
            flow = grown[0]
        quoted = flow if flow == "cnt" else f'"{flow}"'
        victim = runners[flow]
        first = wait_for("a checkpoint", lambda: victim.progress(quoted).get("checkpoint"), 120)["epoch"]
        wait_for("two more checkpoints",
                 lambda: (victim.progress(quoted).get("checkpoint") or {}).get("epoch", 0) >= first + 2, 120)
        heir = next(n for n in nodes if n is not victim)
        if args.standby:
            # The heir's standby has read the copy to one of those checkpoints.
            def warm():
                text = "\n".join(r[0] for r in heir.query(f"EXPLAIN FLOW {quoted}"))
                m = re.search(r"\(here, at epoch (\d+)\)", text)
                return m and int(m.group(1)) >= first + 2
            wait_for("the heir's standby caught up", warm, 600)

        # A steady stream, then the kill.
        consumer = Consumer({"bootstrap.servers": args.bootstrap, "group.id": "bench-" + uuid.uuid4().hex,
                             "auto.offset.reset": "latest", "enable.auto.commit": False})
        consumer.assign([TopicPartition(topic_out, 0, end_offset(args.bootstrap, topic_out))])
        sent = 0
        t_start = time.time()
        killed_ms = None
        after = None
        deadline = time.monotonic() + 300
        while after is None and time.monotonic() < deadline:
            now = time.time()
            while sent < (now - t_start) * args.rate:
                producer.produce(topic_in, json.dumps({"k": "probe", "ts": int(now * 1000)}).encode())
                sent += 1
            producer.poll(0)
            if killed_ms is None and now - t_start > 2:
                killed_ms = int(time.time() * 1000)
                victim.kill()
                if args.restart:
                    heir = Node(os.path.join(home, victim.name), uid, args.bootstrap, victim.name,
                                args.node_timeout)
                    nodes.append(heir)
            for m in consumer.consume(num_messages=1000, timeout=0.05):
                if m.error() or killed_ms is None:
                    continue
                if m.timestamp()[1] > killed_ms:
                    after = m.timestamp()[1]
                    break
        consumer.close()
        if after is None:
            raise SystemExit("no output from the other node within 300 s")
        recovery = wait_for("the heir's progress", lambda: heir.progress(quoted).get("recovery"), 60)
        state = heir.progress(quoted)["stateOperators"][0]["numRowsTotal"]
        print(json.dumps({
            "keys": args.keys,
            "shards": args.shards,
            "copy_keys": state,
            "mode": "restart" if args.restart else "failover-standby" if args.standby else "failover",
            "failover_ms": after - killed_ms,
            "floor_ms": args.node_timeout * 1000,
            "restore_ms": recovery.get("restoreMs"),
            "restored_epoch": recovery.get("fromEpoch"),
        }))
    finally:
        for n in nodes:
            n.kill()
        producer.flush(10)


if __name__ == "__main__":
    sys.exit(main())
