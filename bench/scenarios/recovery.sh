#!/usr/bin/env bash
# Checkpoints and recovery: how long a GROUP BY flow holding N keys takes to
# produce output again after rtsqld is killed with SIGKILL, and what writing
# checkpoints costs the flow's end-to-end latency. See docs/benchmarks.md.
#
#   bench/scenarios/recovery.sh [--keys "100000 1000000"] [--bootstrap HOST:PORT]
#                     [--partitions 4] [--rate 1000] [--seconds 20] [--warmup 8]
#                     [--timeout 300]
#
# For each key count N, on the Apache Kafka broker at --bootstrap (default
# 127.0.0.1:19092, where scripts/kafka.sh start puts it), in a fresh work directory:
#
# 1. Starts rtsqld --data-dir WORK/data and runs
#      CREATE SOURCE src (ts_us BIGINT, user_id STRING) ... (input topic, --partitions)
#      CREATE FLOW f INTO out CHECKPOINT INTERVAL '5 seconds' AS
#      SELECT user_id AS k, count(*) AS n, max(ts_us) AS ts_us FROM src GROUP BY user_id;
# 2. Loads N distinct keys (user0 .. user<N-1>, one record each, as fast as a
#    Python producer goes), waits until the Aggregate's numRowsTotal is N and
#    then until a later checkpoint has completed; notes its durationMs and
#    stateBytes.
# 3. Starts a steady input of --rate records/s over the existing keys and a
#    consumer of the sink topic (from its end), kills rtsqld with SIGKILL,
#    restarts it on the same data directory and measures, from the moment of the
#    spawn: when SQL answers, when the first sink record written by the new
#    process appears (its Kafka CreateTime, and the consumer's receive time),
#    and when the output has caught up (first output record whose
#    receive time - ts_us is under 100 ms); and recovery.restoreMs from
#    SHOW PROGRESS.
# 4. Checkpoint cost: drops f and, for CHECKPOINT INTERVAL '5 minutes' (no
#    checkpoint during the run) and '2 seconds', creates a flow with the same
#    query reading the input from the beginning (so its state holds the N
#    keys), waits for numRowsTotal = N, and runs rtsql_latency at --rate over
#    existing keys (--seconds measured after --warmup; the warm-up also lets
#    the collector read past the N rows of the load already in the sink topic).
#    SHOW PROGRESS is sampled every second to list the checkpoints written
#    during the run. The broker's floor (rtsql_latency --floor) runs once per N.
#
# Binaries: RTSQLD, RTSQL and RTSQL_LATENCY when set, else lib.sh's defaults
# (${RTSQL_BIN_DIR:-build}). Every wait is bounded (--timeout for the loads).
# Everything listens on 127.0.0.1 only. BENCH_KEEP=1 keeps the work directory.
set -euo pipefail
_ENV_RTSQLD="${RTSQLD:-}"
_ENV_RTSQL="${RTSQL:-}"
. "$(dirname "$0")/../lib.sh"
RTSQLD="${_ENV_RTSQLD:-$RTSQLD}"
RTSQL="${_ENV_RTSQL:-$RTSQL}"

KEYS_LIST="100000 1000000"
BOOTSTRAP="127.0.0.1:19092"
PARTITIONS=4
RATE=1000
SECONDS_RUN=20
WARMUP=8
TIMEOUT=300
while [ $# -gt 0 ]; do
  case "$1" in
    --keys) KEYS_LIST="$2"; shift 2 ;;
    --bootstrap) BOOTSTRAP="$2"; shift 2 ;;
    --partitions) PARTITIONS="$2"; shift 2 ;;
    --rate) RATE="$2"; shift 2 ;;
    --seconds) SECONDS_RUN="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --timeout) TIMEOUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,40p' "$0"; exit 0 ;;
    *) echo "recovery.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

bench_require recovery.sh "$RTSQLD" "$RTSQL" "$LATENCY"
timeout 10 kcat -b "$BOOTSTRAP" -L -m 3 >/dev/null 2>&1 || {
  echo "recovery.sh: no broker answers at $BOOTSTRAP (scripts/kafka.sh start)" >&2
  exit 1
}

WORK="$(mktemp -d /tmp/rtsql-recovery.XXXXXX)"
trap bench_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP PIPE
RESULTS="$WORK/results.jsonl"
: >"$RESULTS"
HELPER="$WORK/helper.py"

# The Python side: topic creation, the bulk load, the steady input with the
# sink consumer of the recovery measurement, progress parsing and the table.
cat >"$HELPER" <<'EOF'
import json, os, sys, threading, time
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def now_us():
    return time.time_ns() // 1000


def topics(bootstrap, partitions, names):
    admin = AdminClient({"bootstrap.servers": bootstrap})
    fs = admin.create_topics([NewTopic(n, int(partitions), 1) for n in names],
                             operation_timeout=30)
    for n, f in fs.items():
        f.result(timeout=60)


def producer(bootstrap):
    return Producer({"bootstrap.servers": bootstrap, "linger.ms": 5,
                     "queue.buffering.max.messages": 1000000,
                     "queue.buffering.max.kbytes": 262144, "batch.num.messages": 10000})


def load(bootstrap, topic, n):
    """One record per key user0 .. user<n-1>, keyed by user_id; prints seconds."""
    p = producer(bootstrap)
    t0 = time.monotonic()
    for i in range(int(n)):
        k = f"user{i}"
        v = f'{{"ts_us":{now_us()},"user_id":"{k}"}}'
        for _ in range(1000):
            try:
                p.produce(topic, v, k)
                break
            except BufferError:
                p.poll(0.05)
        if i % 10000 == 0:
            p.poll(0)
    left = p.flush(120)
    print(f"{time.monotonic() - t0:.2f}" if left == 0 else "-1")


def steady(bootstrap, in_topic, out_topic, n, rate, t0_file, ready_file, max_s):
    """--rate records/s over existing keys into in_topic while reading out_topic
    from its end; once the spawn time is in t0_file, finds the first sink record
    written after it and the first one that is no longer behind."""
    n, rate, max_s = int(n), float(rate), float(max_s)
    stop = threading.Event()

    def produce():
        p = producer(bootstrap)
        i, start = 0, time.monotonic()
        while not stop.is_set():
            due = start + i / rate
            d = due - time.monotonic()
            if d > 0:
                time.sleep(min(d, 0.05))
                continue
            k = f"user{(i * 7919) % n}"
            p.produce(in_topic, f'{{"ts_us":{now_us()},"user_id":"{k}"}}', k)
            p.poll(0)
            i += 1
        p.flush(10)

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"recovery-{os.getpid()}",
                  "enable.auto.commit": False, "fetch.wait.max.ms": 10})
    md = c.list_topics(out_topic, timeout=10).topics[out_topic]
    parts = []
    for pid in md.partitions:
        lo, hi = c.get_watermark_offsets(TopicPartition(out_topic, pid), timeout=10)
        parts.append(TopicPartition(out_topic, pid, hi))
    c.assign(parts)
    th = threading.Thread(target=produce, daemon=True)
    th.start()
    open(ready_file, "w").close()
    res = {"t0Us": None, "firstCreateMs": None, "firstReceiveMs": None, "caughtUpMs": None,
           "rowsAfter": 0, "rowsBefore": 0}
    deadline = time.monotonic() + max_s
    t0 = None
    while time.monotonic() < deadline:
        if t0 is None and os.path.exists(t0_file):
            s = open(t0_file).read().strip()
            if s:
                t0 = int(s)
                res["t0Us"] = t0
        msgs = c.consume(500, 0.05)
        recv = now_us()
        for m in msgs:
            if m.error():
                continue
            ttype, ts_ms = m.timestamp()
            if t0 is None or ts_ms * 1000 < t0:
                res["rowsBefore"] += 1
                continue
            res["rowsAfter"] += 1
            if res["firstCreateMs"] is None:
                res["firstCreateMs"] = (ts_ms * 1000 - t0) / 1000
                res["firstReceiveMs"] = (recv - t0) / 1000
            try:
                lag = recv - json.loads(m.value())["ts_us"]
            except (ValueError, KeyError, TypeError):
                continue
            if res["caughtUpMs"] is None and lag < 100000:
                res["caughtUpMs"] = (recv - t0) / 1000
        if res["caughtUpMs"] is not None:
            break
    stop.set()
    th.join(15)
    c.close()
    print(json.dumps(res))


def progress(text):
    try:
        p = json.loads(text or "{}")
    except ValueError:
        p = {}
    rows = sum(o.get("numRowsTotal", 0) for o in p.get("stateOperators", []))
    cp = p.get("checkpoint") or {}
    rec = p.get("recovery") or {}
    print(rows, p.get("batchId", -1), cp.get("epoch", -1), cp.get("durationMs", -1),
          cp.get("stateBytes", -1), rec.get("fromEpoch", -1), rec.get("restoreMs", -1),
          rec.get("recoveries", -1))


def table(results_file):
    rows = [json.loads(l) for l in open(results_file) if l.strip()]

    def f(v, nd=0):
        if v is None or v == "" or (isinstance(v, (int, float)) and v < 0):
            return "n/a"
        return f"{v:,.{nd}f}"

    def lat(r, p):
        return (r or {}).get("latencyMs", {}).get(p)

    def cps(r):
        d = [c["durationMs"] for c in r.get("checkpoints", [])]
        if not d:
            return "none"
        d.sort()
        return f"{len(d)}: {d[0]:,.0f} / {d[len(d) // 2]:,.0f} / {d[-1]:,.0f}"

    print("recovery (times in ms from the spawn of the new rtsqld):")
    hdr = ["keys", "load s", "state=N after s", "checkpoint ms", "state MiB",
           "SQL answers", "restoreMs", "first output (CreateTime)", "first output (received)",
           "caught up", "fromEpoch", "load avg"]
    print(" | ".join(hdr))
    print(" | ".join("-" * len(h) for h in hdr))
    for r in rows:
        s = r.get("steady", {})
        print(" | ".join([f(r["keys"]), f(r["loadSeconds"], 1), f(r["stateSeconds"], 1),
                          f(r["checkpointMs"], 0), f(r["stateBytes"] / 2**20, 1),
                          f(r["sqlAnswersMs"], 0), f(r["restoreMs"], 0),
                          f(s.get("firstCreateMs"), 0), f(s.get("firstReceiveMs"), 0),
                          f(s.get("caughtUpMs"), 0), str(r["fromEpoch"]), r["loadRecovery"]]))
    print()
    print(f"checkpoint cost (e2e latency in ms measured by rtsql_latency; "
          f"checkpoints during the run: count: min / median / max durationMs):")
    hdr = ["keys", "interval", "P50", "P99", "max", "lost", "checkpoints", "floor P50",
           "floor P99", "load avg"]
    print(" | ".join(hdr))
    print(" | ".join("-" * len(h) for h in hdr))
    for r in rows:
        for c in r.get("cost", []):
            fl = r.get("floor") or {}
            fw = c.get("collector") or {}
            print(" | ".join([f(r["keys"]), c["interval"], f(lat(fw, "P50"), 2),
                              f(lat(fw, "P99"), 2), f(lat(fw, "max"), 1),
                              f"{fw.get('lost', 'n/a')} of {fw.get('expected', 'n/a')}",
                              cps(c), f(lat(fl, "P50"), 2), f(lat(fl, "P99"), 2), c["load"]]))


cmd = sys.argv[1]
if cmd == "topics":
    topics(sys.argv[2], sys.argv[3], sys.argv[4:])
elif cmd == "load":
    load(*sys.argv[2:5])
elif cmd == "steady":
    steady(*sys.argv[2:10])
elif cmd == "progress":
    progress(sys.stdin.read())
elif cmd == "table":
    table(sys.argv[2])
EOF

# start_rtsqld : starts rtsqld on $DATA (a new loopback port each time) and
# waits until it answers; sets PORT and RTSQLD_PID.
start_rtsqld() {
  bench_launch_rtsqld "$DATA" "$RUNDIR/rtsqld.log"
}

# prog FLOW : "rows batchId cpEpoch cpDurationMs cpStateBytes fromEpoch restoreMs recoveries"
prog() {
  psql_q "SHOW PROGRESS $1" 2>/dev/null | "$PY" "$HELPER" progress
}

# wait_rows FLOW N : waits (at most --timeout s) until the flow's state holds N
# rows; prints the seconds taken, or -1.
wait_rows() {
  local t0 p
  t0=$(date +%s.%N)
  for _ in $(seq 1 $((TIMEOUT * 2))); do
    p="$(prog "$1")"
    if [ "${p%% *}" -ge "$2" ] 2>/dev/null; then
      awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{printf "%.1f\n", a - b}'
      return 0
    fi
    sleep 0.5
  done
  echo -1
}

now_us() { echo $(( $(date +%s%N) / 1000 )); }

for N in $KEYS_LIST; do
  RUNDIR="$WORK/n$N"
  DATA="$RUNDIR/data"
  mkdir -p "$RUNDIR"
  TAG="rec_$(date +%s)_$N"
  IN="${TAG}_in"
  OUT="${TAG}_out"
  FLOOR="${TAG}_floor"
  "$PY" "$HELPER" topics "$BOOTSTRAP" "$PARTITIONS" "$IN" "$OUT" "$FLOOR" \
    "${TAG}_cost_slow" "${TAG}_cost_fast"
  start_rtsqld
  echo "== ${N} keys on Apache Kafka at ${BOOTSTRAP}, topics of ${PARTITIONS} partitions;" \
    "load average $(bench_load)" >&2
  cat >"$RUNDIR/flow.sql" <<EOF
CREATE SOURCE src (ts_us BIGINT, user_id STRING) WITH (
    connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    subscribe = '${IN}', startingOffsets = 'earliest', format = 'json');
CREATE SINK out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${OUT}', format = 'json');
CREATE SINK cost_slow_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${TAG}_cost_slow', format = 'json');
CREATE SINK cost_fast_out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${BOOTSTRAP}',
    topic = '${TAG}_cost_fast', format = 'json');
CREATE FLOW f INTO out CHECKPOINT INTERVAL '5 seconds' AS
SELECT user_id AS k, count(*) AS n, max(ts_us) AS ts_us FROM src GROUP BY user_id;
EOF
  "$RTSQL" -h 127.0.0.1 -p "$PORT" -q -f "$RUNDIR/flow.sql" >&2

  # 2. The load, the state, a checkpoint that covers it.
  LOAD_BEFORE="$(bench_load)"
  T_LOAD=$(date +%s.%N)
  LOAD_S="$("$PY" "$HELPER" load "$BOOTSTRAP" "$IN" "$N")"
  echo "loaded ${N} keys in ${LOAD_S} s; waiting for the state" >&2
  STATE_S="$(wait_rows f "$N")"
  STATE_S="$(awk -v a="$(date +%s.%N)" -v b="$T_LOAD" -v ok="$STATE_S" \
    'BEGIN{ if (ok < 0) print -1; else printf "%.1f\n", a - b }')"
  read -r _ _ CP0 _ _ _ _ _ <<<"$(prog f)"
  CP_MS=-1; CP_BYTES=-1; CP_EPOCH=-1
  for _ in $(seq 1 60); do
    read -r ROWS _ CP CPMS CPB _ _ _ <<<"$(prog f)"
    if [ "$CP" -gt "$CP0" ] 2>/dev/null; then
      CP_MS="$CPMS"; CP_BYTES="$CPB"; CP_EPOCH="$CP"
      break
    fi
    sleep 0.5
  done
  echo "state ${ROWS} rows after ${STATE_S} s from the load's start; checkpoint ${CP_EPOCH}" \
    "took ${CP_MS} ms, ${CP_BYTES} bytes" >&2

  # 3. Steady input, kill -9, restart, first output.
  rm -f "$RUNDIR/t0" "$RUNDIR/ready"
  "$PY" "$HELPER" steady "$BOOTSTRAP" "$IN" "$OUT" "$N" "$RATE" "$RUNDIR/t0" "$RUNDIR/ready" \
    180 >"$RUNDIR/steady.json" 2>"$RUNDIR/steady.err" &
  STEADY_PID=$!
  BENCH_CHILDREN="$BENCH_CHILDREN $STEADY_PID"
  for _ in $(seq 1 100); do [ -e "$RUNDIR/ready" ] && break; sleep 0.1; done
  sleep 3
  LOAD_REC="$(bench_load)"
  kill -KILL "$RTSQLD_PID"
  wait "$RTSQLD_PID" 2>/dev/null || true
  T0=$(now_us)
  echo "$T0" >"$RUNDIR/t0"
  start_rtsqld
  SQL_MS=$(( ($(now_us) - T0) / 1000 ))
  RESTORE_MS=-1; FROM_EPOCH=-1
  for _ in $(seq 1 600); do
    read -r _ _ _ _ _ FE RMS _ <<<"$(prog f)"
    if [ "${FE:--1}" != -1 ]; then RESTORE_MS="$RMS"; FROM_EPOCH="$FE"; break; fi
    sleep 0.1
  done
  for _ in $(seq 1 1900); do kill -0 "$STEADY_PID" 2>/dev/null || break; sleep 0.1; done
  wait "$STEADY_PID" 2>/dev/null || true
  STEADY="$(cat "$RUNDIR/steady.json")"
  [ -n "$STEADY" ] || STEADY='{}'
  echo "restart: SQL after ${SQL_MS} ms, restoreMs ${RESTORE_MS} (epoch ${FROM_EPOCH});" \
    "sink: ${STEADY}" >&2
  psql_q "DROP FLOW f" >/dev/null

  # 4. Checkpoint cost: the floor, then one flow per interval.
  "$LATENCY" --bootstrap "$BOOTSTRAP" --in "$FLOOR" --floor --rate "$RATE" \
    --seconds "$SECONDS_RUN" --warmup 3 --keys "$N" --json >"$RUNDIR/floor.json" \
    || echo "rtsql_latency --floor failed" >&2
  COSTS=""
  for SPEC in "slow:5 minutes" "fast:2 seconds"; do
    NAME="${SPEC%%:*}"
    INTERVAL="${SPEC#*:}"
    psql_q "CREATE FLOW cost_${NAME} INTO cost_${NAME}_out CHECKPOINT INTERVAL '${INTERVAL}' AS
SELECT user_id AS k, count(*) AS n, max(ts_us) AS ts_us FROM src GROUP BY user_id" >/dev/null
    LOADED_S="$(wait_rows "cost_${NAME}" "$N")"
    echo "cost_${NAME} (${INTERVAL}): state of ${N} keys after ${LOADED_S} s" >&2
    CPFILE="$RUNDIR/cp_${NAME}.txt"
    : >"$CPFILE"
    (
      for _ in $(seq 1 $((SECONDS_RUN + WARMUP + 30))); do
        prog "cost_${NAME}" >>"$CPFILE" 2>/dev/null || true
        sleep 1
      done
    ) &
    SAMPLER=$!
    BENCH_CHILDREN="$BENCH_CHILDREN $SAMPLER"
    L1="$(bench_load)"
    "$LATENCY" --bootstrap "$BOOTSTRAP" --in "$IN" --out "${TAG}_cost_${NAME}" --rate "$RATE" \
      --seconds "$SECONDS_RUN" --warmup "$WARMUP" --keys "$N" --json \
      >"$RUNDIR/cost_${NAME}.json" || echo "rtsql_latency failed" >&2
    L2="$(bench_load)"
    kill -TERM "$SAMPLER" 2>/dev/null || true
    wait "$SAMPLER" 2>/dev/null || true
    # The checkpoints the sampler saw complete during the collector's run
    # (warm-up included); the one already there at its first sample is left out.
    COST="$("$PY" - "$CPFILE" "$RUNDIR/cost_${NAME}.json" "$INTERVAL" "$L1" "$L2" \
      "$LOADED_S" <<'PYEOF'
import json, sys
cpf, col, interval, l1, l2, loaded = sys.argv[1:]
seen, cps, first = set(), [], None
for line in open(cpf):
    p = line.split()
    if len(p) < 5:
        continue
    ep, ms, b = int(p[2]), float(p[3]), int(p[4])
    if first is None:
        first = ep          # the checkpoint already there when the run began
        continue
    if ep >= 0 and ep != first and ep not in seen:
        seen.add(ep)
        cps.append({"epoch": ep, "durationMs": ms, "stateBytes": b})
try:
    c = json.loads(open(col).read() or "{}")
except ValueError:
    c = {}
print(json.dumps({"interval": interval, "collector": c, "checkpoints": cps,
                  "load": f"{l1.split()[0]} / {l2.split()[0]}", "stateSeconds": float(loaded)}))
PYEOF
)"
    COSTS="${COSTS:+$COSTS,}$COST"
    psql_q "DROP FLOW cost_${NAME}" >/dev/null
  done

  "$PY" - "$N" "$LOAD_S" "$STATE_S" "$CP_MS" "$CP_BYTES" "$SQL_MS" "$RESTORE_MS" "$FROM_EPOCH" \
    "$STEADY" "$LOAD_BEFORE" "$LOAD_REC" "$RUNDIR/floor.json" "[$COSTS]" >>"$RESULTS" <<'PYEOF'
import json, sys
a = sys.argv[1:]
try:
    floor = json.loads(open(a[11]).read() or "{}")
except (ValueError, OSError):
    floor = {}
print(json.dumps({"keys": int(a[0]), "loadSeconds": float(a[1]), "stateSeconds": float(a[2]),
                  "checkpointMs": float(a[3]), "stateBytes": int(a[4]),
                  "sqlAnswersMs": float(a[5]), "restoreMs": float(a[6]), "fromEpoch": int(a[7]),
                  "steady": json.loads(a[8]), "loadBefore": a[9],
                  "loadRecovery": a[10].split()[0], "floor": floor,
                  "cost": json.loads(a[12])}))
PYEOF
  bench_stop_rtsqld
  echo "done with ${N} keys; load average $(bench_load)" >&2
done

"$PY" "$HELPER" table "$RESULTS"
echo
echo "raw results (JSON lines):"
cat "$RESULTS"
