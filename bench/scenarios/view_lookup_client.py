#!/usr/bin/python3
"""Point lookups for bench/scenarios/view_lookup.sh: prepared statements over
pgwire against one server (rtsqld's materialized view, or PostgreSQL's table
of the same rows), at a fixed target rate, while the caller updates the rows.

    bench/scenarios/view_lookup_client.py --port P --sql SQL --keys N
        [--host H] [--user U] [--dbname D] [--rate R] [--clients C] [--seconds S]

Each of --clients processes runs SQL (one `%s` parameter: the key `k<i>`,
i uniform over --keys) as a prepared statement, paced to rate/clients lookups
a second, and records every lookup's latency. Prints one JSON line: lookups,
lookups/s, P50/P99/P999 in microseconds, misses (no row), errors. Every wait
is bounded (--seconds, plus 30 s to connect).
"""

import argparse
import json
import multiprocessing
import random
import time

import psycopg


def worker(args, index, out):
    rng = random.Random(index)
    lat = []
    misses = errors = 0
    try:
        conn = psycopg.connect(host=args.host, port=args.port, user=args.user,
                               dbname=args.dbname, connect_timeout=30, autocommit=True)
    except psycopg.Error as e:
        out.put({"lat": [], "misses": 0, "errors": 1, "error": str(e)})
        return
    per_client = args.rate / args.clients
    interval = 1.0 / per_client if per_client > 0 else 0.0
    start = time.monotonic()
    end = start + args.seconds
    due = start
    with conn:
        cur = conn.cursor()
        while True:
            now = time.monotonic()
            if now >= end:
                break
            if interval and now < due:
                time.sleep(min(due - now, end - now))
                continue
            due += interval
            key = f"k{rng.randrange(args.keys)}"
            t0 = time.perf_counter_ns()
            try:
                row = cur.execute(args.sql, (key,), prepare=True).fetchone()
            except psycopg.Error:
                errors += 1
                continue
            lat.append((time.perf_counter_ns() - t0) // 1000)
            if row is None:
                misses += 1
    out.put({"lat": lat, "misses": misses, "errors": errors})


def pct(sorted_lat, p):
    if not sorted_lat:
        return None
    return sorted_lat[min(len(sorted_lat) - 1, int(len(sorted_lat) * p))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--user", default="rtsql")
    ap.add_argument("--dbname", default="rtsql")
    ap.add_argument("--sql", required=True)
    ap.add_argument("--keys", type=int, required=True)
    ap.add_argument("--rate", type=float, default=10000)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=20)
    args = ap.parse_args()
    out = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=worker, args=(args, i, out))
             for i in range(args.clients)]
    for p in procs:
        p.start()
    results = [out.get(timeout=args.seconds + 60) for _ in procs]
    for p in procs:
        p.join(timeout=10)
    lat = sorted(x for r in results for x in r["lat"])
    print(json.dumps({
        "lookups": len(lat),
        "lookups_per_s": round(len(lat) / args.seconds, 1),
        "p50_us": pct(lat, 0.50), "p99_us": pct(lat, 0.99), "p999_us": pct(lat, 0.999),
        "misses": sum(r["misses"] for r in results),
        "errors": sum(r["errors"] for r in results),
    }))


if __name__ == "__main__":
    main()
