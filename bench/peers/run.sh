#!/usr/bin/env bash
# rtsql beside its peers: the latency scenarios of bench/scenarios/scenario.sh run on
# rtsql, on Spark Structured Streaming in real-time mode (PySpark) and on Flink
# SQL (PyFlink), one system at a time, on the same Apache Kafka broker, with the
# same generated input and the same collector (rtsql_latency), and a table side
# by side: CPU of each engine's processes (% of a core, and us per input
# record), end-to-end P50/P99, the broker's own floor, and the load average.
#
#   bench/peers/run.sh --bootstrap HOST:PORT [--scenarios "stateless groupby broadcast_join"]
#                      [--rates "1000 10000"] [--seconds S] [--warmup S]
#                      [--systems "rtsql spark flink"] [--results FILE]
#                      [--shape default|databricks]
#   bench/peers/run.sh --bootstrap HOST:PORT --find-max [--p99-ms MS] [--start-rate N]
#                      [--max-steps N] [--step-seconds S] [--step-warmup S] [...as above]
#   bench/peers/run.sh --self-check
#
# --shape: default is 200-byte records on one partition, 1,000 keys;
# databricks is the shape of Databricks' latency benchmark: 1.2 KB records on 4
# partitions (4 shuffle partitions for Spark), and its three queries as the
# default scenarios: A stateless, B groupby_new_key (GROUP BY the stamp and the
# record's padding: a new 1.2 KB key per record), C broadcast_join.
#
# Scenarios: stateless groupby groupby_new_key broadcast_join window dedup stream_join (see
# bench/scenarios/scenario.sh; what each peer runs instead, or refuses, is in
# docs/benchmarks.md). The broker: scripts/kafka.sh start. The first run
# installs the peers (bench/peers/setup.sh, into $RTSQL_PEERS_HOME or
# bench/peers/.deps). rtsql's figures come from bench/scenarios/scenario.sh with
# RTSQL_BIN_DIR (default build). For each peer, scenario and rate the flow is
# started afresh on fresh topics and given up to PEER_START_TIMEOUT seconds
# (default 300) to pass the first record through. Everything listens on
# 127.0.0.1 only; every wait is bounded.
#
# --find-max: the highest rate each system holds, per scenario: from
# --start-rate (default 1000) the rate doubles until a step's end-to-end P99
# reaches --p99-ms (default 100) or a record is lost, then bisects between the
# highest rate held and the lowest not held until they are within 10%, at most
# --max-steps (default 8) steps of --step-seconds (default 5) after
# --step-warmup (default 2), each on a fresh flow and fresh topics, without
# floor runs. rtsql's search is bench/scenarios/scenario.sh --find-max.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
BENCH="$(dirname "$HERE")"
. "$BENCH/lib.sh"

usage() { sed -n '2,39p' "$0"; exit "${1:-0}"; }

BOOTSTRAP=""
SCENARIOS=""
SHAPE=default
RATES="1000 10000"
SECONDS_RUN=10
WARMUP=3
SYSTEMS="rtsql spark flink"
RESULTS_OUT=""
SELF_CHECK=""
SIZE=200
KEYS=1000
MERCHANTS=10000
START_TIMEOUT="${PEER_START_TIMEOUT:-300}"
DEPS="${RTSQL_PEERS_HOME:-$HERE/.deps}"
FIND_MAX=""
STEP=""  # the find-max step run_peer runs, empty otherwise
P99_MS=100
START_RATE=1000
MAX_STEPS=8
STEP_SECONDS=5
STEP_WARMUP=2
while [ $# -gt 0 ]; do
  case "$1" in
    --bootstrap) BOOTSTRAP="$2"; shift 2 ;;
    --scenarios) SCENARIOS="$2"; shift 2 ;;
    --rates) RATES="$2"; shift 2 ;;
    --seconds) SECONDS_RUN="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --systems) SYSTEMS="$2"; shift 2 ;;
    --results) RESULTS_OUT="$2"; shift 2 ;;
    --shape) SHAPE="$2"; shift 2 ;;
    --self-check) SELF_CHECK=1; shift ;;
    --find-max) FIND_MAX=1; shift ;;
    --p99-ms) P99_MS="$2"; shift 2 ;;
    --start-rate) START_RATE="$2"; shift 2 ;;
    --max-steps) MAX_STEPS="$2"; shift 2 ;;
    --step-seconds) STEP_SECONDS="$2"; shift 2 ;;
    --step-warmup) STEP_WARMUP="$2"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

PARTITIONS=1
case "$SHAPE" in
  default) DEFAULT_SCENARIOS="stateless groupby broadcast_join" ;;
  databricks)
    SIZE=1200
    PARTITIONS=4
    # As many shuffle partitions as input partitions, as Spark's.
    export FLOW_OPTIONS="${FLOW_OPTIONS:-'shuffle.partitions' = '4'}"
    DEFAULT_SCENARIOS="stateless groupby_new_key broadcast_join" ;;
  *) echo "run.sh: unknown shape $SHAPE (default, databricks)" >&2; exit 2 ;;
esac
[ -n "$SCENARIOS" ] || SCENARIOS="$DEFAULT_SCENARIOS"

WORK="$(mktemp -d /tmp/rtsql-peers.XXXXXX)"
PEER_PID=""

# peer_tree PID : PID and every process below it.
peer_tree() {
  ps -e -o pid=,ppid= | awk -v root="$1" '
    { parent[$1] = $2; pids[NR] = $1 }
    END {
      for (i = 1; i <= NR; i++) {
        p = pids[i]; q = p; hops = 0
        while (q != "" && q != root && q > 1 && hops++ < 64) q = parent[q]
        if (q == root) print p
      }
    }'
}

# stop_peer : TERM to the peer's driver and the JVM under it (by id), at most
# 20 s, then KILL.
stop_peer() {
  [ -n "$PEER_PID" ] || return 0
  local pids p
  pids="$(peer_tree "$PEER_PID")"
  for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
  for _ in $(seq 1 200); do
    local alive=""
    for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ -n "$alive" ] || break
    sleep 0.1
  done
  for p in $pids; do kill -KILL "$p" 2>/dev/null || true; done
  wait "$PEER_PID" 2>/dev/null || true
  PEER_PID=""
}

cleanup() {
  local p
  for p in $BENCH_CHILDREN; do kill -TERM "$p" 2>/dev/null || true; done
  stop_peer
  if [ -n "${BENCH_KEEP:-}" ]; then echo "work directory kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP PIPE

RESULTS="$WORK/results.jsonl"
: >"$RESULTS"

# table RESULTS : the side-by-side table of a results file (JSON lines).
table() {
  "$PY" - "$1" <<'PYEOF'
import json, sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
systems = []
for r in rows:
    if r["system"] not in systems:
        systems.append(r["system"])
by = {(r["scenario"], r["rate"], r["system"]): r for r in rows}
keys = []
for r in rows:
    k = (r["scenario"], r["rate"])
    if k not in keys:
        keys.append(k)


def lat(d, p):
    v = (d or {}).get("latencyMs", {}).get(p)
    return "n/a" if v is None else f"{v:.1f}"


def num(v, f="{:.0f}"):
    return "n/a" if v is None else f.format(v)


def cell(k, s, what):
    r = by.get((*k, s))
    if r is None:
        return "-"
    if r.get("refused"):
        return "refused"
    if what == "cpu":
        return num(r.get("cpu", {}).get("cpuPct"))
    if what == "us":
        return num(r.get("cpu", {}).get("usPerRecord"))
    if what == "p50":
        return lat(r.get("flow"), "P50")
    if what == "p99":
        return lat(r.get("flow"), "P99")


def floor(k):
    fl = [by[(*k, s)]["floor"] for s in systems if (*k, s) in by and by[(*k, s)].get("floor")]
    p50 = [f["latencyMs"]["P50"] for f in fl if "latencyMs" in f]
    p99 = [f["latencyMs"]["P99"] for f in fl if "latencyMs" in f]
    if not p99:
        return "n/a"
    return f"{min(p50):.1f}-{max(p50):.1f} / {min(p99):.1f}-{max(p99):.1f}"


def load(k):
    ls = [by[(*k, s)]["load"][0].split()[0] for s in systems if (*k, s) in by]
    return "/".join(ls)


names = " / ".join(systems)
hdr = ["scenario", "rate/s", f"CPU % of a core ({names})", f"CPU us/record ({names})",
       f"e2e P50 ms ({names})", f"e2e P99 ms ({names})", "floor P50 / P99 ms (range)",
       f"load avg 1 min ({names})"]
print("| " + " | ".join(hdr) + " |")
print("|" + "|".join("---" for _ in hdr) + "|")
for k in keys:
    line = [k[0], f"{k[1]:,}"]
    for what in ("cpu", "us", "p50", "p99"):
        line.append(" / ".join(cell(k, s, what) for s in systems))
    line += [floor(k), load(k)]
    print("| " + " | ".join(line) + " |")
print()
print("per run: system scenario rate: expected lost duplicates repeatsPassed | refused")
for r in rows:
    fw = r.get("flow") or {}
    extra = f" | refused: {r['refused']}" if r.get("refused") else ""
    print(f"  {r['system']} {r['scenario']} {r['rate']}: {fw.get('expected', 'n/a')} "
          f"{fw.get('lost', 'n/a')} {fw.get('duplicates', 'n/a')} "
          f"{fw.get('repeatsPassed', 'n/a')}{extra}")
PYEOF
}

# max_table RESULTS : the highest rate each system held per scenario, and
# the steps that found it.
max_table() {
  "$PY" - "$1" "$P99_MS" <<'PYEOF'
import json, sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
limit = float(sys.argv[2])


def held(r):
    f = r.get("flow") or {}
    return (not r.get("refused") and f.get("received", 0) > 0 and f.get("lost", 1) == 0
            and f.get("duplicates", 0) == 0 and f.get("repeatsPassed", 0) == 0
            and f.get("latencyMs", {}).get("P99", 1e18) < limit)


keys = []
for r in rows:
    if (r["scenario"], r["system"]) not in keys:
        keys.append((r["scenario"], r["system"]))
print(f"| scenario | system | highest rate held (P99 < {limit:g} ms, nothing lost) | steps: rate/s P99 ms (load average) |")
print("|---|---|---|---|")
for sc, sys_ in keys:
    steps = [r for r in rows if r["scenario"] == sc and r["system"] == sys_]
    best = max((r["rate"] for r in steps if held(r)), default=None)
    if any(r.get("refused") for r in steps):
        best_s = "refused"
    else:
        best_s = "none" if best is None else f"{best:,}"
    desc = []
    for r in steps:
        p99 = (r.get("flow") or {}).get("latencyMs", {}).get("P99")
        lost = (r.get("flow") or {}).get("lost")
        mark = "" if held(r) else " x"
        p = "n/a" if p99 is None else f"{p99:.1f}"
        extra = f" lost {lost}" if lost else ""
        desc.append(f"{r['rate']:,} {p}{extra}{mark} ({r['load'][0].split()[0]})")
    print(f"| {sc} | {sys_} | {best_s} | {'; '.join(desc)} |")
PYEOF
}

if [ -n "$SELF_CHECK" ]; then
  # What can be checked without the peers installed: the scripts parse, the
  # CPU sampler sees a busy child, and the table renders.
  bash -n "$0" "$BENCH/scenarios/scenario.sh" "$BENCH/lib.sh" "$HERE/setup.sh"
  "$PY" -m py_compile "$HERE/spark_flow.py" "$HERE/flink_flow.py"
  # A child that spins until it is stopped, so it is still there at the
  # window's second reading however slowly the machine answers.
  ( while :; do :; done ) &
  busy=$!
  BENCH_CHILDREN="$BENCH_CHILDREN $busy"
  bench_cpu_window "$$" 0 1 "$WORK/cpu"
  wait "$CPU_WINDOW_PID"
  kill "$busy"
  wait "$busy" 2>/dev/null || true
  ticks="$(cut -d' ' -f1 "$WORK/cpu")"
  [ "$ticks" -gt 0 ] || { echo "self-check: the CPU sampler saw no CPU time of a busy child" >&2; exit 1; }
  cpu="$(bench_cpu_json "$WORK/cpu" 1000)"
  for s in rtsql spark flink; do
    echo "{\"system\":\"$s\",\"scenario\":\"stateless\",\"rate\":1000,\"load\":[\"1.00 1.00 1.00\",\"1.00 1.00 1.00\"],\"floor\":{\"latencyMs\":{\"P50\":1.0,\"P99\":2.0}},\"flow\":{\"expected\":10,\"received\":10,\"lost\":0,\"latencyMs\":{\"P50\":1.5,\"P99\":3.0}},\"cpu\":$cpu}"
  done >"$WORK/sample.jsonl"
  echo '{"system":"spark","scenario":"stream_join","rate":1000,"load":["1 1 1","1 1 1"],"refused":"no"}' >>"$WORK/sample.jsonl"
  out="$(table "$WORK/sample.jsonl")"
  echo "$out" | grep -q '^| stateless | 1,000 | ' || { echo "self-check: no table row" >&2; echo "$out" >&2; exit 1; }
  echo "$out" | grep -q 'refused' || { echo "self-check: a refusal is not shown" >&2; exit 1; }
  echo "$out"
  # The find-max table: a step held (P99 3 ms) is the rate shown; a step at
  # a higher rate with a loss is not.
  echo '{"system":"rtsql","scenario":"stateless","rate":2000,"load":["1 1 1","1 1 1"],"flow":{"received":5,"lost":2,"latencyMs":{"P99":3.0}},"refused":null,"step":2}' \
    >>"$WORK/sample.jsonl"
  out="$(max_table "$WORK/sample.jsonl")"
  echo "$out" | grep -q '^| stateless | rtsql | 1,000 | 1,000 3.0 (1.00); 2,000 3.0 lost 2 x (1) |$' ||
    { echo "self-check: the find-max table is wrong" >&2; echo "$out" >&2; exit 1; }
  echo "$out"
  echo "self-check: 2 passed, 0 failed"
  exit 0
fi

[ -n "$BOOTSTRAP" ] || { echo "run.sh: --bootstrap HOST:PORT is required (scripts/kafka.sh start)" >&2; exit 2; }
bench_require run.sh "$LATENCY"
case " $SYSTEMS " in *" spark "*|*" flink "*) "$HERE/setup.sh" --dir "$DEPS" >&2 ;; esac
RUN_ID="$(date +%s)"

# The static side of the broadcast join, as bench/scenarios/scenario.sh makes it.
{
  echo "id,name,category,risk"
  "$PY" -c 'import sys
for i in range(int(sys.argv[1])):
    print(f"{i},merchant-{i:05d},cat{i % 17},{(i % 100) / 100:.2f}")' "$MERCHANTS"
} >"$WORK/merchants.csv"

# collect TOPIC_IN TOPIC_IN2 TOPIC_OUT RATE DUP [--floor] : one collector run.
collect() {
  local in="$1" in2="$2" out="$3" rate="$4" dup="$5"
  local args=(--bootstrap "$BOOTSTRAP" --rate "$rate" --seconds "$SECONDS_RUN" --warmup "$WARMUP"
    --size "$SIZE" --keys "$KEYS" --merchants "$MERCHANTS" --dup-ratio "$dup" --json)
  if [ "${6:-}" = --floor ]; then
    args+=(--in "$out" --floor)
  else
    args+=(--in "$in" --out "$out")
    [ -z "$in2" ] || args+=(--in2 "$in2")
  fi
  "$LATENCY" "${args[@]}" 2>>"$WORK/collector.log" || echo "rtsql_latency failed" >&2
}

# out_count TOPIC : how many records TOPIC holds (bounded).
out_count() {
  timeout 20 kcat -b "$BOOTSTRAP" -C -t "$1" -o beginning -e -q 2>/dev/null | wc -l
}

# record SYSTEM SCENARIO RATE LOAD FLOOR FLOW CPU REFUSED [STEP]
record() {
  "$PY" -c 'import json, sys
a = sys.argv
def j(s):
    try:
        return json.loads(s or "{}")
    except ValueError:
        return {}
print(json.dumps({"system": a[1], "scenario": a[2], "rate": int(a[3]),
                  "load": [a[4], a[5]], "floor": j(a[6]), "flow": j(a[7]),
                  "cpu": j(a[8]), "refused": a[9] or None,
                  "step": int(a[10]) if a[10] else None}))' \
    "$1" "$2" "$3" "$4" "$(bench_load)" "$5" "$6" "$7" "$8" "${9:-}" >>"$RESULTS"
}

# held_last : whether the last result (a find-max step) held the rate: records
# came through, none was lost or repeated, and P99 stayed under P99_MS.
held_last() {
  "$PY" - "$RESULTS" "$P99_MS" <<'PYEOF'
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
f = r.get("flow") or {}
ok = (not r.get("refused") and f.get("received", 0) > 0 and f.get("lost", 1) == 0
      and f.get("duplicates", 0) == 0 and f.get("repeatsPassed", 0) == 0
      and f.get("latencyMs", {}).get("P99", 1e18) < float(sys.argv[2]))
sys.exit(0 if ok else 1)
PYEOF
}

# find_max_peer SYSTEM SCENARIO : scenario.sh --find-max's search (doubling,
# then bisection to within 10%) over run_peer steps.
find_max_peer() {
  local sys="$1" sc="$2" lo=0 hi=0 rate="$START_RATE" step next verdict
  for step in $(seq 1 "$MAX_STEPS"); do
    STEP="$step"
    run_peer "$sys" "$sc" "$rate"
    if held_last; then lo="$rate"; verdict=held; else hi="$rate"; verdict="not held"; fi
    echo "$sys $sc step ${step}: ${rate}/s ${verdict} (load average $(bench_load))" >&2
    # A peer that refuses the scenario refuses it at any rate.
    grep -q '"refused": null' <(tail -n 1 "$RESULTS") || break
    if [ "$hi" = 0 ]; then
      rate=$((rate * 2))
    elif [ "$lo" = 0 ]; then
      rate=$((rate / 2 / 100 * 100))
      [ "$rate" -ge 100 ] || break
    else
      [ $((hi - lo)) -gt $((lo / 10)) ] || break
      next=$(((lo + hi) / 2 / 100 * 100))
      { [ "$next" -gt "$lo" ] && [ "$next" -lt "$hi" ]; } || break
      rate="$next"
    fi
  done
  STEP=""
}


# run_peer SYSTEM SCENARIO RATE : one peer flow on fresh topics: started,
# waited for (its first output), floor, measured run, stopped.
run_peer() {
  local sys="$1" sc="$2" rate="$3" tag dup=0 in in2="" out floor_topic t log refused="" n
  [ "$sc" != dedup ] || dup=0.2
  tag="${sys}_${sc}_${rate}_${STEP:-0}_${RUN_ID}"
  in="peer_in_${tag}"
  out="peer_out_${tag}"
  floor_topic="peer_floor_${tag}"
  [ "$sc" != stream_join ] || in2="peer_in2_${tag}"
  bench_create_topics "$BOOTSTRAP" "$PARTITIONS" "$in" $in2 "$out" "$floor_topic"
  for t in "$in" $in2 "$out" "$floor_topic"; do
    echo '{"ts_us":1,"ts":1,"seq":-1,"event_id":-1,"user_id":"warm","url":"u","amount":11.0,"merchant_id":0,"pad":""}' \
      | kcat -b "$BOOTSTRAP" -t "$t" -P 2>/dev/null
  done
  log="$WORK/${tag}.log"
  if [ "$sys" = spark ]; then
    SPARK_LOCAL_IP=127.0.0.1 "$DEPS/spark/bin/python" "$HERE/spark_flow.py" "$sc" --bootstrap "$BOOTSTRAP" --in "$in" \
      ${in2:+--in2 "$in2"} --out "$out" --checkpoint "$WORK/ckpt_${tag}" --shuffle-partitions "$PARTITIONS" \
      --jars "$(ls "$DEPS"/jars/spark/*.jar | paste -sd, -)" \
      --merchants "$WORK/merchants.csv" >"$log" 2>&1 &
  else
    # Flink unpacks jars into java.io.tmpdir: into the work directory, so that
    # they go with it.
    mkdir -p "$WORK/tmp"
    JVM_ARGS="-Djava.io.tmpdir=$WORK/tmp" "$DEPS/flink/bin/python" "$HERE/flink_flow.py" "$sc" --bootstrap "$BOOTSTRAP" --in "$in" \
      ${in2:+--in2 "$in2"} --out "$out" --jar "$(ls "$DEPS"/jars/flink/*.jar | head -n 1)" \
      --merchants "$WORK/merchants.csv" >"$log" 2>&1 &
  fi
  PEER_PID=$!
  # Ready when the warm-up record has come through (the output topic holds
  # its own first record and the flow's).
  local deadline=$((SECONDS + START_TIMEOUT))
  while :; do
    if ! kill -0 "$PEER_PID" 2>/dev/null; then
      refused="$(grep -m1 '^refused:' "$log" | cut -c10- || true)"
      [ -n "$refused" ] || refused="exited: $(tail -n 3 "$log" | tr '\n' ' ' | cut -c1-400)"
      break
    fi
    n="$(out_count "$out")"
    [ "$n" -lt 2 ] || break
    if [ $SECONDS -ge $deadline ]; then
      refused="no output within ${START_TIMEOUT} s: $(tail -n 3 "$log" | tr '\n' ' ' | cut -c1-400)"
      break
    fi
    sleep 1
  done
  if [ -n "$refused" ]; then
    echo "$sys $sc: $refused" >&2
    stop_peer
    record "$sys" "$sc" "$rate" "$(bench_load)" "" "" "" "$refused" "$STEP"
    return 0
  fi
  grep -h '^note:' "$log" >&2 || true
  sleep 2
  local load_before floor="" flow
  load_before="$(bench_load)"
  if [ -z "$FIND_MAX" ]; then
    echo "$sys $sc ${rate}/s: floor (load average $load_before)" >&2
    floor="$(collect "$floor_topic" "" "$floor_topic" "$rate" "$dup" --floor)"
  fi
  echo "$sys $sc ${rate}/s: flow" >&2
  bench_cpu_window "$PEER_PID" "$WARMUP" "$SECONDS_RUN" "$WORK/cpu_${tag}"
  flow="$(collect "$in" "$in2" "$out" "$rate" "$dup")"
  wait "$CPU_WINDOW_PID" 2>/dev/null || true
  stop_peer
  record "$sys" "$sc" "$rate" "$load_before" "$floor" "$flow" \
    "$(bench_cpu_json "$WORK/cpu_${tag}" "$rate")" "" "$STEP"
}

if [ -n "$FIND_MAX" ]; then
  SECONDS_RUN="$STEP_SECONDS"
  WARMUP="$STEP_WARMUP"
fi

for sc in $SCENARIOS; do
  for sys in $SYSTEMS; do
    case "$sys" in
      rtsql)
        if [ -n "$FIND_MAX" ]; then
          echo "rtsql $sc: bench/scenarios/scenario.sh --find-max (load average $(bench_load))" >&2
          : >"$WORK/rtsql.jsonl"
          "$BENCH/scenarios/scenario.sh" "$sc" --find-max --p99-ms "$P99_MS" --start-rate "$START_RATE" \
            --max-rate 1000000 --max-steps "$MAX_STEPS" --step-seconds "$STEP_SECONDS" \
            --step-warmup "$STEP_WARMUP" --bootstrap "$BOOTSTRAP" --size "$SIZE" --keys "$KEYS" \
            --partitions "$PARTITIONS" --results "$WORK/rtsql.jsonl" \
            >"$WORK/rtsql_${sc}.txt" || echo "rtsql $sc: scenario.sh failed" >&2
          "$PY" -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(json.dumps({"system": "rtsql", "scenario": r["scenario"], "rate": r["rate"],
                      "load": r["load"], "floor": {}, "flow": r["flow"], "cpu": r.get("cpu", {}),
                      "refused": None, "step": r.get("step")}))' \
            "$WORK/rtsql.jsonl" >>"$RESULTS"
          continue
        fi
        echo "rtsql $sc: bench/scenarios/scenario.sh (load average $(bench_load))" >&2
        : >"$WORK/rtsql.jsonl"
        "$BENCH/scenarios/scenario.sh" "$sc" --rates "$RATES" --seconds "$SECONDS_RUN" --warmup "$WARMUP" \
          --bootstrap "$BOOTSTRAP" --size "$SIZE" --keys "$KEYS" --partitions "$PARTITIONS" \
          --results "$WORK/rtsql.jsonl" \
          >"$WORK/rtsql_${sc}.txt" || echo "rtsql $sc: scenario.sh failed" >&2
        "$PY" -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(json.dumps({"system": "rtsql", "scenario": r["scenario"], "rate": r["rate"],
                      "load": r["load"], "floor": r["floor"], "flow": r["flow"],
                      "cpu": r.get("cpu", {}), "refused": None}))' \
          "$WORK/rtsql.jsonl" >>"$RESULTS"
        ;;
      spark|flink)
        if [ -n "$FIND_MAX" ]; then
          find_max_peer "$sys" "$sc"
        else
          for rate in $RATES; do run_peer "$sys" "$sc" "$rate"; done
        fi ;;
      *) echo "run.sh: unknown system $sys (rtsql, spark, flink)" >&2; exit 2 ;;
    esac
  done
done

[ -z "$RESULTS_OUT" ] || cat "$RESULTS" >>"$RESULTS_OUT"
if [ -n "$FIND_MAX" ]; then
  echo "highest rate held on Apache Kafka at $BOOTSTRAP (RTSQL_BIN_DIR=$BIN); shape ${SHAPE}:" \
    "${SIZE}-byte records, ${PARTITIONS} partition(s); ${SECONDS_RUN} s per step after ${WARMUP} s warm-up"
  max_table "$RESULTS"
  exit 0
fi
echo "rtsql (RTSQL_BIN_DIR=$BIN), Spark real-time mode, Flink SQL on Apache Kafka at $BOOTSTRAP;"
echo "shape ${SHAPE}: ${SIZE}-byte records, ${PARTITIONS} partition(s);" \
  "${SECONDS_RUN} s per run after ${WARMUP} s warm-up; CPU: /proc/PID/stat of each engine's"
echo "process tree over the measured window; e2e: rtsql_latency (receive time - ts_us)"
table "$RESULTS"
