#!/usr/bin/env python3
"""Batch reference of the Nexmark queries of bench/nexmark/*.sql.

Computes each query's expected output from the events the generator wrote
(rtsql_nexmark_gen --files DIR: person.jsonl, auction.jsonl, bid.jsonl) and
compares it with what the flow wrote to its sink:

- append flows (q0 q1 q2 q7 q8 q11 q13 q14): the rows as a multiset, so a lost,
  duplicated or wrong row fails;
- update flows (q5): the last row written for each group key (window and
  auction) must be the final count of that group, and every group must be there.

Queries whose output depends on which windows the watermark closed (q7: the
windows of q7_max; q11: the sessions) take the flow's final watermark as an
argument (SHOW PROGRESS eventTime.watermark): a window or session is closed
when its end is at or before the watermark.

Usage as a program:
  reference.py expected --files DIR --query q5 [--watermark ISO]   (JSON lines out)
  reference.py compare --files DIR --query q5 --output OUT.jsonl [--watermark ISO]
"""

import argparse
import collections
import datetime
import json
import sys
from pathlib import Path

GAP_MS = 10_000  # q11's session gap
SIDE_INPUT_ROWS = 10_000  # q13's static table

QUERIES = ["q0", "q1", "q2", "q5", "q7", "q8", "q11", "q13", "q14"]
# The input streams each query reads, for its throughput.
INPUTS = {"q8": ["person", "auction"]}
UPDATE_KEYS = {"q5": ("auction", "starttime", "endtime")}
# The flow whose final watermark decides which windows are closed.
WATERMARK_FLOW = {"q7": "q7_max", "q11": "q11"}


def ts_ms(v):
    """Epoch milliseconds of a timestamp as the generator ('2024-05-01
    10:00:00.123') or rtsql's json sink ('2024-05-01T10:00:00.123Z') writes it."""
    if isinstance(v, (int, float)):
        return int(v)
    s = v.strip().replace(" ", "T")
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    d = datetime.datetime.fromisoformat(s)
    if d.tzinfo is None:
        d = d.replace(tzinfo=datetime.timezone.utc)
    return round(d.timestamp() * 1000)


def price_eur(cents):
    # 0.908 * price as a DOUBLE, compared to the micro-cent.
    return round(0.908 * cents, 6)


def side_value(key):
    return f"value-{key}"


def write_side_input(path):
    """The static table of q13: key 0..9999 and a value naming it."""
    with open(path, "w") as f:
        f.write("key,value\n")
        for k in range(SIDE_INPUT_ROWS):
            f.write(f"{k},{side_value(k)}\n")


def load_events(files):
    ev = {}
    for kind in ("person", "auction", "bid"):
        rows = []
        p = Path(files) / f"{kind}.jsonl"
        with open(p) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    r["date_time"] = ts_ms(r["date_time"])
                    rows.append(r)
        ev[kind] = rows
    return ev


def hour_utc(ms):
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).hour


def closed(end_ms, watermark_ms):
    return watermark_ms is not None and end_ms <= watermark_ms


def expected(query, ev, watermark_ms=None):
    """The expected rows: a list of tuples (append) or a dict key -> row (update)."""
    bids = ev["bid"]
    if query == "q0":
        return [(b["auction"], b["bidder"], b["price"], b["date_time"], b["extra"]) for b in bids]
    if query == "q1":
        return [(b["auction"], b["bidder"], price_eur(b["price"]), b["date_time"], b["extra"])
                for b in bids]
    if query == "q2":
        return [(b["auction"], b["price"]) for b in bids if b["auction"] % 123 == 0]
    if query == "q5":
        # Sliding windows of 10 s every 2 s, aligned on the epoch: a bid is in
        # the 5 windows whose start is a multiple of 2 s in (t - 10 s, t].
        counts = collections.Counter()
        for b in bids:
            t = b["date_time"]
            last = t - t % 2000
            for start in range(last, t - 10_000, -2000):
                counts[(b["auction"], start, start + 10_000)] += 1
        return {k: (k[0], n, k[1], k[2]) for k, n in counts.items()}
    if query == "q7":
        # The maximum of each closed tumbling 10 s window, then the bids of
        # that price whose time is in [end - 10 s, end] (both ends included).
        maxima = {}
        for b in bids:
            end = b["date_time"] - b["date_time"] % 10_000 + 10_000
            maxima[end] = max(maxima.get(end, b["price"]), b["price"])
        by_price = collections.defaultdict(list)
        for end, price in maxima.items():
            if closed(end, watermark_ms):
                by_price[price].append(end)
        out = []
        for b in bids:
            for end in by_price.get(b["price"], ()):
                if b["date_time"] <= end <= b["date_time"] + 10_000:
                    out.append((b["auction"], b["price"], b["bidder"], b["date_time"],
                                b["extra"]))
        return out
    if query == "q8":
        # Persons who opened an auction in the 10 s tumbling window in which
        # they registered: one row per person and window.
        windows = collections.defaultdict(set)
        for a in ev["auction"]:
            windows[a["seller"]].add(a["date_time"] // 10_000)
        out = set()
        for p in ev["person"]:
            w = p["date_time"] // 10_000
            if w in windows.get(p["id"], ()):
                out.add((p["id"], p["name"], w * 10_000))
        return sorted(out)
    if query == "q11":
        # Per bidder, sessions closed by a 10 s gap: a bid at or after the
        # session's end (last bid + gap) starts a new one.
        times = collections.defaultdict(list)
        for b in bids:
            times[b["bidder"]].append(b["date_time"])
        out = []
        for bidder, ts in times.items():
            ts.sort()
            start, last, n = ts[0], ts[0], 1
            for t in ts[1:]:
                if t >= last + GAP_MS:
                    out.append((bidder, n, start, last + GAP_MS))
                    start, n = t, 0
                last = max(last, t)
                n += 1
            out.append((bidder, n, start, last + GAP_MS))
        return [r for r in out if closed(r[3], watermark_ms)]
    if query == "q13":
        return [(b["auction"], b["bidder"], b["price"], b["date_time"],
                 side_value(b["auction"] % 10_000)) for b in bids]
    if query == "q14":
        out = []
        for b in bids:
            eur = 0.908 * b["price"]
            if not (eur > 1_000_000 and eur < 50_000_000):
                continue
            h = hour_utc(b["date_time"])
            kind = ("dayTime" if 8 <= h <= 18 else
                    "nightTime" if h <= 6 or h >= 20 else "otherTime")
            out.append((b["auction"], b["bidder"], round(eur, 6), kind, b["date_time"],
                        b["extra"], b["extra"].count("c")))
        return out
    raise ValueError(f"unknown query {query}")


def actual_row(query, r):
    """One sink record (a dict) as the tuple expected() makes."""
    if query == "q0":
        return (r["auction"], r["bidder"], r["price"], ts_ms(r["date_time"]), r["extra"])
    if query == "q1":
        return (r["auction"], r["bidder"], round(float(r["price"]), 6), ts_ms(r["date_time"]),
                r["extra"])
    if query == "q2":
        return (r["auction"], r["price"])
    if query == "q5":
        return (r["auction"], r["num"], ts_ms(r["starttime"]), ts_ms(r["endtime"]))
    if query == "q7":
        return (r["auction"], r["price"], r["bidder"], ts_ms(r["date_time"]), r["extra"])
    if query == "q8":
        return (r["id"], r["name"], ts_ms(r["starttime"]))
    if query == "q11":
        return (r["bidder"], r["bid_count"], ts_ms(r["starttime"]), ts_ms(r["endtime"]))
    if query == "q13":
        return (r["auction"], r["bidder"], r["price"], ts_ms(r["date_time"]), r["value"])
    if query == "q14":
        return (r["auction"], r["bidder"], round(float(r["price"]), 6), r["bidTimeType"],
                ts_ms(r["date_time"]), r["extra"], r["c_counts"])
    raise ValueError(f"unknown query {query}")


def compare(query, ev, records, watermark_ms=None):
    """Compares the sink records (dicts, in the order read; for update flows
    the order within a key must be the write order) with the reference.
    Returns (ok, message)."""
    exp = expected(query, ev, watermark_ms)
    try:
        rows = [actual_row(query, r) for r in records]
    except (KeyError, TypeError, ValueError) as e:
        return False, f"unreadable output row: {e!r}"
    if query in UPDATE_KEYS:
        latest = {}
        for row in rows:
            latest[(row[0], row[2], row[3])] = row
        missing = [k for k in exp if k not in latest]
        extra = [k for k in latest if k not in exp]
        wrong = [k for k in exp if k in latest and latest[k] != exp[k]]
        ok = not (missing or extra or wrong)
        msg = (f"{len(exp)} keys expected, {len(latest)} keys in {len(rows)} updates; "
               f"missing {len(missing)}, unexpected {len(extra)}, wrong final value {len(wrong)}")
        if wrong:
            k = wrong[0]
            msg += f"; e.g. {k}: got {latest[k]}, expected {exp[k]}"
        elif missing:
            msg += f"; e.g. missing {exp[missing[0]]}"
        elif extra:
            msg += f"; e.g. unexpected {latest[extra[0]]}"
        return ok, msg
    want = collections.Counter(exp)
    got = collections.Counter(rows)
    missing = want - got
    extra = got - want
    ok = not missing and not extra
    msg = (f"{sum(want.values())} rows expected, {len(rows)} received; "
           f"missing {sum(missing.values())}, unexpected {sum(extra.values())}")
    if missing:
        msg += f"; e.g. missing {next(iter(missing))}"
    if extra:
        msg += f"; e.g. unexpected {next(iter(extra))}"
    return ok, msg


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("command", choices=["expected", "compare"])
    ap.add_argument("--files", required=True)
    ap.add_argument("--query", required=True, choices=QUERIES)
    ap.add_argument("--output", help="the sink's records, JSON lines, in the order read")
    ap.add_argument("--watermark", help="the final watermark (ISO text or epoch ms)")
    a = ap.parse_args()
    ev = load_events(a.files)
    wm = None
    if a.watermark:
        wm = int(a.watermark) if a.watermark.isdigit() else ts_ms(a.watermark)
    if a.command == "expected":
        exp = expected(a.query, ev, wm)
        for row in (exp.values() if isinstance(exp, dict) else exp):
            print(json.dumps(row))
        return 0
    if not a.output:
        ap.error("compare needs --output")
    with open(a.output) as f:
        records = [json.loads(line) for line in f if line.strip()]
    ok, msg = compare(a.query, ev, records, wm)
    print(f"{a.query}: {'PASS' if ok else 'FAIL'}: {msg}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
