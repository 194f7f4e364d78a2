# Common parts of the benchmark scripts, sourced by bench/scenarios/scenario.sh and
# bench/scenarios/million_keys.sh: locating the binaries, starting a private rtsqld on a
# free loopback port with its embedded broker, talking to it with psql, choosing
# the broker the runs use, and stopping everything on exit. Every wait is bounded.
#
# Binaries come from ${RTSQL_BIN_DIR:-build}; the latency collector from
# ${RTSQL_LATENCY:-$RTSQL_BIN_DIR/bench/rtsql_latency}.

BIN="${RTSQL_BIN_DIR:-build}"
RTSQLD="${BIN}/server/rtsqld"
RTSQL="${BIN}/client/rtsql"
LATENCY="${RTSQL_LATENCY:-${BIN}/bench/rtsql_latency}"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

WORK=""
PORT=""
RTSQLD_PID=""
EMBEDDED=""
# Background helpers (samplers) that bench_cleanup stops, by process id.
BENCH_CHILDREN=""

# bench_require NAME BINARY... : fails when a binary is missing.
bench_require() {
  local me="$1"
  shift
  local b
  for b in "$@"; do
    [ -x "$b" ] || { echo "$me: $b is not built (RTSQL_BIN_DIR=$BIN)" >&2; exit 1; }
  done
}

# bench_stop_rtsqld : SIGTERM to $RTSQLD_PID, at most 10 s, then SIGKILL.
bench_stop_rtsqld() {
  [ -n "$RTSQLD_PID" ] || return 0
  if kill -0 "$RTSQLD_PID" 2>/dev/null; then
    kill -TERM "$RTSQLD_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$RTSQLD_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$RTSQLD_PID" 2>/dev/null || true
  fi
  wait "$RTSQLD_PID" 2>/dev/null || true
  RTSQLD_PID=""
}

bench_cleanup() {
  local p
  for p in $BENCH_CHILDREN; do
    kill -TERM "$p" 2>/dev/null || true
  done
  bench_stop_rtsqld
  if [ -n "$WORK" ]; then
    if [ -n "${BENCH_KEEP:-}" ]; then
      echo "work directory kept: $WORK" >&2
    else
      rm -rf "$WORK"
    fi
  fi
}

psql_q() {
  PGCONNECT_TIMEOUT=5 psql -h 127.0.0.1 -p "$PORT" -U rtsql -d rtsql -X -A -t -c "$1"
}

# The 1-, 5- and 15-minute load averages, for the record of every run: the
# machine is shared, and a busy machine shows in the upper percentiles.
bench_load() {
  cut -d' ' -f1-3 /proc/loadavg
}

# bench_launch_rtsqld DATA_DIR LOG [RTSQLD FLAGS...] : starts rtsqld
# --embedded-kafka on a new loopback port with its data in DATA_DIR, its output
# appended to LOG, and waits (at most 30 s) until it answers; sets PORT,
# RTSQLD_PID and EMBEDDED (the embedded broker's bootstrap address).
bench_launch_rtsqld() {
  local data="$1" log="$2"
  shift 2
  PORT="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  "$RTSQLD" --host 127.0.0.1 --port "$PORT" --data-dir "$data" --embedded-kafka "$@" \
    >>"$log" 2>&1 &
  RTSQLD_PID=$!
  for _ in $(seq 1 300); do
    if EMBEDDED="$(psql_q 'SHOW embedded_kafka' 2>/dev/null)" && [ -n "$EMBEDDED" ]; then
      return 0
    fi
    kill -0 "$RTSQLD_PID" 2>/dev/null || {
      echo "rtsqld exited:" >&2
      tail -n 30 "$log" >&2
      exit 1
    }
    sleep 0.1
  done
  echo "rtsqld did not answer in 30 s" >&2
  tail -n 30 "$log" >&2
  exit 1
}

# bench_start_rtsqld [RTSQLD FLAGS...] : makes $WORK and starts rtsqld with its
# data in $WORK/data (bench_launch_rtsqld); the script's exit stops it.
bench_start_rtsqld() {
  WORK="$(mktemp -d /tmp/rtsql-bench.XXXXXX)"
  # A signal ends the script through exit, so the EXIT trap stops rtsqld too.
  trap bench_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM HUP PIPE
  bench_launch_rtsqld "$WORK/data" "$WORK/rtsqld.log" "$@"
}

# bench_choose_broker BOOTSTRAP : with an address, the runs use that broker;
# empty, rtsqld's embedded one. Sets CLIENT_BOOTSTRAP (for the collector and
# kcat), SQL_BOOTSTRAP (for CREATE SOURCE/SINK) and BROKER (a description).
bench_choose_broker() {
  if [ -n "$1" ]; then
    CLIENT_BOOTSTRAP="$1"
    SQL_BOOTSTRAP="$1"
    BROKER="Apache Kafka at $1"
  else
    CLIENT_BOOTSTRAP="$EMBEDDED"
    SQL_BOOTSTRAP="embedded"
    BROKER="rtsqld's embedded broker at $EMBEDDED"
  fi
}

# bench_create_topics BOOTSTRAP PARTITIONS TOPIC... : creates the topics with
# PARTITIONS partitions each (a topic that exists already is kept); with one
# partition it does nothing, the broker's auto-creation makes the topic at the
# first record. Bounded: 30 s for the broker's answer.
bench_create_topics() {
  local bootstrap="$1" partitions="$2"
  shift 2
  [ "$partitions" -gt 1 ] || return 0
  "$PY" - "$bootstrap" "$partitions" "$@" <<'PYEOF'
import sys
from confluent_kafka.admin import AdminClient, NewTopic
bootstrap, partitions, topics = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
admin = AdminClient({"bootstrap.servers": bootstrap})
futures = admin.create_topics([NewTopic(t, partitions, 1) for t in topics], request_timeout=30)
for t, f in futures.items():
    try:
        f.result(timeout=30)
    except Exception as e:  # noqa: BLE001 - reported, the run stops
        if "TOPIC_ALREADY_EXISTS" not in str(e):
            sys.exit(f"bench_create_topics: {t}: {e}")
PYEOF
}

# bench_rss_sampler FILE : appends "seconds VmRSS_kB VmHWM_kB" for rtsqld to
# FILE once a second until rtsqld exits or the sampler is stopped.
bench_rss_sampler() {
  local file="$1"
  (
    start=$(date +%s.%N)
    while [ -r "/proc/$RTSQLD_PID/status" ]; do
      line=$(awk -v t0="$start" -v t1="$(date +%s.%N)" \
        '/^VmRSS:/{r=$2} /^VmHWM:/{h=$2} END{if (r != "") printf "%.1f %s %s", t1 - t0, r, h}' \
        "/proc/$RTSQLD_PID/status" 2>/dev/null)
      [ -n "$line" ] || break
      echo "$line" >>"$file"
      sleep 1
    done
  ) &
  BENCH_CHILDREN="$BENCH_CHILDREN $!"
}

# bench_cpu_ticks PID : CPU time (user + system, clock ticks) of PID and every
# process below it, from /proc/*/stat: a JVM engine's figure includes the
# Python driver that started it, rtsqld's whatever it runs. Prints 0 for a PID
# that is gone.
bench_cpu_ticks() {
  ps -e -o pid=,ppid= | awk -v root="$1" '
    { parent[$1] = $2; pids[NR] = $1 }
    END {
      for (i = 1; i <= NR; i++) {
        p = pids[i]; q = p; hops = 0
        while (q != "" && q != root && q > 1 && hops++ < 64) q = parent[q]
        if (q == root) print p
      }
    }' | while read -r p; do
    # Fields after the command name (which may hold spaces): utime is the
    # 12th after ")", stime the 13th.
    sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | awk '{print $12 + $13}'
  done | awk '{s += $1} END {print s + 0}'
}

# bench_cpu_window PID DELAY SECONDS FILE : in the background, waits DELAY
# seconds, then writes to FILE "TICKS WALL_SECONDS HZ": the CPU ticks PID's
# process tree used over the next SECONDS and the wall time that took. Started
# with the collector and given its warm-up and run time, it covers the window
# whose records the latency figures describe. Sets CPU_WINDOW_PID.
bench_cpu_window() {
  local pid="$1" delay="$2" secs="$3" file="$4"
  (
    sleep "$delay"
    c0=$(bench_cpu_ticks "$pid")
    t0=$(date +%s.%N)
    sleep "$secs"
    c1=$(bench_cpu_ticks "$pid")
    t1=$(date +%s.%N)
    echo "$((c1 - c0)) $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}') $(getconf CLK_TCK)" >"$file"
  ) &
  CPU_WINDOW_PID=$!
  BENCH_CHILDREN="$BENCH_CHILDREN $CPU_WINDOW_PID"
}

# bench_thread_ticks PID : one line per thread of PID, "NAME TICKS WAKEUPS
# PREEMPTED" (user + system clock ticks; voluntary context switches: the times
# the thread slept and was woken; involuntary ones: the times the scheduler
# took its core while it ran), the name with its digits folded to '#' so that
# the threads of one kind (a pool's workers, librdkafka's brokers) sum together.
bench_thread_ticks() {
  local t
  for t in /proc/"$1"/task/*; do
    # The name is in parentheses and may hold spaces; utime and stime are the
    # 12th and 13th fields after it. A thread that ends meanwhile (a client
    # closed) is left out: under the callers' `set -e -o pipefail` its failed
    # read would end the whole window.
    { sed -n 's/^[0-9]* (\(.*\)) /\1\t/p' "$t/stat" 2>/dev/null || true
      awk '/^voluntary_ctxt_switches/ { v = $2 } /^nonvoluntary_ctxt_switches/ { nv = $2 }
           END { print "\t" v "\t" nv }' "$t/status" 2>/dev/null || true; } |
      awk -F'\t' 'NR == 1 { split($2, f, " "); n = $1; ticks = f[12] + f[13]
                              # A flow task ("name/STAGE.TASK") keeps its stage: the source
                              # tasks apart from the tasks of the shuffle stages.
                              stage = ""; if (n ~ /\/[0-9]+\.[0-9]+$/) { stage = n; sub(/.*\//, "", stage); sub(/\..*/, "", stage); sub(/\/[^\/]*$/, "", n) }
                              gsub(/[0-9]+/, "#", n); gsub(/ /, "_", n); if (stage != "") n = n "/" stage ".#" }
                   NR == 2 { w = $2; p = $3 } END { if (n != "") print n, ticks, w + 0, p + 0 }'
  done
}

# bench_thread_cpu_window PID DELAY SECONDS FILE : bench_cpu_window's window,
# per thread kind: FILE gets "NAME TICKS WALL_SECONDS HZ WAKEUPS PREEMPTED" lines, where the
# process was in CPU time by kind of thread (bench_thread_ticks), for
# bench_thread_cpu_table. Sets THREAD_WINDOW_PID.
bench_thread_cpu_window() {
  local pid="$1" delay="$2" secs="$3" file="$4"
  (
    sleep "$delay"
    bench_thread_ticks "$pid" >"$file.0"
    t0=$(date +%s.%N)
    sleep "$secs"
    bench_thread_ticks "$pid" >"$file.1"
    t1=$(date +%s.%N)
    awk -v wall="$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')" -v hz="$(getconf CLK_TCK)" '
      FILENAME == ARGV[1] { before[$1] += $2; wbefore[$1] += $3; pbefore[$1] += $4; next }
      { after[$1] += $2; wafter[$1] += $3; pafter[$1] += $4 }
      END { for (n in after) print n, after[n] - before[n], wall, hz, wafter[n] - wbefore[n], pafter[n] - pbefore[n] }' \
      "$file.0" "$file.1" >"$file"
  ) &
  THREAD_WINDOW_PID=$!
  BENCH_CHILDREN="$BENCH_CHILDREN $THREAD_WINDOW_PID"
}

# bench_thread_cpu_table FILE RATE : the window FILE (bench_thread_cpu_window)
# as a table, busiest kind first: CPU seconds, % of a core, us of CPU per
# input record at RATE records/s, and wakeups (voluntary context switches)
# and preemptions (involuntary ones) per input record.
bench_thread_cpu_table() {
  [ -s "$1" ] || return 0
  awk -v rate="$2" '{
    cpu = $2 / $4; wall = $3
    printf "%-24s %8.3f s %6.1f %% %8.2f us/record %6.2f wakeups/record %6.2f preempted/record\n", $1, cpu, 100 * cpu / wall,
      1e6 * cpu / (rate * wall), $5 / (rate * wall), $6 / (rate * wall)
  }' "$1" | sort -k2 -g -r
  awk -v rate="$2" '{ cpu += $2 / $4; wall = $3; w += $5; p += $6 } END {
    printf "%-24s %8.3f s %6.1f %% %8.2f us/record %6.2f wakeups/record %6.2f preempted/record\n", "total", cpu, 100 * cpu / wall,
      1e6 * cpu / (rate * wall), w / (rate * wall), p / (rate * wall)
  }' "$1"
}

# bench_cpu_json FILE RATE : the window FILE (bench_cpu_window) as JSON: CPU
# seconds, wall seconds, % of one core, and microseconds of CPU per input
# record at RATE records/s. "{}" when there is no window.
bench_cpu_json() {
  [ -s "$1" ] || { echo '{}'; return 0; }
  awk -v rate="$2" '{
    cpu = $1 / $3; wall = $2
    printf "{\"cpuSeconds\":%.3f,\"wallSeconds\":%.3f,\"cpuPct\":%.1f,\"usPerRecord\":%.1f}\n",
      cpu, wall, 100 * cpu / wall, 1e6 * cpu / (rate * wall)
  }' "$1"
}
