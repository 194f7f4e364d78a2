#!/usr/bin/env bash
# Nexmark: the standard streaming benchmark's queries q0 to q22 as written for
# Flink SQL (bench/nexmark/q*.sql, docs/nexmark.md) on events from
# rtsql_nexmark_gen, with their throughput, their latency from SHOW PROGRESS
# and, with --check, their output compared with the same query run in DuckDB
# (bench/nexmark/reference.py). A query this build refuses as not supported
# yet (0A000) or whose sink format it lacks is a "refused" row of the table,
# not a failure. See docs/benchmarks.md.
#
#   bench/nexmark/nexmark.sh [--queries "q0 q1 ... q22"] [--events N]
#                    [--rate R] [--event-rate E] [--seed S] [--partitions P]
#                    [--bootstrap HOST:PORT] [--check] [--timeout S] [--results FILE]
#
# --rate 0 (the default) generates the events once, as fast as possible, and
# replays them for every query (throughput); --rate R generates them for each
# query at R events/s while it runs (latency of a live stream). --event-rate is
# how fast event time (date_time) advances: default --rate, or 10,000/s.
# Without --bootstrap everything runs on rtsqld's embedded broker. Exits
# non-zero when a query fails its check. Everything listens on 127.0.0.1 only.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

usage() { sed -n '2,19p' "$0"; exit "${1:-0}"; }

QUERIES="$(echo q{0..22})"
EVENTS=100000
RATE=0
EVENT_RATE=0
SEED=0
PARTITIONS=0
BOOTSTRAP=""
CHECK=""
TIMEOUT=300
RESULTS_OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --queries) QUERIES="$2"; shift 2 ;;
    --events) EVENTS="$2"; shift 2 ;;
    --rate) RATE="$2"; shift 2 ;;
    --event-rate) EVENT_RATE="$2"; shift 2 ;;
    --seed) SEED="$2"; shift 2 ;;
    --partitions) PARTITIONS="$2"; shift 2 ;;
    --bootstrap) BOOTSTRAP="$2"; shift 2 ;;
    --check) CHECK="--check"; shift ;;
    --timeout) TIMEOUT="$2"; shift 2 ;;
    --results) RESULTS_OUT="$2"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "nexmark.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

GEN="${RTSQL_NEXMARK_GEN:-${BIN}/bench/rtsql_nexmark_gen}"
bench_require nexmark.sh "$RTSQLD" "$RTSQL" "$GEN"
bench_start_rtsqld
bench_choose_broker "$BOOTSTRAP"
echo "nexmark on $BROKER: $EVENTS events, queries $QUERIES; load average $(bench_load)" >&2

set +e
"$PY" "$(dirname "$0")/driver.py" --port "$PORT" --sql-bootstrap "$SQL_BOOTSTRAP" \
  --client-bootstrap "$CLIENT_BOOTSTRAP" --gen "$GEN" --rtsql "$RTSQL" --work "$WORK" \
  --queries "$QUERIES" --events "$EVENTS" --rate "$RATE" --event-rate "$EVENT_RATE" \
  --seed "$SEED" --partitions "$PARTITIONS" --timeout "$TIMEOUT" $CHECK \
  ${RESULTS_OUT:+--results "$RESULTS_OUT"}
RC=$?
set -e
echo "load average after: $(bench_load)" >&2
exit "$RC"
