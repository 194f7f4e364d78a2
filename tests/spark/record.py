#!/usr/bin/python3
"""Records Apache Spark's answers to the calls of tests/spark/calls.py.

Run it only to refresh tests/data/spark/functions.jsonl, never in CI (CI
compares rtsql with the file, tests/e2e/test_spark_functions.py):

    pip install --break-system-packages pyspark==4.3.0   # once; needs Java 17
    TZ=UTC python3 tests/spark/record.py                  # about ten minutes
    TZ=UTC python3 tests/spark/record.py --aggregates     # the aggregates only, a minute
    TZ=UTC python3 tests/spark/record.py --missing        # only calls not yet recorded

Spark runs in local mode with the session time zone UTC and ANSI mode as
Spark 4 has it by default (on); the calls of calls.session_zone_calls() run
with the session time zone they name, which their line keeps (`tz`). Each call is evaluated on its own as
`SELECT call`; a line of the file holds the call (`sql`), its function and
family, and either Spark's value rendered by tests/spark/canonical.py (`value`)
with its type as Spark names it (`type`), or the condition of the error Spark
raised (`error`). Calls of functions Spark does not have are left out.

With --aggregates it records tests/data/spark/aggregates.jsonl instead: each
call of tests/spark/aggregates.py over its seeded records, per group (GROUP
BY g, the records in one partition in their order), with Spark's type.
"""

import json
import os
import sys
import time
from pathlib import Path

os.environ["TZ"] = "UTC"
time.tzset()

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import aggregates as aggregates_module  # noqa: E402
import calls as calls_module  # noqa: E402
import canonical  # noqa: E402

OUT = HERE.parent / "data" / "spark" / "functions.jsonl"
# A call whose answer is longer than this (sequence(-1, 1000000)) is left
# out: the file stays small and the test fast.
MAX_LINE = 16384


def error_condition(e):
    for getter in ("getCondition", "getErrorClass"):
        f = getattr(e, getter, None)
        if f is not None:
            try:
                c = f()
            except Exception:  # noqa: BLE001 - an error without a condition
                c = None
            if c:
                return c
    return type(e).__name__


def evaluate(spark, sql, rec):
    """Spark's value and type into rec, or raises Spark's error."""
    df = spark.sql(f"SELECT {sql} AS v")
    type_name = df.schema.fields[0].dataType.simpleString()
    if type_name.startswith(("interval year", "interval month")):
        # PySpark collects no year-month interval: its value is Spark's own
        # text (INTERVAL '1-2' YEAR TO MONTH), as canonical.py writes rtsql's.
        rec["type"] = type_name
        rec["value"] = spark.sql(f"SELECT CAST({sql} AS STRING) AS v").collect()[0][0]
        return
    try:
        value = canonical.from_python(df.collect()[0][0])
    except (ValueError, OverflowError):
        # A date or timestamp past Python's years 1..9999: Spark's own text.
        value = spark.sql(f"SELECT CAST({sql} AS STRING) AS v").collect()[0][0]
    rec["type"] = type_name
    rec["value"] = value


def record_aggregates(spark):
    import pyspark
    from pyspark.sql.types import (BooleanType, DoubleType, IntegerType, LongType, StringType,
                                   StructField, StructType)

    schema = StructType([StructField("g", StringType()), StructField("n", LongType()),
                         StructField("x", LongType()), StructField("d", DoubleType()),
                         StructField("b", BooleanType()), StructField("s", StringType()),
                         StructField("o", IntegerType())])
    records = aggregates_module.rows()
    df = spark.createDataFrame([tuple(r[f.name] for f in schema.fields) for r in records],
                               schema).coalesce(1)
    df.createOrReplaceTempView("t")
    out = HERE.parent / "data" / "spark" / "aggregates.jsonl"
    lines = []
    for sql in aggregates_module.CALLS:
        rec = {"sql": sql}
        try:
            res = spark.sql(f"SELECT g, {sql} AS v FROM t GROUP BY g")
            rec["type"] = res.schema.fields[1].dataType.simpleString()
            rec["groups"] = {row[0]: canonical.from_python(row[1]) for row in res.collect()}
        except Exception as e:  # noqa: BLE001 - an error is an answer to record
            rec["error"] = error_condition(e)
        lines.append(rec)
    with open(out, "w", encoding="utf-8") as f:
        f.write(json.dumps({"spark": pyspark.__version__, "seed": aggregates_module.SEED})
                + "\n")
        for r in lines:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(lines)} aggregate calls recorded in {out}")


def main():
    import pyspark
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").appName("rtsql-goldens")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
             .config("spark.ui.enabled", "false")
             # from_avro and to_avro live in Spark's spark-avro package, of
             # Spark's version; RTSQL_SPARK_PACKAGES names another where the
             # registry has none of it (the goldens of 4.3.0 were recorded
             # with spark-avro 4.2.0, the newest Maven Central had).
             .config("spark.jars.packages", os.environ.get(
                 "RTSQL_SPARK_PACKAGES", f"org.apache.spark:spark-avro_2.13:{pyspark.__version__}"))
             .getOrCreate())
    spark.sparkContext.setLogLevel("OFF")
    assert spark.conf.get("spark.sql.ansi.enabled") == "true", "ANSI must be on, as Spark 4 has it"
    if "--aggregates" in sys.argv[1:]:
        record_aggregates(spark)
        spark.stop()
        return

    # --missing keeps the recorded answers and asks Spark only for new calls.
    recorded = {}
    if "--missing" in sys.argv[1:] and OUT.exists():
        with open(OUT, encoding="utf-8") as f:
            next(f)
            for line in f:
                rec = json.loads(line)
                recorded[(rec.get("tz"), rec["sql"])] = rec
    lines = []
    missing = set()
    all_calls = ([(*c, None) for c in calls_module.calls()]
                 + calls_module.session_zone_calls())
    started = time.monotonic()
    for n, (family, function, sql, tz) in enumerate(all_calls):
        if function in missing:
            continue
        if (tz, sql) in recorded:
            lines.append(recorded[(tz, sql)])
            continue
        rec = {"family": family, "function": function, "sql": sql}
        if tz:
            rec["tz"] = tz
        try:
            spark.conf.set("spark.sql.session.timeZone", tz or "UTC")
            evaluate(spark, sql, rec)
        except Exception as e:  # noqa: BLE001 - every error is an answer to record
            cond = error_condition(e)
            if cond == "UNRESOLVED_ROUTINE":
                missing.add(function)
                continue
            rec["error"] = cond
        lines.append(rec)
        if n % 200 == 0:
            print(f"{n}/{len(all_calls)} {time.monotonic() - started:.0f}s", file=sys.stderr)
    lines = [r for r in lines if r["function"] not in missing
             and len(json.dumps(r, ensure_ascii=False)) <= MAX_LINE]
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(json.dumps({"spark": pyspark.__version__, "seed": calls_module.SEED,
                            "not_in_spark": sorted(missing)}, ensure_ascii=False) + "\n")
        for r in lines:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(lines)} calls recorded in {OUT}; not in Spark: {sorted(missing)}")
    spark.stop()


if __name__ == "__main__":
    main()
