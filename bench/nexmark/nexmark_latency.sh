#!/usr/bin/env bash
# Nexmark at paced rates: every query run on a live stream at each rate of
# --rates for about --seconds each (bench/nexmark/nexmark.sh --rate), then one table of
# each query's e2e P99 (processing P99 in parentheses) per rate and the
# highest rate whose e2e P99 stayed within --bound-ms. Event time runs 10
# times faster than the wall clock (--event-rate rate / 10), so that the
# 10-second windows of the windowed queries close within a run. See docs/benchmarks.md.
#
#   bench/nexmark/nexmark_latency.sh --bootstrap HOST:PORT [--rates "1000 5000 20000"]
#                            [--seconds S] [--bound-ms B] [--queries "q0 ..."]
#                            [--results FILE]
set -euo pipefail

RATES="1000 5000 20000"
SECONDS_EACH=8
BOUND=10
QUERIES="$(echo q{0..22})"
BOOTSTRAP=""
RESULTS=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rates) RATES="$2"; shift 2 ;;
    --seconds) SECONDS_EACH="$2"; shift 2 ;;
    --bound-ms) BOUND="$2"; shift 2 ;;
    --queries) QUERIES="$2"; shift 2 ;;
    --bootstrap) BOOTSTRAP="$2"; shift 2 ;;
    --results) RESULTS="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ -n "$BOOTSTRAP" ] || { echo "--bootstrap HOST:PORT is required (a paced run needs Apache Kafka)" >&2; exit 2; }
HERE="$(cd "$(dirname "$0")" && pwd)"
RESULTS="${RESULTS:-$(mktemp /tmp/rtsql-nexmark-latency.XXXXXX.jsonl)}"
for rate in $RATES; do
  events=$((rate * SECONDS_EACH))
  "$HERE/nexmark.sh" --queries "$QUERIES" --rate "$rate" --events "$events" \
    --event-rate $(( rate / 10 > 0 ? rate / 10 : 1 )) \
    --bootstrap "$BOOTSTRAP" --results "$RESULTS" >&2
done
echo "results: $RESULTS" >&2
python3 "$HERE/latency_table.py" "$RESULTS" --bound-ms "$BOUND"
