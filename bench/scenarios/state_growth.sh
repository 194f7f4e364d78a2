#!/usr/bin/env bash
# Processing latency as a GROUP BY's state grows: every row a new group whose
# key is about --size bytes (query B of the Databricks shape, without a
# broker), so each row is one new state entry and the state grows without end.
# The flow's processing P50 / P99 (recentMetrics of SHOW PROGRESS: the last
# complete 5-second interval, sink write minus source read) is sampled every 5
# seconds beside the number of groups in state, until --groups groups or
# --timeout seconds; a stall (a RocksDB write stall, a long flush or
# compaction) shows as a P99 that rises with the state. See docs/benchmarks.md.
#
#   bench/scenarios/state_growth.sh [--groups N] [--rate R] [--size BYTES]
#                                   [--partitions P] [--timeout S]
#
# Defaults: 2,000,000 groups, 20,000 rows/s, 1,200-byte keys, 4 shuffle
# partitions, at most 300 s. The source is datagen (a sequence k and a random
# pad of --size characters), the sink a blackhole, so only rtsqld is measured.
# Also reported: the lines of RocksDB's LOG that say it stalled or slowed
# writes, rtsqld's CPU per row over the run, and the load average.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

GROUPS_WANTED=2000000
RATE=20000
SIZE=1200
PARTITIONS=4
TIMEOUT=300
while [ $# -gt 0 ]; do
  case "$1" in
    --groups) GROUPS_WANTED="$2"; shift 2 ;;
    --rate) RATE="$2"; shift 2 ;;
    --size) SIZE="$2"; shift 2 ;;
    --partitions) PARTITIONS="$2"; shift 2 ;;
    --timeout) TIMEOUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "state_growth.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

bench_require state_growth.sh "$RTSQLD" "$RTSQL"
bench_start_rtsqld
FLOW=state_growth
STATE_DIR="$WORK/data/flows/$FLOW/state"
SAMPLES="$WORK/samples.jsonl"
: >"$SAMPLES"

cat >"$WORK/flow.sql" <<EOF
CREATE SOURCE src (k BIGINT, pad STRING) WITH (
    connector = 'datagen',
    'rows-per-second' = '${RATE}',
    'maxPartitions' = '${PARTITIONS}',
    'fields.k.kind' = 'sequence',
    'fields.k.start' = '1',
    'fields.pad.length' = '${SIZE}'
);
CREATE SINK out WITH (connector = 'blackhole');
CREATE FLOW ${FLOW} INTO out TRIGGER REALTIME
    WITH ('shuffle.partitions' = '${PARTITIONS}') AS
SELECT k, pad, count(*) AS n FROM src GROUP BY k, pad;
EOF

echo "state_growth: ${RATE} rows/s, ${SIZE}-byte keys, ${PARTITIONS} partitions, up to" \
  "${GROUPS_WANTED} groups or ${TIMEOUT} s; load average $(bench_load)" >&2
"$RTSQL" -h 127.0.0.1 -p "$PORT" -q -f "$WORK/flow.sql" >&2
T0=$(date +%s.%N)
C0=$(bench_cpu_ticks "$RTSQLD_PID")
DEADLINE=$(($(date +%s) + TIMEOUT))
GROUPS_NOW=0
while [ "$(date +%s)" -lt "$DEADLINE" ]; do
  sleep 5
  P="$(psql_q "SHOW PROGRESS ${FLOW}" 2>/dev/null || echo '{}')"
  LINE="$(printf '%s' "$P" | "$PY" -c 'import json, sys
try:
    p = json.load(sys.stdin)
except ValueError:
    sys.exit()
groups = sum(o.get("numRowsTotal", 0) for o in p.get("stateOperators", []))
recent = p.get("recentMetrics", {}).get("processingLatencyMs", {})
rows = p.get("recentMetrics", {}).get("numOutputRows", 0)
print(json.dumps({"t": float(sys.argv[1]), "groups": groups, "rows5s": rows,
                  "p50": recent.get("P50"), "p99": recent.get("P99"), "load": sys.argv[2]}))' \
    "$(awk -v a="$(date +%s.%N)" -v b="$T0" 'BEGIN{printf "%.1f", a - b}')" "$(bench_load)")"
  [ -z "$LINE" ] || echo "$LINE" >>"$SAMPLES"
  GROUPS_NOW="$(printf '%s' "$LINE" | "$PY" -c 'import json, sys
s = sys.stdin.read().strip()
print(json.loads(s)["groups"] if s else 0)')"
  [ "$GROUPS_NOW" -lt "$GROUPS_WANTED" ] || break
  case "$(psql_q "SHOW FLOWS" 2>/dev/null | grep "^${FLOW}|" || true)" in *"|failed|"*) break ;; esac
done
C1=$(bench_cpu_ticks "$RTSQLD_PID")
T1=$(date +%s.%N)
STALLS="$(cat "$STATE_DIR"/LOG* 2>/dev/null | grep -c -E 'Stalling writes|Stopping writes' || true)"
psql_q "STOP FLOW ${FLOW}" >/dev/null 2>&1 || true

"$PY" - "$SAMPLES" "$GROUPS_WANTED" "$STALLS" "$((C1 - C0))" "$(getconf CLK_TCK)" \
  "$(awk -v a="$T1" -v b="$T0" 'BEGIN{printf "%.1f", a - b}')" <<'EOF'
import json, sys

samples_file, wanted, stalls, ticks, hz, wall = sys.argv[1:]
samples = [json.loads(l) for l in open(samples_file) if l.strip()]
groups = samples[-1]["groups"] if samples else 0
cpu = int(ticks) / int(hz)
print(f"state_growth: {groups:,} groups in state after {wall} s (asked {int(wanted):,});"
      f" RocksDB stall lines in LOG: {stalls}")
if groups:
    print(f"  rtsqld CPU {cpu:.1f} s: {1e6 * cpu / groups:.1f} us per row")
print("  t s | groups | rows in 5 s | processing P50 / P99 ms | load average")
for s in samples:
    f = lambda v: "n/a" if v is None else f"{v:.2f}"
    print(f"  {s['t']:.0f} | {s['groups']:,} | {s['rows5s']:,} | {f(s['p50'])} / {f(s['p99'])}"
          f" | {s['load'].split()[0]}")
# Flat: the P99 of the last third of the samples against the first third
# (with something in both).
vals = [s["p99"] for s in samples if s.get("p99")]
if len(vals) >= 3:
    third = len(vals) // 3
    first, last = max(vals[:third]), max(vals[-third:])
    print(f"  highest P99 in the first third {first:.2f} ms, in the last third {last:.2f} ms")
EOF
