#!/usr/bin/python3
"""Client load for bench/scenarios/connections.sh: many idle sessions and a few live
queries held open against one rtsqld, while the benchmark measures a flow's
end-to-end latency beside them.

    bench/scenarios/connections_client.py --port P [--host H] [--idle 1000] [--live 50]
                                [--live-sql SQL] [--seconds S] [--user U]

Opens --idle connections that only log in and wait, then --live connections
that each run --live-sql (a `SELECT ... FROM <source>` without LIMIT: a live
query whose rows stream for as long as it runs) and read its rows as they
come. Prints "READY idle=N live=M" on stdout once every session is open and
every live query has started, then holds everything until stdin closes, a
SIGTERM arrives or --seconds pass. On the way out it cancels the live
queries and prints one JSON line: sessions opened, live rows received, and
errors. Every wait is bounded.

Everything runs in one asyncio loop (psycopg's async connections), so 1,000
sessions cost one process and one thread.
"""

import argparse
import asyncio
import json
import signal
import sys
import time

import psycopg


async def open_conn(args, sem):
    async with sem:
        return await psycopg.AsyncConnection.connect(
            host=args.host, port=args.port, user=args.user, dbname="rtsql",
            connect_timeout=30, autocommit=True)


async def live_query(conn, sql, counts, i, stop):
    """Streams SQL's rows until `stop` is set or the query ends; returns an
    error message, or None."""
    try:
        async with conn.cursor() as cur:
            # stream() reads row by row (single-row mode), so rows arrive as
            # the server sends them rather than at the end, which never comes.
            async for _row in cur.stream(sql):
                counts[i] += 1
                if stop.is_set():
                    break
    except psycopg.Error as e:
        if not stop.is_set():
            return f"live query {i}: {e}"
    return None


async def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--user", default="rtsql")
    ap.add_argument("--idle", type=int, default=1000)
    ap.add_argument("--live", type=int, default=50)
    ap.add_argument("--live-sql", default="")
    ap.add_argument("--seconds", type=float, default=600)
    args = ap.parse_args()
    if args.live and not args.live_sql:
        ap.error("--live needs --live-sql")

    t0 = time.monotonic()
    sem = asyncio.Semaphore(50)  # logins in flight at once
    idle = await asyncio.wait_for(
        asyncio.gather(*(open_conn(args, sem) for _ in range(args.idle))), timeout=300)
    live_conns = await asyncio.wait_for(
        asyncio.gather(*(open_conn(args, sem) for _ in range(args.live))), timeout=300)
    # Every session answers a statement: it is open on the server, not only
    # in the accept queue.
    for c in idle + live_conns:
        await asyncio.wait_for(c.execute("SELECT 1"), timeout=60)
    opened_s = time.monotonic() - t0

    stop = asyncio.Event()
    counts = [0] * args.live
    tasks = [asyncio.create_task(live_query(c, args.live_sql, counts, i, stop))
             for i, c in enumerate(live_conns)]
    # psycopg shows a live query's start only as its first row; give the
    # temporary flows time to start (one that failed at once shows in errors).
    await asyncio.sleep(3)
    failed = [t.result() for t in tasks if t.done() and t.result()]
    if failed:
        print(f"live queries failed: {failed[:3]}", file=sys.stderr, flush=True)
    print(f"READY idle={len(idle)} live={len(live_conns)} opened_in_s={opened_s:.1f}",
          flush=True)

    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, done.set)
    loop.add_signal_handler(signal.SIGINT, done.set)
    try:
        loop.add_reader(sys.stdin.fileno(),
                        lambda: done.set() if not sys.stdin.readline() else None)
    except (OSError, ValueError):
        pass  # stdin is a file or /dev/null: --seconds and signals still end the run
    try:
        await asyncio.wait_for(done.wait(), timeout=args.seconds)
    except asyncio.TimeoutError:
        pass

    stop.set()
    for c in live_conns:
        try:
            c.cancel()  # ends the live query on the server (CancelRequest)
        except psycopg.Error:
            pass
    results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), timeout=60)
    errors = [str(r) for r in results if r]
    still_open = sum(1 for c in idle if not c.closed)
    for c in idle + live_conns:
        try:
            await asyncio.wait_for(c.close(), timeout=10)
        except (psycopg.Error, asyncio.TimeoutError):
            pass
    print(json.dumps({"idle": len(idle), "idleStillOpen": still_open, "live": len(live_conns),
                      "liveRows": sum(counts), "liveRowsMin": min(counts) if counts else 0,
                      "errors": errors[:5]}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
