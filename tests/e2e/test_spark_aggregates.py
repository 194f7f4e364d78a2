"""rtsql's aggregates against Apache Spark's recorded answers.

tests/data/spark/aggregates.jsonl holds Spark 4.3's answer per group to each
aggregate call of tests/spark/aggregates.py over its seeded records, recorded
by `tests/spark/record.py --aggregates` (GROUP BY g, the records in one
partition in their order). This test produces the same records to one
partition of a topic, runs every call that binds as a column of one GROUP BY
g flow, and compares the final row of each group with Spark's, value by value
(doubles exactly: stddev and variance follow Spark's operations). A call that
rtsql refuses where Spark answers, or a different value, fails the test
unless the call is listed in KNOWN with its reason.
"""

import json
import sys
import time

import psycopg
import pytest

from conftest import SOURCE_DIR, unique

sys.path.insert(0, str(SOURCE_DIR / "tests" / "spark"))
import aggregates  # noqa: E402
import canonical  # noqa: E402

GOLDEN = SOURCE_DIR / "tests" / "data" / "spark" / "aggregates.jsonl"
WAIT_S = 120  # bound on the wait for the flow's last update

# Calls whose answer differs from Spark's on purpose (docs/sql.md).
KNOWN = {}


def load_golden():
    with open(GOLDEN, encoding="utf-8") as f:
        header = json.loads(f.readline())
        return header, [json.loads(line) for line in f if line.strip()]


def run_flow(server, kafka, src_cols, calls, records, where):
    """Runs `calls` (index -> sql) as one GROUP BY g flow over `records`;
    returns ({group: final row}, {index: SQLSTATE of a refused call})."""
    topic, src, sink = unique("sagg_in"), unique("sagg_src"), unique("sagg_out")
    flow = unique("sagg")
    kafka.create_topic(topic)
    refused = {}
    with server.connect() as conn:
        conn.execute(f"""CREATE SOURCE {src} ({src_cols})
                         WITH ({kafka.options()}, subscribe = '{topic}',
                               startingOffsets = 'earliest', format = 'json')""")
        conn.execute(f"CREATE SINK {sink}_s WITH ({kafka.options()}, topic = '{sink}', "
                     "format = 'json')")
        columns = []
        for i, sql in calls.items():
            try:
                conn.execute(f"EXPLAIN CREATE FLOW {flow} INTO {sink}_s AS "
                             f"SELECT g, {sql} AS c{i} FROM {src} GROUP BY g")
                columns.append(f"{sql} AS c{i}")
            except psycopg.Error as e:
                refused[i] = e.sqlstate
        conn.execute(f"CREATE FLOW {flow} INTO {sink}_s AS SELECT g, {', '.join(columns)} "
                     f"FROM {src} WHERE {where} GROUP BY g")
    kafka.produce(topic, records, partition=0)
    # Every input row the WHERE keeps emits its group's new row: the last of
    # each group is its final answer once all of them arrived.
    expected = sum(1 for r in records if (r["g"] == "many") == (where == "g = 'many'"))
    final = {}
    deadline = time.monotonic() + WAIT_S
    seen = 0
    while time.monotonic() < deadline:
        msgs = kafka.consume_to_end(sink, timeout=5)
        seen = len(msgs)
        final = {}
        for m in msgs:
            row = json.loads(m.value())
            final[row["g"]] = row
        if seen >= expected:
            break
        time.sleep(0.5)
    assert seen == expected, f"the flow wrote {seen} of {expected} updates"
    with server.connect() as conn:
        conn.execute(f"DROP FLOW {flow}")
    return final, refused


def test_aggregates_agree_with_spark(server, kafka):
    header, goldens = load_golden()
    assert [g["sql"] for g in goldens] == aggregates.CALLS, "re-record the goldens"
    records = aggregates.rows()
    cols = "g STRING, n BIGINT, x BIGINT, d DOUBLE, b BOOLEAN, s STRING, o INT"
    # The group of 3,000 rows runs apart, with the calls whose answer stays
    # small: an update of a 3,000-value list per row would outgrow the
    # embedded broker's topic before the test reads it.
    # A call Spark refuses is offered too: rtsql must refuse it (at EXPLAIN).
    calls = {i: g["sql"] for i, g in enumerate(goldens)}
    small = {i: sql for i, sql in calls.items()
             if "error" not in goldens[i]
             and not goldens[i]["type"].startswith(("array", "string"))}
    final, refused = run_flow(server, kafka, cols, calls, records, "g <> 'many'")
    many, _ = run_flow(server, kafka, cols, small, records, "g = 'many'")
    final.update(many)

    agree, total, unexpected = 0, 0, []
    for i, g in enumerate(goldens):
        total += 1
        if "error" in g:
            ok = i in refused
            detail = f"spark error {g['error']}, rtsql {'refused' if ok else 'answered'}"
        elif i in refused:
            ok, detail = False, f"rtsql refused it ({refused[i]})"
        else:
            diffs = []
            for group, want in sorted(g["groups"].items()):
                if group == "many" and i not in small:
                    continue
                got = canonical._from_json(final.get(group, {}).get(f"c{i}"))
                if not canonical.same(got, want):
                    diffs.append(f"{group}: spark {json.dumps(want)[:80]} rtsql {json.dumps(got)[:80]}")
            ok, detail = not diffs, "; ".join(diffs[:3])
        agree += ok
        print(f"  {'ok  ' if ok else 'DIFF'} {g['sql']}" + ("" if ok else f"  -- {detail}"))
        if not ok and g["sql"] not in KNOWN:
            unexpected.append(f"{g['sql']}: {detail}")
    print(f"\nrtsql against Spark {header['spark']}: {agree}/{total} aggregate calls agree "
          f"in every group ({100.0 * agree / total:.1f}%)")
    assert not unexpected, "calls that disagree with Spark:\n" + "\n".join(unexpected)
