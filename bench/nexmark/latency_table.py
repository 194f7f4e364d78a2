#!/usr/bin/env python3
"""The Nexmark latency table: for each query, its e2e and processing P99 at
each paced rate of a sweep (bench/nexmark/nexmark_latency.sh), and the highest rate
whose e2e P99 stayed within the bound. Reads the --results JSONL rows that
bench/nexmark/nexmark.sh appends, one run per rate."""

import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--bound-ms", type=float, default=10.0)
    args = ap.parse_args()
    by_query, rates = {}, set()
    with open(args.results) as f:
        for line in f:
            r = json.loads(line)
            rate = int(r["rate"])
            rates.add(rate)
            by_query.setdefault(r["query"], {})[rate] = r
    rates = sorted(rates)

    def cell(r):
        if r is None:
            return "", None
        if "refused" in r or "error" in r:
            return "refused" if "refused" in r else "error", None
        rtm = r.get("rtm") or {}
        e2e = (rtm.get("e2eLatencyMs") or {}).get("P99")
        proc = (rtm.get("processingLatencyMs") or {}).get("P99")
        if not r.get("complete"):
            return "input not all read", None
        if e2e is None or proc is None or not r.get("outputRows"):
            return "no output", None
        return f"{e2e:.1f} ({proc:.1f})", e2e

    hdr = ["query"] + [f"{r:,}/s" for r in rates] + [f"max rate, e2e P99 <= {args.bound_ms:g} ms"]
    print("| " + " | ".join(hdr) + " |")
    print("|" + " --- |" * len(hdr))
    for q in sorted(by_query, key=lambda s: int(s[1:])):
        cells, best = [], None
        for rate in rates:
            text, e2e = cell(by_query[q].get(rate))
            cells.append(text)
            if e2e is not None and e2e <= args.bound_ms:
                best = rate
        print("| " + " | ".join([q] + cells + [f"{best:,}" if best else "below the lowest"]) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
