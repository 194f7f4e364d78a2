"""Nexmark correctness: every query of bench/nexmark/ on a small run (5,000
events, event time at 100 events/s so that the windows and sessions close,
rtsqld's embedded broker), each flow's sink output compared with the batch
reference of bench/nexmark/reference.py by bench/nexmark/nexmark.sh --check.

The comparison itself is checked too: a lost, a duplicated and a changed row
must each make it fail.
"""

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BIN_DIR, SOURCE_DIR

GEN = Path(os.environ.get("RTSQL_NEXMARK_GEN", BIN_DIR / "bench" / "rtsql_nexmark_gen"))
RUNNER = SOURCE_DIR / "bench" / "nexmark" / "nexmark.sh"
# Queries that run as one flow on every build (tests/e2e/test_nexmark_queries.py
# runs all 23 and skips those a build refuses).
QUERIES = ["q0", "q1", "q2", "q11", "q13", "q14"]

sys.path.insert(0, str(SOURCE_DIR / "bench" / "nexmark"))
import reference  # noqa: E402


def test_generator_is_deterministic_and_proportioned(tmp_path):
    assert GEN.exists(), f"{GEN} is not built"
    outs = []
    for d in ("a", "b"):
        p = subprocess.run([str(GEN), "--no-kafka", "--files", str(tmp_path / d), "--events",
                            "5000", "--event-rate", "100", "--base-time", "1700000000000"],
                           capture_output=True, text=True, timeout=60, check=True)
        outs.append(json.loads(p.stdout))
    assert outs[0]["persons"] == 100 and outs[0]["auctions"] == 300 and outs[0]["bids"] == 4600
    for kind in ("person", "auction", "bid"):
        a = (tmp_path / "a" / f"{kind}.jsonl").read_bytes()
        assert a == (tmp_path / "b" / f"{kind}.jsonl").read_bytes(), kind
    ev = reference.load_events(tmp_path / "a")
    # Event time advances at the event rate, in event order.
    times = [b["date_time"] for b in ev["bid"]]
    assert times == sorted(times) and times[0] >= 1700000000000 and times[-1] < 1700000050000
    # Ids as the reference generator makes them: persons and auctions numbered
    # from 1000, bids on existing (or barely future) auctions by recent persons.
    assert [p["id"] for p in ev["person"]] == list(range(1000, 1100))
    assert [a["id"] for a in ev["auction"]] == list(range(1000, 1300))
    assert all(10 <= a["category"] < 15 for a in ev["auction"])
    assert all(1000 <= b["auction"] < 1310 and 1000 <= b["bidder"] < 1110 for b in ev["bid"])
    assert all(100 <= b["price"] <= 100_000_000 for b in ev["bid"])


def _records(query, ev, wm):
    """Sink records as rtsql writes them, made from the reference's own rows."""
    exp = reference.expected(query, ev, wm)
    rows = list(exp.values()) if isinstance(exp, dict) else list(exp)

    def iso(ms):
        import datetime
        return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc) \
            .strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    if query == "q0":
        return [{"auction": r[0], "bidder": r[1], "price": r[2], "date_time": iso(r[3]),
                 "extra": r[4]} for r in rows]
    if query == "q5":
        return [{"auction": r[0], "num": r[1], "starttime": iso(r[2]), "endtime": iso(r[3])}
                for r in rows]
    raise ValueError(query)


@pytest.mark.parametrize("query", ["q0"])
def test_comparison_detects_differences(tmp_path, query):
    subprocess.run([str(GEN), "--no-kafka", "--files", str(tmp_path), "--events", "3000",
                    "--event-rate", "100", "--base-time", "1700000000000"],
                   capture_output=True, timeout=60, check=True)
    ev = reference.load_events(tmp_path)
    good = _records(query, ev, None)
    assert good
    assert reference.compare(query, ev, good)[0]
    lost = good[1:]
    assert not reference.compare(query, ev, lost)[0]
    changed = copy.deepcopy(good)
    if query == "q0":
        changed[7]["price"] += 1
        # An append flow must not write a row twice.
        assert not reference.compare(query, ev, good + good[:1])[0]
    else:
        changed[7]["num"] += 1
        # An update flow's last row per key counts: a stale update after the
        # final one is a failure, an earlier one is not.
        stale = dict(good[3], num=good[3]["num"] - 1)
        assert reference.compare(query, ev, [stale] + good)[0]
        assert not reference.compare(query, ev, good + [stale])[0]
    assert not reference.compare(query, ev, changed)[0]


def test_every_query_matches_the_reference():
    assert GEN.exists(), f"{GEN} is not built"
    p = subprocess.run(
        [str(RUNNER), "--events", "5000", "--event-rate", "100", "--check", "--timeout", "60",
         "--queries", " ".join(QUERIES)],
        capture_output=True, text=True, timeout=280, cwd=str(SOURCE_DIR),
        env={**os.environ, "RTSQL_BIN_DIR": str(BIN_DIR), "RTSQL_NEXMARK_GEN": str(GEN)})
    report = f"stdout:\n{p.stdout}\nstderr:\n{p.stderr[-4000:]}"
    verdicts = dict(re.findall(r"^\| (q\d+) \|.*\| (PASS|FAIL) \|$", p.stdout, re.M))
    assert sorted(verdicts) == sorted(QUERIES), report
    assert all(v == "PASS" for v in verdicts.values()), report
    assert p.returncode == 0, report
