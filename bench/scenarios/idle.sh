#!/usr/bin/env bash
# Idle and trickle cost: the CPU rtsqld uses when it has (almost) nothing to
# do, in three states, each on a fresh rtsqld:
#   none        no flows at all
#   noinput     one Kafka source -> Kafka sink flow whose topic gets no input
#   quickstart  examples/quickstart.sql deployed (a datagen flow writing 20
#               rows/s to Kafka, and a Kafka -> Kafka flow reading them)
# For each state it waits --settle seconds, then reads utime+stime of rtsqld
# and of each of its threads (/proc/PID/stat, /proc/PID/task/*/stat) at the
# start and the end of --seconds, and prints % of one core, in total and per
# thread name. See docs/benchmarks.md, "Idle and trickle cost".
#
#   bench/scenarios/idle.sh [--seconds S] [--settle S] [--bootstrap HOST:PORT | --local-kafka]
#                 [--baseline BIN_DIR] [--states "none noinput quickstart"]
#                 [--threads N]
#
# Binaries come from ${RTSQL_BIN_DIR:-build}; --baseline BIN_DIR measures a
# second build the same way in the same run, before it, and prints both side by
# side. Without --bootstrap the flows use rtsqld's embedded broker (librdkafka's
# mock cluster, running inside rtsqld: its threads are counted apart as
# "embedded broker"); with it they use that broker (e.g. scripts/kafka.sh
# start) and rtsqld runs without --embedded-kafka; the topics, fresh for each
# run, are created there with Python's confluent_kafka. With --local-kafka
# rtsqld runs its own Apache Kafka (rtsqld --local-kafka, SQL 'local') and the
# broker JVM's CPU is counted in the last column, with the time its start
# took (from rtsqld's log). --threads N prints the
# N busiest thread names of each run (default 8). Everything listens on
# 127.0.0.1 only; every wait is bounded.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

usage() { sed -n '2,28p' "$0"; exit "${1:-0}"; }

SAMPLE_SECONDS=30
SETTLE=5
BOOTSTRAP=""
LOCAL=""
BASELINE=""
STATES="none noinput quickstart"
TOP_THREADS=8
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SAMPLE_SECONDS="$2"; shift 2 ;;
    --settle) SETTLE="$2"; shift 2 ;;
    --bootstrap) BOOTSTRAP="$2"; shift 2 ;;
    --local-kafka) LOCAL=1; shift ;;
    --baseline) BASELINE="$2"; shift 2 ;;
    --states) STATES="$2"; shift 2 ;;
    --threads) TOP_THREADS="$2"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "idle.sh: unknown argument '$1'" >&2; usage 2 ;;
  esac
done
for s in $STATES; do
  case "$s" in none|noinput|quickstart) ;; *) echo "idle.sh: unknown state '$s'" >&2; exit 2 ;; esac
done

HERE="$(cd "$(dirname "$0")" && pwd)"
QUICKSTART="$HERE/../../examples/quickstart.sql"
CANDIDATE="$BIN"
for dir in "$CANDIDATE" ${BASELINE:+"$BASELINE"}; do
  bench_require idle.sh "$dir/server/rtsqld"
done
command -v psql >/dev/null || { echo "idle.sh: psql is needed" >&2; exit 1; }

WORK="$(mktemp -d /tmp/rtsql-idle.XXXXXX)"
trap bench_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP PIPE

# launch BIN_DIR DATA_DIR LOG : starts rtsqld on a free loopback port, with the
# embedded broker unless --bootstrap was given, and waits (at most 30 s) until
# it answers.
launch() {
  local bin="$1" data="$2" log="$3"
  local flags=() tries=300
  if [ -n "$LOCAL" ]; then
    flags+=(--local-kafka)
    tries=3000  # the broker's JVM starts first: up to 300 s on a loaded machine
  elif [ -z "$BOOTSTRAP" ]; then
    flags+=(--embedded-kafka)
  fi
  PORT="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  "$bin/server/rtsqld" --host 127.0.0.1 --port "$PORT" --data-dir "$data" "${flags[@]}" \
    >>"$log" 2>&1 &
  RTSQLD_PID=$!
  for _ in $(seq 1 "$tries"); do
    psql_q 'SELECT 1' >/dev/null 2>&1 && return 0
    kill -0 "$RTSQLD_PID" 2>/dev/null || { echo "rtsqld exited:" >&2; tail -n 30 "$log" >&2; exit 1; }
    sleep 0.1
  done
  echo "rtsqld did not answer in 30 s" >&2
  tail -n 30 "$log" >&2
  exit 1
}

# create_topics NAME... : on a real broker, creates the topics (1 partition,
# as the embedded broker makes them); the embedded broker creates its own.
create_topics() {
  [ -n "$BOOTSTRAP" ] || return 0
  "$PY" - "$BOOTSTRAP" "$@" <<'EOF2'
import sys
from confluent_kafka.admin import AdminClient, NewTopic
admin = AdminClient({"bootstrap.servers": sys.argv[1]})
for name, f in admin.create_topics([NewTopic(n, 1, 1) for n in sys.argv[2:]]).items():
    f.result(30)
EOF2
}

# deploy STATE : creates the state's flows and waits (at most 30 s) until they run.
deploy() {
  local sql_bootstrap="${BOOTSTRAP:-embedded}" tag
  [ -z "$LOCAL" ] || sql_bootstrap=local
  tag="idle$(date +%s%N)"
  case "$1" in
    none) return 0 ;;
    noinput)
      create_topics "${tag}_in" "${tag}_out"
      psql_q "CREATE SOURCE idle_in (v STRING) WITH (connector = 'kafka',
                'kafka.bootstrap.servers' = '$sql_bootstrap', subscribe = '${tag}_in',
                startingOffsets = 'latest', format = 'json')" >/dev/null
      psql_q "CREATE SINK idle_out WITH (connector = 'kafka',
                'kafka.bootstrap.servers' = '$sql_bootstrap', topic = '${tag}_out', format = 'json')" \
        >/dev/null
      psql_q "CREATE FLOW idle_flow INTO idle_out TRIGGER REALTIME AS SELECT v FROM idle_in" >/dev/null
      ;;
    quickstart)
      # Fresh topics per run, so that a real broker's leftovers are not read.
      create_topics "${tag}_clicks" "${tag}_big_clicks"
      sed -e "s/'embedded'/'$sql_bootstrap'/g" \
          -e "s/'clicks'/'${tag}_clicks'/g" -e "s/'big_clicks'/'${tag}_big_clicks'/g" \
          "$QUICKSTART" >"$WORK/quickstart.sql"
      PGCONNECT_TIMEOUT=5 psql -h 127.0.0.1 -p "$PORT" -U rtsql -d rtsql -X -q \
        -v ON_ERROR_STOP=1 -f "$WORK/quickstart.sql" >/dev/null
      ;;
  esac
  local flows
  for _ in $(seq 1 300); do
    flows="$(psql_q "SHOW FLOWS" 2>/dev/null || true)"
    [ -n "$flows" ] && ! echo "$flows" | awk -F'|' '$3 != "running"' | grep -q . && return 0
    sleep 0.1
  done
  echo "idle.sh: the flows of '$1' are not running after 30 s:" >&2
  echo "$flows" >&2
  exit 1
}

# snapshot PID FILE : "tid name ticks" per thread, then "total - ticks".
snapshot() {
  "$PY" - "$1" >"$2" <<'EOF'
import os, sys
pid = sys.argv[1]
def ticks(path):
    with open(path) as f:
        s = f.read()
    name = s[s.index('(') + 1:s.rindex(')')]
    rest = s[s.rindex(')') + 2:].split()
    return name, int(rest[11]) + int(rest[12])
for tid in os.listdir(f'/proc/{pid}/task'):
    try:
        name, t = ticks(f'/proc/{pid}/task/{tid}/stat')
    except OSError:
        continue
    print(tid, name.replace(' ', '_'), t)
print('total', '-', ticks(f'/proc/{pid}/stat')[1])
EOF
}

# measure LABEL BIN_DIR STATE : one fresh rtsqld, deployed, settled, sampled.
# Appends "LABEL STATE total% engine% broker%" to $WORK/results and the
# per-thread lines to $WORK/threads.
measure() {
  local label="$1" bin="$2" state="$3"
  local data="$WORK/data-$label-$state" log="$WORK/rtsqld-$label-$state.log"
  launch "$bin" "$data" "$log"
  deploy "$state"
  sleep "$SETTLE"
  # The local broker's JVM: utime + stime of its process (0 without one).
  local jvm=0 jvm0=0 jvm1=0
  [ -z "$LOCAL" ] || jvm="$(cat "$data/kafka/broker.pid")"
  jvm_ticks() { [ "$jvm" = 0 ] && echo 0 || awk '{print $14 + $15}' "/proc/$jvm/stat"; }
  jvm0="$(jvm_ticks)"
  snapshot "$RTSQLD_PID" "$WORK/before"
  local t0 t1
  t0="$(date +%s.%N)"
  sleep "$SAMPLE_SECONDS"
  snapshot "$RTSQLD_PID" "$WORK/after"
  jvm1="$(jvm_ticks)"
  t1="$(date +%s.%N)"
  [ -z "$LOCAL" ] || grep -o 'started in [0-9.]* s' "$log" | tail -n 1 |
    sed "s/^/idle.sh: $label \/ $state: local broker /" >&2
  bench_stop_rtsqld
  "$PY" - "$WORK/before" "$WORK/after" "$t0" "$t1" "$label" "$state" "$TOP_THREADS" \
    "$([ -n "$LOCAL" ] && echo local || { [ -n "$BOOTSTRAP" ] && echo external || echo embedded; })" \
    "$((jvm1 - jvm0))" \
    >>"$WORK/results" 2>>"$WORK/threads" <<'EOF'
import os, sys
before, after, t0, t1, label, state, top, broker, jvm = sys.argv[1:10]
hz = os.sysconf('SC_CLK_TCK')
secs = float(t1) - float(t0)
def load(path):
    out = {}
    with open(path) as f:
        for line in f:
            tid, name, t = line.split()
            out[tid] = (name, int(t))
    return out
b, a = load(before), load(after)
pct = lambda ticks: 100.0 * ticks / hz / secs
total = a['total'][1] - b['total'][1]
# Threads started during the sample count from zero; threads that ended
# are only in the process total.
by_name = {}
for tid, (name, t) in a.items():
    if tid == 'total':
        continue
    d = t - b.get(tid, (name, 0))[1]
    n, c = by_name.get(name, (0, 0))
    by_name[name] = (n + 1, c + d)
# librdkafka names its threads rdk:main, rdk:broker<id> and, for the mock
# cluster behind --embedded-kafka, rdk:mock; the mock's own handle has a
# main thread too, which cannot be told apart by name from the clients'. The
# proxy in front of the mock (mock-proxy) is the broker's too.
mock = sum(c for name, (n, c) in by_name.items() if name in ('rdk:mock', 'mock-proxy'))
jvm = int(jvm)  # the local broker's process, outside rtsqld's total
kafka_clients = sum(c for name, (n, c) in by_name.items()
                    if name.startswith('rdk:') and name != 'rdk:mock')
print(f"{label} {state} {pct(total):.2f} {pct(total - mock - kafka_clients):.2f} "
      f"{pct(kafka_clients):.2f} {pct(mock + jvm):.2f}")
rows = sorted(by_name.items(), key=lambda kv: -kv[1][1])[:int(top)]
sys.stderr.write(f"{label} / {state} ({broker} broker): {pct(total):.2f}% of a core "
                 f"over {secs:.1f} s\n")
for name, (n, c) in rows:
    sys.stderr.write(f"    {pct(c):6.2f}%  {name}" + (f" (x{n})" if n > 1 else "") + "\n")
EOF
}

echo "idle.sh: ${SAMPLE_SECONDS} s per state after ${SETTLE} s to settle; broker: $([ -n "$LOCAL" ] && echo local || echo "${BOOTSTRAP:-embedded}"); load $(bench_load)" >&2
: >"$WORK/results"
: >"$WORK/threads"
for state in $STATES; do
  if [ -n "$BASELINE" ]; then
    echo "idle.sh: baseline / $state ..." >&2
    measure baseline "$BASELINE" "$state"
  fi
  echo "idle.sh: candidate / $state ..." >&2
  measure candidate "$CANDIDATE" "$state"
done

echo
echo "Per thread name (busiest first):"
cat "$WORK/threads"
echo
echo "% of one core (utime+stime / wall time); engine = threads that are not librdkafka's;"
echo "kafka clients = rdk:* threads of rtsqld's consumers and producers; broker = rdk:mock and mock-proxy (embedded)"
echo "or the broker JVM's process (--local-kafka, not in total); none for --bootstrap."
printf '%-10s %-11s %8s %8s %14s %16s\n' build state total engine "kafka clients" "broker"
while read -r label state total engine clients mock; do
  printf '%-10s %-11s %8s %8s %14s %16s\n' "$label" "$state" "$total" "$engine" "$clients" "$mock"
done <"$WORK/results"
echo "candidate: $CANDIDATE${BASELINE:+; baseline: $BASELINE}; load after: $(bench_load)"
