#!/usr/bin/env bash
# Stateless throughput: how fast a flow gets through a backlog. The input topic
# (one partition) is preloaded with --records JSON records of --size bytes; a
# fresh stateless flow then reads it from the start into another topic, and
# the rate is taken from SHOW PROGRESS between the flow's first rows and the
# last. The baseline, measured in the same run on the same topic, is a plain
# client reading the backlog (`kcat -C -e`, decoding nothing): what the broker
# and the client library give on their own.
#
#   bench/scenarios/throughput.sh --bootstrap HOST:PORT [--records N] [--size BYTES]
#                       [--runs N] [--timeout S]
#
# --bootstrap is required: rtsqld's embedded broker keeps only the newest 5 MB
# of each partition, too little for a backlog worth measuring. SINK_OPTIONS and
# SOURCE_OPTIONS add options to the sink's and the source's WITH clause;
# FLOW_FILTER replaces the flow's WHERE condition (`amount < 0` writes nothing,
# which measures the source side alone). rtsqld's peak RSS so far is printed
# after each run. Every
# wait is bounded by --timeout (default 120 s) per run. Loopback only.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

usage() { sed -n '2,16p' "$0"; exit "${1:-0}"; }

BOOTSTRAP=""
RECORDS=1000000
SIZE=200
RUNS=1
TIMEOUT=120
while [ $# -gt 0 ]; do
  case "$1" in
    --bootstrap) BOOTSTRAP="$2"; shift 2 ;;
    --records) RECORDS="$2"; shift 2 ;;
    --size) SIZE="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --timeout) TIMEOUT="$2"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "throughput.sh: unknown argument '$1'" >&2; usage 2 ;;
  esac
done

if [ -z "$BOOTSTRAP" ]; then
  echo "throughput.sh: --bootstrap HOST:PORT is required (scripts/kafka.sh start); the embedded" \
    "broker keeps only the newest 5 MB of each partition, too little for a backlog" >&2
  exit 2
fi
bench_require throughput.sh "$RTSQLD" "$RTSQL" "$LATENCY"
command -v kcat >/dev/null || { echo "throughput.sh: kcat is not installed" >&2; exit 1; }
bench_start_rtsqld
bench_choose_broker "$BOOTSTRAP"
RUN_ID="$(date +%s)"
IN="bench_tp_in_${RUN_ID}"
echo "stateless throughput on $BROKER; ${RECORDS} records of ${SIZE} bytes;" \
  "load average $(bench_load)" >&2

# The backlog: the collector in floor mode produces as fast as its rate allows
# (and reads its own records back, which are the backlog's). A 4-second run
# at RECORDS/4 per second, plus its 1-second warm-up, writes 1.25 x RECORDS;
# the flow's rate is taken over the first RECORDS.
echo '{"ts_us":1,"seq":-1,"user_id":"warm","url":"u","amount":11.0,"merchant_id":0,"pad":""}' \
  | kcat -b "$CLIENT_BOOTSTRAP" -t "$IN" -P 2>/dev/null
"$LATENCY" --bootstrap "$CLIENT_BOOTSTRAP" --in "$IN" --floor --rate $((RECORDS / 4)) \
  --seconds 4 --warmup 1 --drain 2 --size "$SIZE" --keys 1000 --json >/dev/null
# The backlog over every partition (the embedded broker makes several).
PARTITIONS="$(kcat -b "$CLIENT_BOOTSTRAP" -L -t "$IN" 2>/dev/null | grep -c 'partition [0-9]*,' || true)"
TOTAL=0
for p in $(seq 0 $((PARTITIONS - 1))); do
  n="$(kcat -b "$CLIENT_BOOTSTRAP" -Q -t "$IN:$p:-1" 2>/dev/null | awk '{print $NF}')"
  TOTAL=$((TOTAL + ${n:-0}))
done
echo "backlog: ${TOTAL} records in ${IN} (${PARTITIONS} partitions)" >&2
[ "${TOTAL:-0}" -gt "$RECORDS" ] || { echo "throughput.sh: the backlog is short" >&2; exit 1; }

# kcat_rate : records/s of a plain consumer reading RECORDS of the backlog.
kcat_rate() {
  local t0 t1
  t0=$(date +%s.%N)
  timeout "$TIMEOUT" kcat -b "$CLIENT_BOOTSTRAP" -C -t "$IN" -o beginning -c "$RECORDS" -q \
    >/dev/null 2>&1
  t1=$(date +%s.%N)
  "$PY" -c "import sys; print(round(int(sys.argv[1]) / (float(sys.argv[3]) - float(sys.argv[2]))))" \
    "$RECORDS" "$t0" "$t1"
}

# flow_rate TAG : deploys a fresh flow over the backlog and prints its rate.
flow_rate() {
  local tag="$1"
  cat >"$WORK/flow_${tag}.sql" <<EOF
CREATE SOURCE clicks_${tag} (
    ts_us BIGINT, seq BIGINT, user_id STRING, url STRING, amount DOUBLE,
    merchant_id BIGINT, pad STRING
) WITH (
    connector = 'kafka', 'kafka.bootstrap.servers' = '${SQL_BOOTSTRAP}',
    subscribe = '${IN}', startingOffsets = 'earliest', format = 'json'${SOURCE_OPTIONS:+,
    ${SOURCE_OPTIONS}}
);
CREATE SINK out_${tag} WITH (
    connector = 'kafka', 'kafka.bootstrap.servers' = '${SQL_BOOTSTRAP}',
    topic = 'bench_tp_out_${RUN_ID}_${tag}', format = 'json'${SINK_OPTIONS:+,
    ${SINK_OPTIONS}}
);
CREATE FLOW tp_${tag} INTO out_${tag} TRIGGER REALTIME AS
SELECT ts_us, user_id, upper(url) AS url, amount * 2 AS doubled
FROM clicks_${tag} WHERE ${FLOW_FILTER:-amount > 10};
EOF
  "$RTSQL" -h 127.0.0.1 -p "$PORT" -q -f "$WORK/flow_${tag}.sql" >&2
  # Samples of (time, rows read) every 0.1 s until RECORDS are read.
  local status=0
  "$PY" - "$PORT" "tp_${tag}" "$RECORDS" "$TIMEOUT" <<'EOF' || status=$?
import json, subprocess, sys, time
port, flow, want, limit = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
def rows():
    out = subprocess.run(["psql", "-h", "127.0.0.1", "-p", port, "-U", "rtsql", "-d", "rtsql",
                          "-X", "-A", "-t", "-c", f"SHOW PROGRESS {flow}"],
                         capture_output=True, text=True, timeout=10).stdout
    p = json.loads(out or "{}")
    n = p.get("numInputRows", 0)
    last = p.get("lastEpoch") or {}
    return n + (last.get("numInputRows", 0) if last.get("batchId", -1) != p.get("batchId") else 0)
deadline = time.monotonic() + limit
first = None
while time.monotonic() < deadline:
    n, t = rows(), time.monotonic()
    if first is None and n > 0:
        first = (t, n)
    if n >= want:
        print(round((n - first[1]) / (t - first[0])) if t > first[0] else 0)
        sys.exit(0)
    time.sleep(0.1)
sys.exit(f"flow {flow} read fewer than {want} records in {limit} s")
EOF
  psql_q "STOP FLOW tp_${tag}" >/dev/null 2>&1 || true
  return "$status"
}

RESULTS=()
for run in $(seq 1 "$RUNS"); do
  LOAD="$(bench_load)"
  BASE="$(kcat_rate)"
  FLOW="$(flow_rate "$run")" || { echo "throughput.sh: run $run failed" >&2; exit 1; }
  HWM="$(awk '/^VmHWM:/{printf "%.0f", $2 / 1024}' "/proc/$RTSQLD_PID/status" 2>/dev/null || echo n/a)"
  RESULTS+=("$run | ${LOAD%% *} | $FLOW | $BASE | $("$PY" -c "print(f'{$FLOW / $BASE:.2f}')") | $HWM")
done
echo "stateless throughput, $BROKER, ${RECORDS} records of ${SIZE} bytes"
echo "run | load | flow rows/s | kcat records/s | flow / kcat | rtsqld peak RSS MiB"
echo "--- | ---- | ----------- | -------------- | ----------- | -------------------"
printf '%s\n' "${RESULTS[@]}"
