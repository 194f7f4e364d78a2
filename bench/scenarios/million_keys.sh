#!/usr/bin/env bash
# State larger than the memory budget: a GROUP BY over 1,000,000 distinct keys,
# with rtsqld's resident memory sampled every second. The state store keeps a
# 64 MB cache of hot entries per flow and the rest in RocksDB on disk, so the
# resident size must level off while the state keeps growing. See
# docs/benchmarks.md.
#
#   bench/scenarios/million_keys.sh [--keys N] [--rate R] [--partitions P] [--timeout S]
#
# The flow reads a datagen source whose column k is the sequence 1..N (the
# source stops after N), counts rows per k and appends the updates to a file
# sink in the work directory, so no broker holds the output in rtsqld's memory.
# It waits (at most --timeout seconds) until SHOW PROGRESS reports numRowsTotal
# = N, then reports the time taken, peak and final RSS, the state's size on
# disk, and checks the output: N rows, N distinct keys, every count 1.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

KEYS=1000000
RATE=100000
PARTITIONS=8
TIMEOUT=600
while [ $# -gt 0 ]; do
  case "$1" in
    --keys) KEYS="$2"; shift 2 ;;
    --rate) RATE="$2"; shift 2 ;;
    --partitions) PARTITIONS="$2"; shift 2 ;;
    --timeout) TIMEOUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "million_keys.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

bench_require million_keys.sh "$RTSQLD" "$RTSQL"
bench_start_rtsqld
FLOW=million_keys
STATE_DIR="$WORK/data/flows/$FLOW/state"
RSS="$WORK/rss.txt"
PROG="$WORK/progress.txt"
OUTFILE="$WORK/out.jsonl"
: >"$PROG"

# rtsqld's own size before any flow: the baseline the flow's growth is read against.
sleep 1
BASE_RSS="$(awk '/^VmRSS:/{print $2}' "/proc/$RTSQLD_PID/status")"
echo "keys ${KEYS}, datagen at ${RATE} rows/s, shuffle.partitions ${PARTITIONS};" \
  "rtsqld RSS before the flow ${BASE_RSS} kB; load average $(bench_load)" >&2

cat >"$WORK/flow.sql" <<EOF
CREATE SOURCE src (k BIGINT) WITH (
    connector = 'datagen',
    'rows-per-second' = '${RATE}',
    'fields.k.kind' = 'sequence',
    'fields.k.start' = '1',
    'fields.k.end' = '${KEYS}'
);
CREATE SINK counts WITH (connector = 'file', path = '${OUTFILE}', format = 'json',
                         'buffer.bytes' = '1048576');
CREATE FLOW ${FLOW} INTO counts TRIGGER REALTIME
    WITH ('shuffle.partitions' = '${PARTITIONS}') AS
SELECT k, count(*) AS n FROM src GROUP BY k;
EOF

bench_rss_sampler "$RSS"
T0=$(date +%s.%N)
"$RTSQL" -h 127.0.0.1 -p "$PORT" -q -f "$WORK/flow.sql" >&2

# Poll the progress once a second: the state rows summed over the operator's
# tasks, the input rows, and the flow's state in SHOW FLOWS.
TOTAL=0
REACHED=""
FLOWSTATE=""
DEADLINE=$(( $(date +%s) + TIMEOUT ))
while [ "$(date +%s)" -lt "$DEADLINE" ]; do
  P="$(psql_q "SHOW PROGRESS ${FLOW}" 2>/dev/null || true)"
  TOTAL="$(printf '%s' "$P" | "$PY" -c 'import json,sys
try:
    p = json.load(sys.stdin)
except ValueError:
    print(0); sys.exit()
print(sum(o.get("numRowsTotal", 0) for o in p.get("stateOperators", [])))')"
  FLOWSTATE="$(psql_q "SHOW FLOWS" 2>/dev/null | grep "^${FLOW}|" || true)"
  NOW=$(date +%s.%N)
  echo "$(awk -v a="$NOW" -v b="$T0" 'BEGIN{printf "%.1f", a - b}') $TOTAL $FLOWSTATE" >>"$PROG"
  if [ "$TOTAL" -ge "$KEYS" ]; then
    REACHED="$(awk -v a="$NOW" -v b="$T0" 'BEGIN{printf "%.1f", a - b}')"
    break
  fi
  case "$FLOWSTATE" in *"|failed|"*) break ;; esac
  sleep 1
done

# A few more seconds of samples once the state is complete, then the size of
# the state on disk while the flow runs and after STOP FLOW (which ends the
# epoch: the cache's dirty entries go to RocksDB).
sleep 5
DU_RUNNING="$(du -sk "$STATE_DIR" 2>/dev/null | cut -f1 || echo 0)"
FINAL_PROGRESS="$(psql_q "SHOW PROGRESS ${FLOW}" 2>/dev/null || echo '{}')"
psql_q "STOP FLOW ${FLOW}" >/dev/null 2>&1 || true
sleep 2
DU_STOPPED="$(du -sk "$STATE_DIR" 2>/dev/null | cut -f1 || echo 0)"
FINAL_RSS_LINE="$(tail -n 1 "$RSS")"

"$PY" - "$RSS" "$PROG" "$OUTFILE" "$KEYS" "$BASE_RSS" "${REACHED:-}" "$DU_RUNNING" \
  "$DU_STOPPED" "$FINAL_RSS_LINE" "$FINAL_PROGRESS" "$FLOWSTATE" "$(bench_load)" <<'EOF'
import json, sys

(rss_file, prog_file, out_file, keys, base, reached, du_run, du_stop, final_line,
 final_progress, flow_state, load) = sys.argv[1:]
keys = int(keys)
samples = [l.split() for l in open(rss_file) if l.strip()]
rss = [(float(t), int(r), int(h)) for t, r, h in samples]
peak = max((r for _, r, _ in rss), default=0)
hwm = max((h for _, _, h in rss), default=0)
final = int(final_line.split()[1]) if final_line.strip() else 0
mb = lambda kb: f"{int(kb) / 1024:.0f} MiB"

# The output: one update row per input row; each key exactly once with count 1.
rows = 0
ks = set()
bad = 0
with open(out_file) as f:
    for line in f:
        rows += 1
        o = json.loads(line)
        ks.add(o["k"])
        if o["n"] != 1:
            bad += 1

try:
    fp = json.loads(final_progress)
except ValueError:
    fp = {}
ops = fp.get("stateOperators", [])
print(f"million_keys: GROUP BY over {keys:,} distinct keys (load average at the end {load})")
print(f"  numRowsTotal reached {keys:,}: " + (f"after {reached} s" if reached else "NO (see progress below)"))
print(f"  flow: {flow_state}")
print(f"  rtsqld RSS before the flow  {mb(base)}")
print(f"  peak RSS (1 s samples)      {mb(peak)}   VmHWM {mb(hwm)}")
print(f"  final RSS                   {mb(final)}")
print(f"  state on disk               {mb(du_run)} running, {mb(du_stop)} after STOP FLOW")
print(f"  state operators             " + json.dumps(ops))
print(f"  output rows {rows:,}, distinct keys {len(ks):,}, rows with a count other than 1: {bad}")
print("  RSS over time (s: MiB):")
step = max(1, len(rss) // 30)
print("   " + ", ".join(f"{t:.0f}: {r // 1024}" for t, r, _ in rss[::step]))
print("  progress over time (s numRowsTotal):")
pl = [l.split()[:2] for l in open(prog_file) if l.strip()]
step = max(1, len(pl) // 20)
print("   " + ", ".join(f"{t}: {n}" for t, n in pl[::step]))
ok = reached and rows == keys and len(ks) == keys and bad == 0
print("  result: " + ("OK" if ok else "PROBLEM"))
sys.exit(0 if ok else 1)
EOF
