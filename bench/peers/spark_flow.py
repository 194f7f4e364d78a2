"""One benchmark flow of bench/scenarios/scenario.sh on Spark Structured Streaming in
real-time mode (PySpark, local mode), between the same Kafka topics.

    spark_flow.py SCENARIO --bootstrap HOST:PORT --in TOPIC [--in2 TOPIC]
                  --out TOPIC --checkpoint DIR --jars JAR,JAR... [--merchants CSV]
                  [--realtime INTERVAL] [--shuffle-partitions N]

Runs until killed. Each scenario's query is the SQL of bench/scenarios/scenario.sh
written for Spark; where Spark's differs (or refuses), the comment says so and
docs/benchmarks.md lists it. Exits with status 3 and a line starting
"refused:" when Spark refuses the query.
"""
import argparse
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

# The generator's record (bench/scenarios/latency.cpp). `ts` is epoch milliseconds with
# a fraction, read as a number and turned into the event time.
SCHEMA = ("ts_us BIGINT, ts DOUBLE, seq BIGINT, event_id BIGINT, user_id STRING, "
          "url STRING, amount DOUBLE, merchant_id BIGINT, pad STRING")

QUERIES = {
    "stateless": """
        SELECT ts_us, user_id, upper(url) AS url, amount * 2 AS doubled
        FROM clicks WHERE amount > 10""",
    # Update mode: every record changes its key's count, one output row each.
    "groupby": """
        SELECT user_id, count(*) AS n, max(ts_us) AS ts_us
        FROM clicks GROUP BY user_id""",
    # A new group per record: its key is the stamp and the record's padding.
    "groupby_new_key": """
        SELECT ts_us, pad, count(*) AS n
        FROM clicks GROUP BY ts_us, pad""",
    # The static side is broadcast explicitly (it is also under Spark's
    # automatic broadcast threshold).
    "broadcast_join": """
        SELECT /*+ BROADCAST(m) */ c.ts_us, c.user_id, m.name
        FROM clicks c JOIN merchants m ON c.merchant_id = m.id""",
    "window": """
        SELECT window.start AS window_start, user_id, count(*) AS n,
               sum(amount) AS total, max(ts_us) AS ts_us
        FROM clicks GROUP BY window(ts, '1 second'), user_id""",
    # dedup and stream_join are built with the DataFrame API below.
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario")
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--in", dest="inp", required=True)
    ap.add_argument("--in2")
    ap.add_argument("--out", required=True)
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--merchants")
    ap.add_argument("--jars", required=True, help="the Kafka connector's jars, comma-separated")
    ap.add_argument("--realtime", default="5 seconds",
                    help="real-time trigger's checkpoint interval")
    ap.add_argument("--shuffle-partitions", default="1")
    a = ap.parse_args()

    spark = (SparkSession.builder.appName(f"rtsql-peer-{a.scenario}")
             # Real-time mode runs every stage's tasks at once, so the local
             # "cluster" needs a slot per task of every stage, not per core.
             .master("local[8]")
             .config("spark.jars", a.jars)
             .config("spark.sql.shuffle.partitions", a.shuffle_partitions)
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.sql.streaming.stateStore.providerClass",
                     "org.apache.spark.sql.execution.streaming.state."
                     "RocksDBStateStoreProvider")
             .getOrCreate())
    spark.sparkContext.setLogLevel("WARN")

    def source(topic, view):
        df = (spark.readStream.format("kafka")
              .option("kafka.bootstrap.servers", a.bootstrap)
              .option("subscribe", topic)
              .option("startingOffsets", "earliest")
              .load()
              .selectExpr(f"from_json(CAST(value AS STRING), '{SCHEMA}') AS r")
              .selectExpr("r.*")
              .withColumn("ts", F.expr("timestamp_millis(CAST(ts AS BIGINT))")))
        if a.scenario in ("window", "dedup", "stream_join"):
            df = df.withWatermark("ts", "1 second")
        df.createOrReplaceTempView(view)
        return df

    clicks = source(a.inp, "clicks")
    if a.scenario == "broadcast_join":
        (spark.read.option("header", "true")
         .schema("id BIGINT, name STRING, category STRING, risk DOUBLE")
         .csv(a.merchants).cache().createOrReplaceTempView("merchants"))

    if a.scenario in QUERIES:
        result = spark.sql(QUERIES[a.scenario])
    elif a.scenario == "dedup":
        # rtsql: DISTINCT ON (event_id) WITHIN WATERMARK; Spark's match is
        # dropDuplicatesWithinWatermark (tried first, below).
        result = (clicks.dropDuplicatesWithinWatermark(["event_id"])
                  .select("ts_us", "event_id", "user_id", "amount"))
    elif a.scenario == "stream_join":
        source(a.in2, "impressions")
        result = spark.sql("""
            SELECT greatest(c.ts_us, i.ts_us) AS ts_us, c.event_id, c.user_id,
                   i.url AS imp_url
            FROM clicks c JOIN impressions i
              ON c.event_id = i.event_id
             AND i.ts BETWEEN c.ts - INTERVAL 5 SECONDS AND c.ts""")
    else:
        print(f"unknown scenario {a.scenario}", file=sys.stderr)
        return 2

    # Real-time mode refuses dropDuplicatesWithinWatermark (when the query
    # starts running); the nearest it takes is dropDuplicates on (event_id,
    # ts), whose state the watermark evicts (a repeat carries its original's
    # event time).
    fallback = None
    if a.scenario == "dedup":
        fallback = (clicks.dropDuplicates(["event_id", "ts"])
                    .select("ts_us", "event_id", "user_id", "amount"))
    suffix = ""
    while True:
        try:
            q = start(result, a, suffix)
            print(f"started {a.scenario}", file=sys.stderr, flush=True)
            q.awaitTermination()
            return 0
        except Exception as e:  # noqa: BLE001 - reported as the peer's refusal
            if fallback is None:
                print(f"refused: {first_line(e)}", file=sys.stderr, flush=True)
                return 3
            print(f"note: refused dropDuplicatesWithinWatermark, running dropDuplicates"
                  f"(event_id, ts) instead: {first_line(e)}", file=sys.stderr, flush=True)
            result, fallback, suffix = fallback, None, "-fallback"


def first_line(e):
    text = str(e).strip()
    return " ".join(text.splitlines()[:3])[:600]


def start(df, a, checkpoint_suffix=""):
    return (df.selectExpr("to_json(struct(*)) AS value")
            .writeStream.format("kafka")
            .option("kafka.bootstrap.servers", a.bootstrap)
            .option("topic", a.out)
            # The collector's own producer sends at once too.
            .option("kafka.linger.ms", "0")
            .option("checkpointLocation", a.checkpoint + checkpoint_suffix)
            .outputMode("update")
            .trigger(realTime=a.realtime)
            .start())


if __name__ == "__main__":
    sys.exit(main())
