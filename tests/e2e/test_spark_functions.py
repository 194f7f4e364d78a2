"""rtsql's scalar functions against Apache Spark's recorded answers.

tests/data/spark/functions.jsonl holds Spark 4.3's answer (value and type, or
the error it raised) to each seeded call of tests/spark/calls.py, recorded by
tests/spark/record.py. This test asks rtsqld the same calls, one `SELECT` each
so that a call that fails hides no other, and compares value and type (two
errors agree whatever their kind). A call recorded with a session time zone
other than UTC (its `tz`) is asked after `SET TIME ZONE` to that zone. A
disagreement fails the test unless its call is listed in
tests/data/spark/known_differences.txt under a reason.

It prints the agreement per function family; RTSQL_SPARK_REPORT=FILE writes
every disagreement there (JSON lines), and RTSQL_SPARK_WRITE_KNOWN=FILE writes the current
disagreements in the form of the known-differences file.
"""

import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path

import psycopg
from psycopg.adapt import Loader

from conftest import SOURCE_DIR

sys.path.insert(0, str(SOURCE_DIR / "tests" / "spark"))
import canonical  # noqa: E402

DATA = SOURCE_DIR / "tests" / "data" / "spark"
GOLDEN = DATA / "functions.jsonl"
KNOWN = DATA / "known_differences.txt"

KINDS = {
    "value": "a different value, no error",
    "type": "the same value, another type",
    "raises": "rtsql raises where Spark answers",
    "answers": "rtsql answers where Spark raises",
}


class TextLoader(Loader):
    def load(self, data):
        return bytes(data).decode("utf-8", errors="replace")


def load_golden():
    with open(GOLDEN, encoding="utf-8") as f:
        header = json.loads(f.readline())
        return header, [json.loads(line) for line in f if line.strip()]


def load_known():
    """{call: reason}. A line `reason: TEXT` gives the reason of the calls below it."""
    known = {}
    reason = None
    for n, line in enumerate(KNOWN.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("reason:"):
            reason = line[len("reason:"):].strip()
            # RTSQL_SPARK_WRITE_KNOWN drafts new entries under "TODO": each
            # needs its real reason before it is checked in.
            assert not reason.startswith("TODO"), f"{KNOWN}:{n}: a difference without its reason"
            continue
        assert reason, f"{KNOWN}:{n}: a call before any `reason:` line"
        known[line] = reason
    return known


def ask(conn, sql):
    """(value, type) or ("error", SQLSTATE) for one call."""
    try:
        row = conn.execute(f"SELECT {sql}, typeof({sql})").fetchone()
    except psycopg.Error as e:
        if conn.broken or conn.closed or not e.sqlstate:
            raise  # the server went away: no answer to compare
        return "error", e.sqlstate
    value, type_name = row
    if value is not None and type_name.startswith(("array", "struct", "map")):
        # The server's text of a nested value is not meant to be read back
        # (strings are not quoted); its JSON is.
        value = conn.execute(f"SELECT to_json(array({sql}))").fetchone()[0]
    return "value", (value, type_name)


def call_key(golden):
    """A call as the known-differences file names it: with its session time zone
    first when it is not UTC."""
    tz = golden.get("tz")
    return f"SET TIME ZONE '{tz}'; {golden['sql']}" if tz else golden["sql"]


def classify(golden, answer):
    kind, got = answer
    if "error" in golden:
        return None if kind == "error" else "answers"
    if kind == "error":
        return "raises"
    value = canonical.from_rtsql(got[0], got[1])
    if canonical.same(value, golden["value"]) or canonical.same_map(value, golden["value"], golden["type"]):
        return None if got[1] == golden["type"] else "type"
    if canonical.same_but_type(golden["value"], golden["type"], value, got[1]):
        return "type"
    return "value"


def show(golden, answer):
    spark = (f"error {golden['error']}" if "error" in golden
             else f"{json.dumps(golden['value'], ensure_ascii=False)} :: {golden['type']}")
    kind, got = answer
    ours = (f"error {got}" if kind == "error"
            else f"{json.dumps(canonical.from_rtsql(got[0], got[1]), ensure_ascii=False)} :: {got[1]}")
    return f"spark {spark} | rtsql {ours}"


def test_functions_agree_with_spark(server):
    header, goldens = load_golden()
    known = load_known()
    results = []
    with server.connect() as conn:
        for info in psycopg.postgres.types:
            conn.adapters.register_loader(info.oid, TextLoader)
        zone = "UTC"
        for g in goldens:
            # A call recorded with another session time zone runs in it.
            if g.get("tz", "UTC") != zone:
                zone = g.get("tz", "UTC")
                conn.execute(f"SET TIME ZONE '{zone}'")
            answer = ask(conn, g["sql"])
            results.append((g, answer, classify(g, answer)))

    per_family = defaultdict(Counter)
    kinds = Counter()
    for g, _, kind in results:
        per_family[g["family"]]["calls"] += 1
        per_family[g["family"]]["agree"] += kind is None
        if kind:
            kinds[kind] += 1
    total = len(results)
    agree = sum(c["agree"] for c in per_family.values())
    print(f"\nrtsql against Spark {header['spark']}: {agree}/{total} calls agree "
          f"({100.0 * agree / total:.1f}%)")
    for family in sorted(per_family):
        c = per_family[family]
        print(f"  {family:12} {c['agree']:5}/{c['calls']:<5} {100.0 * c['agree'] / c['calls']:5.1f}%")
    for kind, text in KINDS.items():
        print(f"  {kinds[kind]:5} {text}")

    disagreements = [(g, a, k) for g, a, k in results if k]
    report = os.environ.get("RTSQL_SPARK_REPORT")
    if report:
        with open(report, "w", encoding="utf-8") as f:
            for g, a, k in disagreements:
                f.write(json.dumps({"kind": k, "sql": call_key(g), "function": g["function"],
                                    "answers": show(g, a)}, ensure_ascii=False) + "\n")
    write_known = os.environ.get("RTSQL_SPARK_WRITE_KNOWN")
    if write_known:
        by_reason = defaultdict(list)
        for g, a, k in disagreements:
            by_reason[known.get(call_key(g), f"TODO {k}")].append(call_key(g))
        with open(write_known, "w", encoding="utf-8") as f:
            for reason, sqls in by_reason.items():
                f.write(f"reason: {reason}\n" + "".join(s + "\n" for s in sqls) + "\n")

    stale = set(known) - {call_key(g) for g, _, _ in disagreements}
    if stale:
        print(f"  {len(stale)} known differences now agree: remove them from {KNOWN.name}")
    unexpected = [(g, a, k) for g, a, k in disagreements if call_key(g) not in known]
    assert not unexpected, (
        f"{len(unexpected)} calls disagree with Spark and are not in {KNOWN.name}:\n"
        + "\n".join(f"  [{k}] {call_key(g)}\n      {show(g, a)}" for g, a, k in unexpected[:60]))


def documented_differences():
    """{function: text} of docs/sql.md's table "Functions that differ from Spark"."""
    lines = (SOURCE_DIR / "docs" / "sql.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("| function | where it differs from Spark |") + 2
    table = {}
    for line in lines[start:]:
        if not line.startswith("| `"):
            break
        name, text = line[3:].split("` | ", 1)
        table[name] = text.rstrip(" |")
    return table


def test_show_functions_says_where_spark_differs(server):
    documented = documented_differences()
    assert len(documented) > 20, "the table of docs/sql.md was not found"
    with server.connect() as conn:
        cur = conn.execute("SHOW FUNCTIONS")
        columns = [d.name for d in cur.description]
        assert columns[-1] == "spark", columns
        rows = cur.fetchall()
        shown = {r[0]: r[-1] for r in rows if r[1] == "builtin" and r[-1] is not None}
        # The catalog's table and the docs' list are the same lines.
        assert shown == documented
        # A function that agrees with Spark has no line.
        assert {r[0]: r[-1] for r in rows}["upper"] is None
        described = conn.execute("DESCRIBE FUNCTION format_number").fetchall()
        assert described == [("function", "format_number", "builtin"),
                             ("spark", documented["format_number"], "builtin")]
