"""Differential tests of retracting aggregation against DuckDB: an aggregation
over the retractions of another aggregation, and count/sum/avg(DISTINCT x)
with FILTER (WHERE ...), on the same seeded random records.

The records (k, g, h, x, y) have 12 keys k in 4 classes g (3 keys each), a key
h that is NULL for some records, and NULLs among x and y. One flow counts per
(g, k) and aggregates those counts per g: every change of an inner group
reaches the outer one as an update-before (the old row taken out) and an
update-after (the new row put in), which the outer sum, max, min over its
multiset and count(DISTINCT) must follow exactly. The default Kafka sink
writes each group's new row (an update-before is not written), and a group
that empties would need a delete it cannot write: so one record per key goes
first, and once the outer flow has written all 12 of their changes, every
class holds 3 inner rows, and taking one out never empties it. The other flow
is a single GROUP BY h in update mode with DISTINCT and FILTER calls. Two
more run Spark's aggregates (count_if, stddev/variance, bool_and/bool_or,
max_by/min_by, string_agg, collect_set) that DuckDB has too: one per h, one
per g over the retracting per-(g, k) counts (those that take retractions).

The final row of each group (the last record the sink wrote for it) must
equal DuckDB's answer on the same records (doubles within a relative 1e-9).
"""

import json
import math
import random
import time

import duckdb
import pytest

from conftest import unique

SEED = 20261201
N_RECORDS = 2000
N_KEYS = 12
N_CLASSES = 4
WAIT_S = 60  # bound on every wait for a flow's output


def key_of(i):
    return f"k{i:02d}"


def class_of(i):
    return f"g{i % N_CLASSES}"


def make_records(rng):
    def record(i):
        return {"k": key_of(i), "g": class_of(i),
                "h": None if rng.random() < 0.05 else f"h{rng.randrange(5)}",
                "x": None if rng.random() < 0.1 else rng.randint(-20, 40),
                "y": None if rng.random() < 0.1 else rng.randint(-5, 5)}
    first = [record(i) for i in range(N_KEYS)]
    rest = [record(rng.randrange(N_KEYS)) for _ in range(N_RECORDS - N_KEYS)]
    return first, rest


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)


def final_rows(kafka, topic, key, done, what):
    """Reads TOPIC until the last row per KEY satisfies DONE (bounded by
    WAIT_S); returns that final state."""
    final = {}
    msgs = []
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        msgs = kafka.consume_to_end(topic, timeout=2)
        # An upsert topic: the last record of each Kafka key, a tombstone
        # (no value) deleting it.
        latest = {}
        for m in msgs:
            latest[m.key()] = None if m.value() is None else json.loads(m.value())
        final = {row[key]: row for row in latest.values() if row is not None}
        if done(final):
            return final
        time.sleep(0.2)
    raise AssertionError(f"{what}: after {len(msgs)} records the final rows are {final}")


@pytest.fixture(scope="module")
def setup(server, kafka):
    rng = random.Random(SEED)
    first, rest = make_records(rng)
    topic = unique("dagg_in")
    src = unique("dagg_src")
    names = {w: unique(f"dagg_{w}") for w in ("nested", "distinct", "spark", "spark_nested")}
    sinks = {w: unique(f"dagg_{w}_out") for w in names}
    kafka.create_topic(topic)
    stmts = [f"""CREATE SOURCE {src} (k STRING, g STRING, h STRING, x BIGINT, y INT)
                 WITH ({kafka.options()}, subscribe = '{topic}', startingOffsets = 'earliest',
                       format = 'json')"""]
    # The nested flow retracts rows (its outer groups lose inner rows): an
    # upsert sink writes each group's latest row under its key.
    modes = {"nested": ", 'mode' = 'upsert'", "distinct": "", "spark": "",
             "spark_nested": ", 'mode' = 'upsert'"}
    for w in names:
        stmts.append(f"CREATE SINK {sinks[w]}_s WITH ({kafka.options()}, topic = '{sinks[w]}', "
                     f"format = 'json'{modes[w]})")
    stmts.append(f"""CREATE FLOW {names['nested']} INTO {sinks['nested']}_s
        WITH ('shuffle.partitions' = '3') AS
        SELECT g, count(*) AS c, sum(n) AS s, max(n) AS m, min(mx) AS mn, max(sx) AS msx,
               count(DISTINCT n) AS dn, sum(sx) FILTER (WHERE mx > 0) AS fs
        FROM (SELECT g, k, count(*) AS n, sum(x) AS sx, min(x) AS mx FROM {src} GROUP BY g, k)
        GROUP BY g""")
    stmts.append(f"""CREATE FLOW {names['distinct']} INTO {sinks['distinct']}_s
        WITH ('shuffle.partitions' = '3') AS
        SELECT h, count(DISTINCT x) FILTER (WHERE y > 0) AS d, sum(DISTINCT x) AS sd,
               avg(DISTINCT x) FILTER (WHERE y < 0) AS ad, count(*) FILTER (WHERE x IS NULL) AS cn,
               count(*) AS n
        FROM {src} GROUP BY h""")
    # max_by/min_by order by x * 100 + y, which two records of a group may
    # share: the check skips such groups (the answer is then the first of
    # them to arrive, which DuckDB does not know).
    stmts.append(f"""CREATE FLOW {names['spark']} INTO {sinks['spark']}_s
        WITH ('shuffle.partitions' = '3') AS
        SELECT h, count_if(y > 0) AS ci, stddev_samp(x) AS ss, stddev_pop(x) AS sp,
               var_samp(y) AS vs, var_pop(y) AS vp, bool_and(x > -15) AS ba,
               bool_or(y > 4) AS bo, count_if(x > 0) FILTER (WHERE y < 0) AS cf,
               max_by(k, x * 100 + y) AS mb, min_by(k, x * 100 + y) AS nb,
               count(*) AS n
        FROM {src} GROUP BY h""")
    stmts.append(f"""CREATE FLOW {names['spark_nested']} INTO {sinks['spark_nested']}_s
        WITH ('shuffle.partitions' = '3') AS
        SELECT g, count_if(n > 40) AS ci, round(var_pop(n), 6) AS vp,
               round(stddev_samp(sx), 6) AS ss, bool_and(n > 30) AS ba, bool_or(mx < -15) AS bo,
               sort_array(collect_set(n)) AS cs, size(collect_list(n)) AS cl
        FROM (SELECT g, k, count(*) AS n, sum(x) AS sx, min(x) AS mx FROM {src} GROUP BY g, k)
        GROUP BY g""")
    with server.connect() as conn:
        for s in stmts:
            conn.execute(s)
    # One record per key first; every class then holds all its inner rows
    # before any of them is updated.
    kafka.produce(topic, first, key=lambda r: r["k"])
    got = kafka.consume(sinks["nested"], n=N_KEYS, timeout=WAIT_S)
    assert len(got) >= N_KEYS, f"the nested flow wrote {len(got)} of {N_KEYS} first changes"
    kafka.produce(topic, rest, key=lambda r: r["k"])
    db = duckdb.connect()
    db.execute("CREATE TABLE t (k VARCHAR, g VARCHAR, h VARCHAR, x BIGINT, y INTEGER)")
    db.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)",
                   [(r["k"], r["g"], r["h"], r["x"], r["y"]) for r in first + rest])
    yield {"db": db, "names": names, "sinks": sinks}
    with server.connect() as conn:
        for f in names.values():
            conn.execute(f"DROP FLOW IF EXISTS {f}")


def test_aggregate_over_aggregate_matches_duckdb(server, kafka, setup):
    db = setup["db"]
    want = {}
    for g, c, s, m, mn, msx, dn, fs in db.execute(
            "SELECT g, count(*), sum(n), max(n), min(mx), max(sx), count(DISTINCT n), "
            "sum(sx) FILTER (WHERE mx > 0) "
            "FROM (SELECT g, k, count(*) AS n, sum(x) AS sx, min(x) AS mx FROM t GROUP BY g, k) "
            "GROUP BY g").fetchall():
        want[g] = {"g": g, "c": c, "s": int(s), "m": m, "mn": mn,
                   "msx": None if msx is None else int(msx), "dn": dn,
                   "fs": None if fs is None else int(fs)}
    assert len(want) == N_CLASSES

    def done(final):
        return final == want

    final = final_rows(kafka, setup["sinks"]["nested"], "g", done, "aggregate over aggregate")
    assert final == want


def test_distinct_and_filter_match_duckdb(server, kafka, setup):
    db = setup["db"]
    want = {}
    for h, d, sd, ad, cn, n in db.execute(
            "SELECT h, count(DISTINCT x) FILTER (WHERE y > 0), sum(DISTINCT x), "
            "avg(DISTINCT x) FILTER (WHERE y < 0), count(*) FILTER (WHERE x IS NULL), count(*) "
            "FROM t GROUP BY h").fetchall():
        want[h] = (d, None if sd is None else int(sd), ad, cn, n)

    def same(final):
        if set(final) != set(want):
            return False
        for h, (d, sd, ad, cn, n) in want.items():
            r = final[h]
            if not (r["d"] == d and r["sd"] == sd and close(r["ad"], ad) and r["cn"] == cn
                    and r["n"] == n):
                return False
        return True

    final = final_rows(kafka, setup["sinks"]["distinct"], "h", same, "DISTINCT and FILTER")
    assert same(final)
    # Every record emitted its group's new row (update mode): n adds up.
    assert sum(r["n"] for r in final.values()) == N_RECORDS


def test_spark_aggregates_match_duckdb(server, kafka, setup):
    db = setup["db"]
    # max_by/min_by: DuckDB's arg_max/arg_min; a tie of the ordering would
    # leave the answer to the order of arrival, so the check skips groups
    # whose extreme ordering is shared by two records.
    want = {}
    for row in db.execute(
            "SELECT h, count_if(y > 0), stddev_samp(x), stddev_pop(x), var_samp(y), var_pop(y), "
            "bool_and(x > -15), bool_or(y > 4), count_if(x > 0) FILTER (WHERE y < 0), "
            "arg_max(k, x * 100 + y), arg_min(k, x * 100 + y), count(*), "
            "count(*) FILTER (WHERE x * 100 + y = (SELECT max(x * 100 + y) FROM t t2 "
            "  WHERE t2.h IS NOT DISTINCT FROM t.h)), "
            "count(*) FILTER (WHERE x * 100 + y = (SELECT min(x * 100 + y) FROM t t2 "
            "  WHERE t2.h IS NOT DISTINCT FROM t.h)) "
            "FROM t GROUP BY h").fetchall():
        want[row[0]] = row[1:]

    def same(final):
        if set(final) != set(want):
            return False
        for h, (ci, ss, sp, vs, vp, ba, bo, cf, mb, nb, n, nmax, nmin) in want.items():
            r = final[h]
            if not (r["ci"] == ci and close(r["ss"], ss) and close(r["sp"], sp)
                    and close(r["vs"], vs) and close(r["vp"], vp) and r["ba"] == ba
                    and r["bo"] == bo and r["cf"] == cf and r["n"] == n):
                return False
            if (nmax == 1 and r["mb"] != mb) or (nmin == 1 and r["nb"] != nb):
                return False
        return True

    final = final_rows(kafka, setup["sinks"]["spark"], "h", same, "Spark's aggregates")
    assert same(final)


def test_spark_aggregates_over_retractions_match_duckdb(server, kafka, setup):
    db = setup["db"]
    want = {}
    for g, ci, vp, ss, ba, bo, cs, cl in db.execute(
            "SELECT g, count_if(n > 40), round(var_pop(n), 6), round(stddev_samp(sx), 6), "
            "bool_and(n > 30), bool_or(mx < -15), list_sort(list(DISTINCT n)), count(n) "
            "FROM (SELECT g, k, count(*) AS n, sum(x) AS sx, min(x) AS mx FROM t GROUP BY g, k) "
            "GROUP BY g").fetchall():
        want[g] = {"g": g, "ci": ci, "vp": vp, "ss": ss, "ba": ba, "bo": bo, "cs": list(cs),
                   "cl": cl}
    assert len(want) == N_CLASSES

    def same(final):
        if set(final) != set(want):
            return False
        for g, w in want.items():
            r = final[g]
            for c in ("ci", "ba", "bo", "cs", "cl"):
                if r[c] != w[c]:
                    return False
            # Rounded to 6 places on both sides; a retraction's rounding may
            # land a value on the other side of a rounding boundary.
            if not (close_to(r["vp"], w["vp"]) and close_to(r["ss"], w["ss"])):
                return False
        return True

    final = final_rows(kafka, setup["sinks"]["spark_nested"], "g", same,
                       "Spark's aggregates over retractions")
    assert same(final)


def close_to(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(float(a) - float(b)) <= 2e-6
