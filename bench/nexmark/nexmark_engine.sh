#!/usr/bin/env bash
# Engine-only Nexmark: each query of bench/nexmark/engine/ (the flows of
# bench/nexmark/q*.sql reading the in-process nexmark source and writing a
# blackhole sink) over N events as fast as rtsqld goes, with no broker and no
# encoding: events/s, rtsqld's CPU seconds (/proc/PID/stat) and events/s per
# core, the Nexmark project's "Throughput/Cores". See docs/benchmarks.md.
#
#   bench/nexmark/nexmark_engine.sh [--queries "q0 q1 q2 q5 q7 q8 q11 q13 q14"]
#                           [--events N] [--partitions P] [--timeout S]
#                           [--results FILE]
#
# --events (default 1,000,000) counts persons, auctions and bids together, as
# the Nexmark project does; --partitions (default 1) splits each source's
# generator, and so its source tasks. rtsqld runs without its embedded broker
# on a free loopback port. Exits non-zero when a query fails or does not finish
# within --timeout seconds (default 600).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

usage() { sed -n '2,16p' "$0"; exit "${1:-0}"; }

QUERIES="q0 q1 q2 q5 q7 q8 q11 q13 q14"
EVENTS=1000000
PARTITIONS=1
TIMEOUT=600
RESULTS_OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --queries) QUERIES="$2"; shift 2 ;;
    --events) EVENTS="$2"; shift 2 ;;
    --partitions) PARTITIONS="$2"; shift 2 ;;
    --timeout) TIMEOUT="$2"; shift 2 ;;
    --results) RESULTS_OUT="$2"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "nexmark_engine.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

bench_require nexmark_engine.sh "$RTSQLD" "$RTSQL"
WORK="$(mktemp -d /tmp/rtsql-bench.XXXXXX)"
trap bench_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP PIPE
# rtsqld alone: no embedded broker whose threads would count in its CPU time.
PORT="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
"$RTSQLD" --host 127.0.0.1 --port "$PORT" --data-dir "$WORK/data" >>"$WORK/rtsqld.log" 2>&1 &
RTSQLD_PID=$!
for _ in $(seq 1 300); do
  psql_q 'SELECT 1' >/dev/null 2>&1 && break
  kill -0 "$RTSQLD_PID" 2>/dev/null || { echo "rtsqld exited:" >&2; tail -n 30 "$WORK/rtsqld.log" >&2; exit 1; }
  sleep 0.1
done
psql_q 'SELECT 1' >/dev/null || { echo "rtsqld did not answer in 30 s" >&2; exit 1; }
echo "nexmark engine-only: $EVENTS events, queries $QUERIES; $(nproc) cores, load average $(bench_load)" >&2

set +e
"$PY" "$(dirname "$0")/engine_driver.py" --port "$PORT" --pid "$RTSQLD_PID" \
  --rtsql "$RTSQL" --work "$WORK" --queries "$QUERIES" --events "$EVENTS" \
  --partitions "$PARTITIONS" --timeout "$TIMEOUT" ${RESULTS_OUT:+--results "$RESULTS_OUT"}
RC=$?
set -e
echo "load average after: $(bench_load)" >&2
exit "$RC"
