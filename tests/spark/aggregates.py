"""The seeded groups and aggregate calls of the aggregate section of the
differential test against Apache Spark.

`rows()` draws the same records for a fixed seed: a group g, a position n (the
order of the records, which first/last/collect_list/string_agg depend on),
and x BIGINT, d DOUBLE, b BOOLEAN, s STRING, o INT, each NULL now and then;
then a group of NULLs only, a group of one row, and a group of 3,000 rows of
many distinct values.
`CALLS` are the aggregate calls; each is evaluated per group, in GROUP BY g.
tests/spark/record.py --aggregates records Spark's answers into
tests/data/spark/aggregates.jsonl (Spark reads the records in one partition,
in order); tests/e2e/test_spark_aggregates.py runs the same calls as one
flow over the same records on a one-partition topic and compares.
"""

import random

SEED = 4343
N_ROWS = 400
GROUPS = ["a", "b", "c", "d", "e", "f"]
MANY = 3000

CALLS = [
    "count_if(b)", "count_if(x > 5)", "count_if(b) FILTER (WHERE x > 0)",
    "stddev(d)", "std(x)", "stddev_samp(d)", "stddev_pop(d)", "variance(d)", "var_samp(x)",
    "var_pop(d)", "stddev(DISTINCT x)", "var_pop(x) FILTER (WHERE b)",
    "bool_and(b)", "bool_or(b)", "every(x > -20)", "some(x > 18)", "any(b)",
    "bool_and(b) FILTER (WHERE x > 15)",
    "max_by(x, o)", "min_by(x, o)", "max_by(s, d)", "min_by(s, x)", "max_by(d, s)",
    "first(x)", "first(x, true)", "last(s)", "last(s, true)", "any_value(d)",
    "any_value(d, true)", "first(s) FILTER (WHERE b)",
    "collect_list(x)", "array_agg(s)", "sort_array(collect_set(x))", "sort_array(collect_set(s))",
    "collect_list(DISTINCT x)", "collect_list(d) FILTER (WHERE x > 10)",
    "string_agg(s, ',')", "listagg(s, '; ')", "string_agg(s)", "string_agg(DISTINCT s, '|')",
    "approx_count_distinct(x)", "approx_count_distinct(s)", "approx_count_distinct(d)",
    "approx_count_distinct(n)", "approx_count_distinct(n, 0.2)", "approx_count_distinct(o)",
    "approx_count_distinct(b)", "approx_count_distinct(n, 0.01)",
    "count(*)", "count(x)", "sum(x)", "avg(d)", "min(s)", "max(d)",
    "percentile(x, 0.5)", "percentile(d, 0.25)", "percentile(x, array(0.1, 0.5, 0.9))",
    "percentile(d, 0)", "percentile(d, 1)", "percentile(x, 0.5) FILTER (WHERE x > 0)",
    "percentile_approx(x, 0.5)", "approx_percentile(d, 0.75)",
    "percentile_approx(d, array(0.01, 0.5, 0.99))", "percentile_approx(x, 0.5, 100)",
    "percentile_approx(o, 0.3) FILTER (WHERE b)", "percentile_approx(d, 0.0001)",
    "percentile(o, array(0.5))", "percentile_approx(o, 0.5)",
    "percentile_approx(x, array(0.2, 0.4), 1000)", "percentile(DISTINCT x, 0.5)",
    "percentile(x, 1.5)", "percentile_approx(x, 0.5, 0)", "percentile_approx(b, 0.5)",
]


def rows(seed=SEED, n=N_ROWS):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        def maybe(v, p=0.12):
            return None if rng.random() < p else v
        out.append({
            "g": rng.choice(GROUPS),
            "n": i,
            "x": maybe(rng.randint(-20, 20)),
            "d": maybe(round(rng.uniform(-1000, 1000), 3)),
            "b": maybe(rng.random() < 0.6),
            "s": maybe(rng.choice(["alpha", "beta", "gamma", "delta", "", "é日", "straße"])),
            "o": maybe(rng.randint(0, 50)),
        })
    # A group of NULLs only and a group of one row: Spark's empty-group and
    # one-row answers.
    out.append({"g": "nulls", "n": n, "x": None, "d": None, "b": None, "s": None, "o": None})
    out.append({"g": "one", "n": n + 1, "x": 7, "d": 2.5, "b": True, "s": "solo", "o": 3})
    # A group of many distinct values, where approx_count_distinct leaves
    # linear counting.
    for i in range(MANY):
        out.append({"g": "many", "n": n + 2 + i, "x": i % 37, "d": float(i) / 8,
                    "b": i % 3 == 0, "s": f"v{i % 700}", "o": i % 50})
    return out
