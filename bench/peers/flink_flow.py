"""One benchmark flow of bench/scenarios/scenario.sh on Flink SQL (PyFlink, a local
mini-cluster), between the same Kafka topics.

    flink_flow.py SCENARIO --bootstrap HOST:PORT --in TOPIC [--in2 TOPIC]
                  --out TOPIC --jar CONNECTOR_JAR [--merchants CSV]
                  [--parallelism N] [--buffer-timeout MS]

Runs until killed. Each scenario's query is the SQL of bench/scenarios/scenario.sh
written for Flink; where Flink's differs, the comment says so and
docs/benchmarks.md lists it. Exits with status 3 and a line starting
"refused:" when Flink refuses the query.
"""
import argparse
import os
import sys

from pyflink.table import EnvironmentSettings, TableEnvironment

# The generator's record (bench/scenarios/latency.cpp). `ts` is epoch milliseconds with
# a fraction; `ev` is the event time made of it, `pt` the processing time.
COLUMNS = """
    ts_us BIGINT, ts DOUBLE, seq BIGINT, event_id BIGINT, user_id STRING,
    url STRING, amount DOUBLE, merchant_id BIGINT, pad STRING,
    ev AS TO_TIMESTAMP_LTZ(CAST(ts AS BIGINT), 3),
    pt AS PROCTIME(),
    WATERMARK FOR ev AS ev - INTERVAL '1' SECOND"""

# scenario -> (output columns with types, primary key or None, query).
# A primary key makes the sink upsert-kafka: Flink writes an updating result
# (an aggregate's changes) only to a sink with a key.
FLOWS = {
    "stateless": (
        "ts_us BIGINT, user_id STRING, url STRING, doubled DOUBLE", None,
        """SELECT ts_us, user_id, UPPER(url) AS url, amount * 2 AS doubled
           FROM clicks WHERE amount > 10"""),
    "groupby": (
        "user_id STRING, n BIGINT, ts_us BIGINT", "user_id",
        """SELECT user_id, COUNT(*) AS n, MAX(ts_us) AS ts_us
           FROM clicks GROUP BY user_id"""),
    # A new group per record: its key is the stamp and the record's padding.
    "groupby_new_key": (
        "ts_us BIGINT, pad STRING, n BIGINT", "ts_us, pad",
        """SELECT ts_us, pad, COUNT(*) AS n
           FROM clicks GROUP BY ts_us, pad"""),
    # Flink SQL has no broadcast join of a stream with a static table in
    # streaming mode (the BROADCAST hint is for batch), and a file is no
    # lookup source: this is a regular join that keeps both sides in state.
    "broadcast_join": (
        "ts_us BIGINT, user_id STRING, name STRING", None,
        """SELECT c.ts_us, c.user_id, m.name
           FROM clicks c JOIN merchants m ON c.merchant_id = m.id"""),
    # rtsql updates each (window, user) group per record; Flink's window
    # aggregations emit once when the window closes, so the per-record
    # updates are a regular aggregate on the window's start, whose state a
    # TTL (table.exec.state.ttl) clears instead of the watermark.
    "window": (
        "window_start TIMESTAMP_LTZ(3), user_id STRING, n BIGINT, total DOUBLE, ts_us BIGINT",
        "window_start, user_id",
        """SELECT FLOOR(ev TO SECOND) AS window_start, user_id, COUNT(*) AS n,
                  SUM(amount) AS total, MAX(ts_us) AS ts_us
           FROM clicks GROUP BY FLOOR(ev TO SECOND), user_id"""),
    # Flink's deduplication keeps the first row per event_id (ROW_NUMBER over
    # processing time), its state bounded by the TTL, not the watermark.
    "dedup": (
        "ts_us BIGINT, event_id BIGINT, user_id STRING, amount DOUBLE", None,
        """SELECT ts_us, event_id, user_id, amount FROM (
             SELECT *, ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY pt ASC) AS rn
             FROM clicks) WHERE rn = 1"""),
    "stream_join": (
        "ts_us BIGINT, event_id BIGINT, user_id STRING, imp_url STRING", None,
        """SELECT GREATEST(c.ts_us, i.ts_us) AS ts_us, c.event_id, c.user_id,
                  i.url AS imp_url
           FROM clicks c, impressions i
           WHERE c.event_id = i.event_id
             AND i.ev BETWEEN c.ev - INTERVAL '5' SECOND AND c.ev"""),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=sorted(FLOWS))
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--in", dest="inp", required=True)
    ap.add_argument("--in2")
    ap.add_argument("--out", required=True)
    ap.add_argument("--jar", required=True)
    ap.add_argument("--merchants")
    ap.add_argument("--parallelism", default="1")
    ap.add_argument("--buffer-timeout", default="1 ms",
                    help="how long a network buffer may wait before it is sent")
    a = ap.parse_args()

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    conf = env.get_config()
    conf.set("pipeline.jars", "file://" + os.path.abspath(a.jar))
    conf.set("parallelism.default", a.parallelism)
    # Flink's default (100 ms) trades latency for throughput between tasks.
    conf.set("execution.buffer-timeout.interval", a.buffer_timeout)
    conf.set("execution.checkpointing.interval", "5 s")
    conf.set("table.exec.state.ttl", "10 s" if a.scenario in ("window", "dedup") else "0 ms")

    def source(name, topic):
        env.execute_sql(f"""CREATE TABLE {name} ({COLUMNS}) WITH (
            'connector' = 'kafka', 'topic' = '{topic}',
            'properties.bootstrap.servers' = '{a.bootstrap}',
            'properties.group.id' = 'rtsql-peer-{name}',
            'scan.startup.mode' = 'earliest-offset',
            'format' = 'json', 'json.ignore-parse-errors' = 'true')""")

    source("clicks", a.inp)
    if a.in2:
        source("impressions", a.in2)
    if a.scenario == "broadcast_join":
        # The header line fails to parse and is skipped.
        env.execute_sql(f"""CREATE TABLE merchants (
            id BIGINT, name STRING, category STRING, risk DOUBLE) WITH (
            'connector' = 'filesystem', 'path' = 'file://{os.path.abspath(a.merchants)}',
            'format' = 'csv', 'csv.ignore-parse-errors' = 'true')""")

    cols, key, query = FLOWS[a.scenario]
    common = f"""'topic' = '{a.out}', 'properties.bootstrap.servers' = '{a.bootstrap}',
        'properties.linger.ms' = '0'"""
    if key:
        env.execute_sql(f"""CREATE TABLE sink ({cols}, PRIMARY KEY ({key}) NOT ENFORCED)
            WITH ('connector' = 'upsert-kafka', {common},
                  'key.format' = 'json', 'value.format' = 'json')""")
    else:
        env.execute_sql(f"""CREATE TABLE sink ({cols}) WITH (
            'connector' = 'kafka', {common}, 'format' = 'json',
            'sink.delivery-guarantee' = 'at-least-once')""")
    try:
        result = env.execute_sql(f"INSERT INTO sink {query}")
        print(f"started {a.scenario}", file=sys.stderr, flush=True)
        result.wait()
    except Exception as e:  # noqa: BLE001 - reported as the peer's refusal
        text = " ".join(str(e).strip().splitlines()[:3])[:600]
        print(f"refused: {text}", file=sys.stderr, flush=True)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
