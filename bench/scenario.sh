#!/usr/bin/env bash
# The latency benchmarks: one flow per scenario, its end-to-end latency at each
# rate, next to the broker's own produce-to-consume latency (the floor) measured
# in the same run with the same client settings. See docs/benchmarks.md.
#
#   bench/scenario.sh NAME [--rate N | --rates "1000 10000"] [--seconds S]
#                     [--warmup S] [--bootstrap HOST:PORT] [--size BYTES]
#                     [--keys K] [--results FILE]
#
# NAME is one of
#   stateless       SELECT ts_us, user_id, upper(url), amount * 2 ... WHERE amount > 10
#   groupby         SELECT user_id, count(*) AS n, max(ts_us) AS ts_us ... GROUP BY user_id
#   broadcast_join  SELECT c.ts_us, c.user_id, m.name FROM clicks c
#                   JOIN merchants m ON c.merchant_id = m.id   (10,000-row csv table)
#
# Without --bootstrap the flow and the collector use rtsqld's embedded broker;
# with it (e.g. scripts/kafka.sh start) they use that broker. --results appends
# the raw results (JSON lines) to FILE. Everything listens on 127.0.0.1 only.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage() { sed -n '2,18p' "$0"; exit "${1:-0}"; }

[ $# -ge 1 ] || usage 2
SCENARIO="$1"
shift
case "$SCENARIO" in
  stateless|groupby|broadcast_join) ;;
  -h|--help) usage 0 ;;
  *) echo "scenario.sh: unknown scenario '$SCENARIO' (stateless, groupby, broadcast_join)" >&2; exit 2 ;;
esac

BOOTSTRAP=""
RATES="1000 10000"
SECONDS_RUN=10
WARMUP=3
SIZE=200
KEYS=1000
MERCHANTS=10000
RESULTS_OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bootstrap) BOOTSTRAP="$2"; shift 2 ;;
    --rates) RATES="$2"; shift 2 ;;
    --rate) RATES="$2"; shift 2 ;;
    --seconds) SECONDS_RUN="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --size) SIZE="$2"; shift 2 ;;
    --keys) KEYS="$2"; shift 2 ;;
    --results) RESULTS_OUT="$2"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "scenario.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

bench_require scenario.sh "$RTSQLD" "$RTSQL" "$LATENCY"
bench_start_rtsqld
bench_choose_broker "$BOOTSTRAP"
echo "$SCENARIO on $BROKER; ${SECONDS_RUN} s per run after ${WARMUP} s warm-up," \
  "${SIZE}-byte records, ${KEYS} keys; load average $(bench_load)" >&2

# The static side of the broadcast join: MERCHANTS rows, ids 0..MERCHANTS-1,
# which are exactly the merchant_id values rtsql_latency generates, so the
# inner join keeps every record and lost stays an exact count.
if [ "$SCENARIO" = broadcast_join ]; then
  {
    echo "id,name,category,risk"
    "$PY" -c 'import sys
for i in range(int(sys.argv[1])):
    print(f"{i},merchant-{i:05d},cat{i % 17},{(i % 100) / 100:.2f}")' "$MERCHANTS"
  } >"$WORK/merchants.csv"
  cat >"$WORK/table.sql" <<EOF
CREATE TABLE merchants (id BIGINT, name STRING, category STRING, risk DOUBLE)
WITH (connector = 'file', path = '$WORK/merchants.csv', format = 'csv', header = 'true');
EOF
  "$RTSQL" -h 127.0.0.1 -p "$PORT" -q -f "$WORK/table.sql" >&2
fi

# flow_query RATE : the SELECT of the scenario's flow over the source clicks_RATE.
flow_query() {
  case "$SCENARIO" in
    stateless)
      echo "SELECT ts_us, user_id, upper(url) AS url, amount * 2 AS doubled
FROM clicks_$1 WHERE amount > 10" ;;
    # In update mode every input record changes its key's count, so it yields
    # exactly one output row, and that row's max(ts_us) is the stamp of the
    # record that caused it (stamps grow, and one key's records stay in order
    # from its partition through the shuffle): the collector matches updates to
    # records one to one.
    groupby)
      echo "SELECT user_id, count(*) AS n, max(ts_us) AS ts_us
FROM clicks_$1 GROUP BY user_id" ;;
    broadcast_join)
      echo "SELECT c.ts_us, c.user_id, m.name
FROM clicks_$1 c JOIN merchants m ON c.merchant_id = m.id" ;;
  esac
}

RUN_ID="$(date +%s)"
RESULTS="$WORK/results.jsonl"
: >"$RESULTS"

for RATE in $RATES; do
  IN="bench_in_${RUN_ID}_${RATE}"
  OUT="bench_out_${RUN_ID}_${RATE}"
  FLOOR="bench_floor_${RUN_ID}_${RATE}"
  FLOW="${SCENARIO}_${RATE}"
  # Every topic exists before the flow and the collector start (so the
  # collector can assign itself its partitions): one record each that the
  # collector ignores (its ts_us is older than any run).
  for T in "$IN" "$OUT" "$FLOOR"; do
    echo '{"ts_us":1,"seq":-1,"user_id":"warm","url":"u","amount":11.0,"merchant_id":0,"pad":""}' \
      | kcat -b "$CLIENT_BOOTSTRAP" -t "$T" -P 2>/dev/null
  done
  cat >"$WORK/flow_${RATE}.sql" <<EOF
CREATE SOURCE clicks_${RATE} (
    ts_us       BIGINT,
    seq         BIGINT,
    user_id     STRING,
    url         STRING,
    amount      DOUBLE,
    merchant_id BIGINT,
    pad         STRING
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
$(flow_query "$RATE");
EOF
  "$RTSQL" -h 127.0.0.1 -p "$PORT" -q -f "$WORK/flow_${RATE}.sql" >&2

  LOAD_BEFORE="$(bench_load)"
  echo "rate ${RATE}: floor (load average ${LOAD_BEFORE})" >&2
  FLOOR_JSON="$("$LATENCY" --bootstrap "$CLIENT_BOOTSTRAP" --in "$FLOOR" --floor \
    --rate "$RATE" --seconds "$SECONDS_RUN" --warmup "$WARMUP" --size "$SIZE" --keys "$KEYS" \
    --merchants "$MERCHANTS" --json)" || echo "rtsql_latency (floor) failed" >&2
  echo "rate ${RATE}: flow" >&2
  FLOW_JSON="$("$LATENCY" --bootstrap "$CLIENT_BOOTSTRAP" --in "$IN" --out "$OUT" \
    --rate "$RATE" --seconds "$SECONDS_RUN" --warmup "$WARMUP" --size "$SIZE" --keys "$KEYS" \
    --merchants "$MERCHANTS" --json)" || echo "rtsql_latency (flow) failed" >&2
  PROGRESS="$(psql_q "SHOW PROGRESS ${FLOW}" 2>/dev/null || echo '{}')"
  STATE="$(psql_q "SHOW FLOWS" 2>/dev/null | grep "^${FLOW}|" || true)"
  LOAD_AFTER="$(bench_load)"
  psql_q "STOP FLOW ${FLOW}" >/dev/null 2>&1 || true
  "$PY" -c 'import json,sys
a = sys.argv
print(json.dumps({"scenario": a[1], "broker": a[2], "rate": int(a[3]),
                  "load": [a[4], a[5]], "flowState": a[6],
                  "floor": json.loads(a[7] or "{}"), "flow": json.loads(a[8] or "{}"),
                  "progress": json.loads(a[9] or "{}")}))' \
    "$SCENARIO" "$BROKER" "$RATE" "$LOAD_BEFORE" "$LOAD_AFTER" "$STATE" \
    "${FLOOR_JSON:-}" "${FLOW_JSON:-}" "${PROGRESS:-}" >>"$RESULTS"
done

[ -z "$RESULTS_OUT" ] || cat "$RESULTS" >>"$RESULTS_OUT"

"$PY" - "$RESULTS" <<'EOF'
import json, sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
if rows:
    print(f"{rows[0]['scenario']}, {rows[0]['broker']}")
print("latency in ms, measured by the client: receive time - ts_us in the record;")
print("srv columns: the flow's own rtmMetrics from SHOW PROGRESS")
hdr = ("rate/s", "load before/after", "floor P50", "floor P99", "flow P50", "flow P99",
       "x P50", "x P99", "flow max", "sent", "lost", "dup", "floor lost",
       "srv proc P50/P99", "srv e2e P50/P99", "flow state")
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
    state = r["flowState"].split("|")[2] if r["flowState"].count("|") >= 2 else "?"
    print(" | ".join([
        str(r["rate"]), f"{r['load'][0].split()[0]}/{r['load'][1].split()[0]}",
        fmt(lat(fl, "P50")), fmt(lat(fl, "P99")),
        fmt(lat(fw, "P50")), fmt(lat(fw, "P99")),
        ratio(lat(fw, "P50"), lat(fl, "P50")), ratio(lat(fw, "P99"), lat(fl, "P99")),
        fmt(lat(fw, "max")), str(fw.get("sent", "n/a")), str(fw.get("lost", "n/a")),
        str(fw.get("duplicates", "n/a")), str(fl.get("lost", "n/a")),
        f"{fmt(proc.get('P50'))}/{fmt(proc.get('P99'))}",
        f"{fmt(e2e.get('P50'))}/{fmt(e2e.get('P99'))}", state,
    ]))
print()
print("raw results (JSON lines):")
for r in rows:
    print(json.dumps({"rate": r["rate"], "floor": r["floor"], "flow": r["flow"]}))
EOF
