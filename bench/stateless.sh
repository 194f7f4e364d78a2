#!/usr/bin/env bash
# The stateless benchmark: a filter + projection flow, its end-to-end latency at
# 1,000 and 10,000 records/s, next to the broker's own produce-to-consume latency
# (the floor) measured with the same client settings. See docs/benchmarks.md.
#
#   bench/stateless.sh [--bootstrap HOST:PORT] [--rates "1000 10000"]
#                      [--seconds S] [--warmup S] [--size BYTES] [--keys K]
#
# Without --bootstrap the flow and the collector use rtsqld's embedded broker;
# with it (e.g. scripts/kafka.sh start) they use that broker. Binaries come from
# ${RTSQL_BIN_DIR:-build}. Everything listens on 127.0.0.1 only, and every wait
# is bounded.
set -euo pipefail

BIN="${RTSQL_BIN_DIR:-build}"
RTSQLD="${BIN}/server/rtsqld"
RTSQL="${BIN}/client/rtsql"
LATENCY="${BIN}/bench/rtsql_latency"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

BOOTSTRAP=""
RATES="1000 10000"
SECONDS_RUN=10
WARMUP=3
SIZE=200
KEYS=1000
while [ $# -gt 0 ]; do
  case "$1" in
    --bootstrap) BOOTSTRAP="$2"; shift 2 ;;
    --rates) RATES="$2"; shift 2 ;;
    --seconds) SECONDS_RUN="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --size) SIZE="$2"; shift 2 ;;
    --keys) KEYS="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "stateless.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

for b in "$RTSQLD" "$RTSQL" "$LATENCY"; do
  [ -x "$b" ] || { echo "stateless.sh: $b is not built (RTSQL_BIN_DIR=$BIN)" >&2; exit 1; }
done

WORK="$(mktemp -d /tmp/rtsql-bench.XXXXXX)"
PORT="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
RTSQLD_PID=""

cleanup() {
  if [ -n "$RTSQLD_PID" ] && kill -0 "$RTSQLD_PID" 2>/dev/null; then
    kill -TERM "$RTSQLD_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$RTSQLD_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$RTSQLD_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

psql_q() {
  PGCONNECT_TIMEOUT=5 psql -h 127.0.0.1 -p "$PORT" -U rtsql -d rtsql -X -A -t -c "$1"
}

"$RTSQLD" --host 127.0.0.1 --port "$PORT" --data-dir "$WORK/data" --embedded-kafka \
  >"$WORK/rtsqld.log" 2>&1 &
RTSQLD_PID=$!

EMBEDDED=""
for _ in $(seq 1 150); do
  if EMBEDDED="$(psql_q 'SHOW embedded_kafka' 2>/dev/null)" && [ -n "$EMBEDDED" ]; then
    break
  fi
  kill -0 "$RTSQLD_PID" 2>/dev/null || { echo "rtsqld exited:" >&2; tail -n 30 "$WORK/rtsqld.log" >&2; exit 1; }
  sleep 0.2
done
[ -n "$EMBEDDED" ] || { echo "rtsqld did not answer in 30 s" >&2; tail -n 30 "$WORK/rtsqld.log" >&2; exit 1; }

if [ -n "$BOOTSTRAP" ]; then
  CLIENT_BOOTSTRAP="$BOOTSTRAP"
  SQL_BOOTSTRAP="$BOOTSTRAP"
  BROKER="Apache Kafka at $BOOTSTRAP"
else
  CLIENT_BOOTSTRAP="$EMBEDDED"
  SQL_BOOTSTRAP="embedded"
  BROKER="rtsqld's embedded broker at $EMBEDDED"
fi
echo "broker: $BROKER; ${SECONDS_RUN} s per run after ${WARMUP} s warm-up, ${SIZE}-byte records, ${KEYS} keys" >&2

RUN_ID="$(date +%s)"
RESULTS="$WORK/results.jsonl"
: >"$RESULTS"

for RATE in $RATES; do
  IN="bench_in_${RUN_ID}_${RATE}"
  OUT="bench_out_${RUN_ID}_${RATE}"
  FLOOR="bench_floor_${RUN_ID}_${RATE}"
  FLOW="stateless_${RATE}"
  # The input topic exists before the flow starts: one record that the
  # collector ignores (its ts_us is older than any run).
  echo '{"ts_us":1,"seq":-1,"user_id":"warm","url":"u","amount":11.0,"pad":""}' \
    | kcat -b "$CLIENT_BOOTSTRAP" -t "$IN" -P 2>/dev/null
  cat >"$WORK/flow_${RATE}.sql" <<EOF
CREATE SOURCE clicks_${RATE} (
    ts_us   BIGINT,
    seq     BIGINT,
    user_id STRING,
    url     STRING,
    amount  DOUBLE,
    pad     STRING
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = '${SQL_BOOTSTRAP}',
    subscribe = '${IN}',
    startingOffsets = 'earliest',
    format = 'json'
);
CREATE SINK out_${RATE} WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = '${SQL_BOOTSTRAP}',
    topic = '${OUT}',
    format = 'json'
);
CREATE FLOW ${FLOW} INTO out_${RATE} TRIGGER REALTIME AS
SELECT ts_us, user_id, upper(url) AS url, amount * 2 AS doubled
FROM clicks_${RATE}
WHERE amount > 10;
EOF
  "$RTSQL" -h 127.0.0.1 -p "$PORT" -q -f "$WORK/flow_${RATE}.sql" >&2

  echo "rate ${RATE}: floor" >&2
  FLOOR_JSON="$("$LATENCY" --bootstrap "$CLIENT_BOOTSTRAP" --in "$FLOOR" --floor \
    --rate "$RATE" --seconds "$SECONDS_RUN" --warmup "$WARMUP" --size "$SIZE" --keys "$KEYS" --json)" \
    || echo "rtsql_latency (floor) failed" >&2
  echo "rate ${RATE}: flow" >&2
  FLOW_JSON="$("$LATENCY" --bootstrap "$CLIENT_BOOTSTRAP" --in "$IN" --out "$OUT" \
    --rate "$RATE" --seconds "$SECONDS_RUN" --warmup "$WARMUP" --size "$SIZE" --keys "$KEYS" --json)" \
    || echo "rtsql_latency (flow) failed" >&2
  PROGRESS="$(psql_q "SHOW PROGRESS ${FLOW}" 2>/dev/null || echo '{}')"
  psql_q "STOP FLOW ${FLOW}" >/dev/null 2>&1 || true
  "$PY" -c 'import json,sys; print(json.dumps({"rate": int(sys.argv[1]), "floor": json.loads(sys.argv[2] or "{}"), "flow": json.loads(sys.argv[3] or "{}"), "progress": json.loads(sys.argv[4] or "{}")}))' \
    "$RATE" "${FLOOR_JSON:-}" "${FLOW_JSON:-}" "${PROGRESS:-}" >>"$RESULTS"
done

"$PY" - "$RESULTS" "$BROKER" <<'EOF'
import json, sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"stateless flow (filter + projection), {sys.argv[2]}")
print("latency in ms, measured by the client: receive time - ts_us in the record")
hdr = ("rate/s", "floor P50", "floor P99", "flow P50", "flow P99", "x P50", "x P99",
       "flow max", "sent", "lost", "dup", "srv proc P50/P99", "srv e2e P50/P99")
print(" | ".join(hdr))
print(" | ".join("-" * len(h) for h in hdr))


def lat(d, p):
    return d.get("latencyMs", {}).get(p)


def fmt(v):
    return "n/a" if v is None else f"{v:.2f}"


def ratio(a, b):
    return "n/a" if a is None or b is None or b <= 0 else f"{a / b:.1f}"


for r in rows:
    fl, fw = r["floor"], r["flow"]
    rtm = r["progress"].get("rtmMetrics", {})
    proc = rtm.get("processingLatencyMs", {})
    e2e = rtm.get("e2eLatencyMs", {})
    print(" | ".join([
        str(r["rate"]), fmt(lat(fl, "P50")), fmt(lat(fl, "P99")),
        fmt(lat(fw, "P50")), fmt(lat(fw, "P99")),
        ratio(lat(fw, "P50"), lat(fl, "P50")), ratio(lat(fw, "P99"), lat(fl, "P99")),
        fmt(lat(fw, "max")), str(fw.get("sent", "n/a")), str(fw.get("lost", "n/a")),
        str(fw.get("duplicates", "n/a")),
        f"{fmt(proc.get('P50'))}/{fmt(proc.get('P99'))}",
        f"{fmt(e2e.get('P50'))}/{fmt(e2e.get('P99'))}",
    ]))
print()
print("raw results (JSON lines):")
for r in rows:
    print(json.dumps({"rate": r["rate"], "floor": r["floor"], "flow": r["flow"]}))
EOF
