#!/usr/bin/env bash
# The view lookup benchmark: point lookups by key on a materialized view over
# pgwire, as prepared statements, while a flow updates the view. A view
# `SELECT k, count(*) AS n, sum(v) AS s FROM updates GROUP BY k` is loaded
# with --keys keys, then for --seconds an updater sends --update-rate records
# a second (random keys) while --clients connections look keys up at --rate
# in all (rtsql_view_lookup_client, libpq prepared statements, built from
# view_lookup_client.cpp). Prints the lookups' P50/P99/P999 and
# lookups/s, rtsqld's peak RSS, and the same lookups against PostgreSQL 15's
# table of the same rows (with the same update rate as UPDATEs) when its
# binaries are installed (/usr/lib/postgresql/15/bin). See
# docs/benchmarks.md, "View lookups".
#
#   bench/scenarios/view_lookup.sh [--keys N] [--rate N] [--update-rate N]
#                                  [--clients N] [--seconds S] [--results FILE]
#                                  [--kafka BOOTSTRAP] [--restart] [--io-threads N]
#
# Defaults: 100,000 keys, 10,000 lookups/s, 10,000 updates/s, 4 clients,
# 20 s. Everything runs on rtsqld's embedded broker and loopback, or on the
# Apache Kafka at BOOTSTRAP (--kafka: the embedded broker keeps a bounded log
# per partition, too small for millions of keys loaded at once). --restart
# (with --kafka): once loaded, rtsqld's RSS is read (then again 15 s later),
# rtsqld is stopped and started again on its data directory, and once the
# view answers again (restored from its checkpoint) its RSS is read the same
# way; the lookups then run on the restarted rtsqld. Printed as
# rss_loaded_kb, rss_restored_kb (each the later reading) and the restore's
# seconds. --io-threads N is rtsqld's (docs/operations.md).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

usage() { sed -n '2,27p' "$0"; exit "${1:-0}"; }

KEYS=100000
RATE=10000
UPDATE_RATE=10000
CLIENTS=4
SECONDS_RUN=20
RESULTS_OUT=""
KAFKA=""
RESTART=""
RTSQLD_FLAGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keys) KEYS="$2"; shift 2 ;;
    --rate) RATE="$2"; shift 2 ;;
    --update-rate) UPDATE_RATE="$2"; shift 2 ;;
    --clients) CLIENTS="$2"; shift 2 ;;
    --seconds) SECONDS_RUN="$2"; shift 2 ;;
    --results) RESULTS_OUT="$2"; shift 2 ;;
    --kafka) KAFKA="$2"; shift 2 ;;
    --restart) RESTART=1; shift ;;
    --io-threads) RTSQLD_FLAGS=(--io-threads "$2"); shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "view_lookup.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

CLIENT="${BIN}/bench/rtsql_view_lookup_client"
[ -z "$RESTART" ] || [ -n "$KAFKA" ] || {
  echo "view_lookup.sh: --restart needs --kafka (the embedded broker's topics go with rtsqld)" >&2
  exit 2
}
bench_require view_lookup.sh "$RTSQLD" "$CLIENT"
bench_start_rtsqld "${RTSQLD_FLAGS[@]}"
bench_choose_broker "$KAFKA"
TOPIC="vl_updates_$(date +%s)"

# produce BOOTSTRAP TOPIC FIRST COUNT RATE : COUNT records {"k","v"} at RATE a
# second (0: as fast as the broker takes them); keys k<FIRST..FIRST+COUNT-1>
# in order when RATE is 0, else random keys below $KEYS. Ends on SIGTERM.
PRODUCER="$WORK/produce.py"
cat >"$PRODUCER" <<'PYEOF'
import random, signal, sys, time
from confluent_kafka import Producer
bootstrap, topic, first, count, rate, keys = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
rng = random.Random(7)
start = time.monotonic()
for i in range(count):
    if stop:
        break
    k = first + i if rate == 0 else rng.randrange(keys)
    while True:
        try:
            p.produce(topic, ('{"k":"k%d","v":%d}' % (k, i % 100)).encode())
            break
        except BufferError:
            p.poll(0.05)
    if rate and i % 100 == 0:
        ahead = start + i / rate - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
    p.poll(0)
left = p.flush(10 if stop else 60)
sys.exit(1 if left and not stop else 0)
PYEOF
produce() { "$PY" "$PRODUCER" "$@" "$KEYS"; }

# Apache Kafka creates no topic on demand for a source: one partition, as
# the embedded broker makes it.
if [ -n "$KAFKA" ]; then
  "$PY" - "$KAFKA" "$TOPIC" <<'PYEOF'
import sys
from confluent_kafka.admin import AdminClient, NewTopic
admin = AdminClient({"bootstrap.servers": sys.argv[1]})
for f in admin.create_topics([NewTopic(sys.argv[2], 1, 1)], request_timeout=30).values():
    f.result(timeout=60)
PYEOF
fi
psql_q "CREATE SOURCE updates (k STRING, v BIGINT) WITH (connector = 'kafka',
  'kafka.bootstrap.servers' = '$SQL_BOOTSTRAP', subscribe = '$TOPIC', startingOffsets = 'earliest',
  format = 'json')" >/dev/null
# The view reads while the keys are produced: the embedded broker (librdkafka's
# in-memory mock) keeps a bounded log per partition, and drops the oldest
# records of a topic loaded whole before it is read (about 30 % of 1,000,000).
psql_q "CREATE MATERIALIZED VIEW totals AS SELECT k, count(*) AS n, sum(v) AS s
  FROM updates GROUP BY k" >/dev/null
echo "loading $KEYS keys" >&2
produce "$CLIENT_BOOTSTRAP" "$TOPIC" 0 "$KEYS" 0
# Every key in the view before the run. Every 2 s a lookup of the last key
# produced, and every 30 s a count(*) (a bounded query over the whole view:
# at millions of keys, seconds of a core, which the flow loading the view
# needs) that shows the progress and tells a stalled load; once the last key
# is in, a count(*) says whether every key is (on a topic of several
# partitions read side by side, the last key produced is not the last one
# in). Bounded: 600 s and a minute more per million keys, or 30 s without a
# new key (then the run goes on, saying how many it has: its lookups of the
# others are misses).
LOADED=""
LOAD_START=$(date +%s)
for i in $(seq 0 $((300 + KEYS / 1000000 * 30))); do
  LAST="$(psql_q "SELECT n FROM totals WHERE k = 'k$((KEYS - 1))'" 2>/dev/null || true)"
  if [ -n "$LAST" ] || [ $((i % 15)) = 14 ]; then
    NOW="$(psql_q "SELECT count(*) FROM totals" 2>/dev/null || true)"
    echo "loaded ${NOW:-?} keys after $(($(date +%s) - LOAD_START)) s" >&2
    [ "$NOW" = "$KEYS" ] && { LOADED="$NOW"; break; }
    if [ -z "$LAST" ] && [ -n "$NOW" ] && [ "$NOW" = "$LOADED" ]; then break; fi
    LOADED="$NOW"
  fi
  sleep 2
done
[ -n "$LOADED" ] && [ "$LOADED" != 0 ] || {
  echo "view_lookup.sh: the view took in no keys" >&2
  exit 1
}
[ "$LOADED" = "$KEYS" ] || echo "view_lookup.sh: the view holds $LOADED keys of $KEYS" >&2

# rss_kb : rtsqld's resident set now, in kB.
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$RTSQLD_PID/status"; }
RSS_LOADED="null"
RSS_RESTORED="null"
RESTORE_S="null"
if [ -n "$RESTART" ]; then
  echo "rss once loaded: $(rss_kb) kB" >&2
  sleep 15
  RSS_LOADED="$(rss_kb)"
  echo "rss 15 s later: $RSS_LOADED kB; restarting rtsqld" >&2
  bench_stop_rtsqld
  RESTART_AT=$(date +%s.%N)
  bench_launch_rtsqld "$WORK/data" "$WORK/rtsqld.log" "${RTSQLD_FLAGS[@]}"
  # Restored once the last key is looked up (bounded: 10 minutes).
  for _ in $(seq 1 1200); do
    [ -n "$(psql_q "SELECT n FROM totals WHERE k = 'k$((KEYS - 1))'" 2>/dev/null || true)" ] &&
      break
    sleep 0.5
  done
  RESTORE_S="$(awk -v a="$RESTART_AT" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
  echo "restored in $RESTORE_S s, rss $(rss_kb) kB" >&2
  sleep 15
  RSS_RESTORED="$(rss_kb)"
  echo "rss 15 s later: $RSS_RESTORED kB" >&2
fi

# cpu_ticks PID [COMM...] : the CPU time (user + system, in clock ticks) of
# PID's threads, or of those named COMM only: with COMM pgwire-io and
# rtsqld, the connections' I/O threads (server/pgwire/io_threads.h), the
# main thread and the workers that run statements, not the flow's tasks
# (named after the flow), RocksDB's or librdkafka's.
cpu_ticks() {
  local pid="$1" t line name sum=0
  shift
  for t in /proc/"$pid"/task/*; do
    { read -r line <"$t/stat"; } 2>/dev/null || continue
    # The thread's name is in parentheses; utime and stime are the 12th
    # and 13th fields after it.
    name="${line#*(}"
    name="${name%%)*}"
    [ $# = 0 ] || [[ " $* " == *" $name "* ]] || continue
    sum=$((sum + $(awk '{ print $12 + $13 }' <<<"${line##*) }")))
  done
  echo "$sum"
}
# process_ticks PID : the CPU time of the whole process PID, its threads
# that ended meanwhile included (a sum over the live threads leaves them out).
process_ticks() {
  local line
  read -r line <"/proc/$1/stat"
  awk '{ print $12 + $13 }' <<<"${line##*) }"
}
# cpu_us_per N TICKS_BEFORE TICKS_AFTER : µs of CPU per lookup.
cpu_us_per() {
  awk -v n="$1" -v a="$2" -v b="$3" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { if (n > 0) printf "%.1f", (b - a) * 1e6 / hz / n; else print "null" }'
}
lookups_of() { sed -n 's/.*"lookups": \([0-9]*\).*/\1/p' <<<"$1"; }

RSS_FILE="$WORK/rss"
bench_rss_sampler "$RSS_FILE"
"$PY" "$PRODUCER" "$CLIENT_BOOTSTRAP" "$TOPIC" 0 $((UPDATE_RATE * (SECONDS_RUN + 5))) \
  "$UPDATE_RATE" "$KEYS" &
UPDATER=$!
BENCH_CHILDREN="$BENCH_CHILDREN $UPDATER"
CPU0="$(process_ticks "$RTSQLD_PID")"
CONN0="$(cpu_ticks "$RTSQLD_PID" pgwire-io rtsqld)"
RTSQL_RESULT="$("$CLIENT" --port "$PORT" --keys "$KEYS" --rate "$RATE" \
  --clients "$CLIENTS" --seconds "$SECONDS_RUN" \
  --sql "SELECT n, s FROM totals WHERE k = \$1")"
CPU1="$(process_ticks "$RTSQLD_PID")"
CONN1="$(cpu_ticks "$RTSQLD_PID" pgwire-io rtsqld)"
# rtsqld's CPU per lookup: all of it (the flow's updates included), and its
# connections' and statement workers' threads only.
CPU_PER="$(cpu_us_per "$(lookups_of "$RTSQL_RESULT")" "$CPU0" "$CPU1")"
CONN_PER="$(cpu_us_per "$(lookups_of "$RTSQL_RESULT")" "$CONN0" "$CONN1")"
kill -TERM "$UPDATER" 2>/dev/null || true
wait "$UPDATER" 2>/dev/null || true
PEAK_KB="$(awk '{ if ($3 > m) m = $3 } END { print m + 0 }' "$RSS_FILE")"
echo "rtsqld: $RTSQL_RESULT peak_rss_kb=$PEAK_KB cpu_us_per_lookup=$CPU_PER (connections $CONN_PER)"

PG_RESULT="null"
PG_CPU_PER="null"
PG_CONN_PER="null"
PGBIN=/usr/lib/postgresql/15/bin
if [ -x "$PGBIN/initdb" ] && [ -x "$PGBIN/pg_ctl" ]; then
  PGPORT="$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  # PostgreSQL refuses to run as root: as root, its files and processes are nobody's.
  AS=()
  if [ "$(id -u)" = 0 ]; then
    AS=(runuser -u nobody --)
    mkdir -p "$WORK/pg" && chown nobody "$WORK/pg" && chmod o+x "$WORK"
  fi
  "${AS[@]}" "$PGBIN/initdb" -D "$WORK/pg/data" -U rtsql --auth=trust >"$WORK/pg_init.log" 2>&1 || {
    echo "view_lookup.sh: initdb failed:" >&2; cat "$WORK/pg_init.log" >&2; exit 1; }
  "${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/pg/pg.log" -w -t 30 \
    -o "-p $PGPORT -k $WORK/pg -c listen_addresses=127.0.0.1" start >/dev/null
  pg() { PGCONNECT_TIMEOUT=5 psql -h 127.0.0.1 -p "$PGPORT" -U rtsql -d postgres -X -A -t -q -c "$1"; }
  pg "CREATE TABLE totals (k text PRIMARY KEY, n bigint, s bigint)"
  pg "INSERT INTO totals SELECT 'k' || i, 1, i % 100 FROM generate_series(0, $KEYS - 1) i"
  pg "VACUUM ANALYZE totals"
  # The same update rate, as UPDATEs in batches of 100 a transaction.
  # It writes its backend's pid to a file once connected: the lookups start
  # after it, so that its backend is not taken for one of theirs.
  "$PY" - "$PGPORT" "$KEYS" "$UPDATE_RATE" $((SECONDS_RUN + 5)) "$WORK/pg_updater" <<'PYEOF' &
import os, random, sys, time
import psycopg
port, keys, rate, seconds = map(int, sys.argv[1:5])
conn = psycopg.connect(host="127.0.0.1", port=port, user="rtsql", dbname="postgres",
                       connect_timeout=30)
with open(sys.argv[5] + ".tmp", "w") as f:
    f.write(str(conn.info.backend_pid))
os.rename(sys.argv[5] + ".tmp", sys.argv[5])
rng = random.Random(7)
start = time.monotonic()
done = 0
while time.monotonic() - start < seconds:
    with conn.cursor() as cur:
        cur.executemany("UPDATE totals SET n = n + 1, s = s + %s WHERE k = %s",
                        [(i % 100, f"k{rng.randrange(keys)}") for i in range(100)])
    conn.commit()
    done += 100
    ahead = start + done / rate - time.monotonic()
    if ahead > 0:
        time.sleep(ahead)
PYEOF
  PG_UPDATER=$!
  for _ in $(seq 1 300); do
    [ -s "$WORK/pg_updater" ] || ! kill -0 "$PG_UPDATER" 2>/dev/null && break
    sleep 0.1
  done
  [ -s "$WORK/pg_updater" ] || echo "view_lookup.sh: PostgreSQL's updater did not connect" >&2
  # PostgreSQL's CPU per lookup: its server processes' (the updater's
  # backend and autovacuum included, as rtsqld's figure includes its flow),
  # and the lookups' backends alone (as rtsqld's connections' threads). A
  # backend exits when its client closes, before the figure after the run
  # is read: its time is then in the postmaster's fields for the children it
  # reaped (cutime and cstime, the 14th and 15th after the name), which the
  # whole count takes too. The lookups' backends alone are read while they
  # run, every 0.2 s (the last reading of each counts: what it spends after
  # it, at its client's end, is left out), since the reaped time mixes
  # them with the autovacuum workers that ended meanwhile.
  pg_postmaster() { head -1 "$WORK/pg/data/postmaster.pid"; }
  reaped_ticks() {
    local line
    read -r line <"/proc/$1/stat"
    awk '{ print $14 + $15 }' <<<"${line##*) }"
  }
  pg_ticks() {
    local p postmaster sum=0
    postmaster="$(pg_postmaster)"
    for p in "$postmaster" $(pgrep -P "$postmaster"); do
      sum=$((sum + $(cpu_ticks "$p")))
    done
    echo $((sum + $(reaped_ticks "$postmaster")))
  }
  PG_BEFORE_CHILDREN=" $(pgrep -P "$(pg_postmaster)" | tr '\n' ' ') "
  PG_SAMPLES="$WORK/pg_backend_ticks"
  (
    postmaster="$(pg_postmaster)"
    while [ -d "/proc/$postmaster" ]; do
      for p in $(pgrep -P "$postmaster"); do
        [[ "$PG_BEFORE_CHILDREN" == *" $p "* ]] && continue
        # Client backends only: "postgres: USER DATABASE HOST(PORT) ...".
        [[ "$({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null)" == "postgres: rtsql postgres "* ]] ||
          continue
        echo "$p $(cpu_ticks "$p")"
      done >>"$PG_SAMPLES"
      sleep 0.2
    done
  ) &
  PG_SAMPLER=$!
  BENCH_CHILDREN="$BENCH_CHILDREN $PG_SAMPLER"
  PG0="$(pg_ticks)"
  PG_RESULT="$("$CLIENT" --port "$PGPORT" --dbname postgres --keys "$KEYS" \
    --rate "$RATE" --clients "$CLIENTS" --seconds "$SECONDS_RUN" \
    --sql "SELECT n, s FROM totals WHERE k = \$1")"
  kill -TERM "$PG_SAMPLER" 2>/dev/null || true
  wait "$PG_SAMPLER" 2>/dev/null || true
  # The lookups' backends gone (at most 10 s): their time is all reaped.
  for _ in $(seq 1 100); do
    NEW=""
    for p in $(pgrep -P "$(pg_postmaster)"); do
      [[ "$PG_BEFORE_CHILDREN" == *" $p "* ]] || NEW="$NEW $p"
    done
    [ -z "$NEW" ] && break
    sleep 0.1
  done
  PG_CPU_PER="$(cpu_us_per "$(lookups_of "$PG_RESULT")" "$PG0" "$(pg_ticks)")"
  PG_CONN_PER="$(cpu_us_per "$(lookups_of "$PG_RESULT")" 0 \
    "$(awk '{ last[$1] = $2 } END { for (p in last) s += last[p]; print s + 0 }' \
      "$PG_SAMPLES" 2>/dev/null || echo 0)")"
  kill -TERM "$PG_UPDATER" 2>/dev/null || true
  wait "$PG_UPDATER" 2>/dev/null || true
  "${AS[@]}" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -m fast -w -t 30 stop >/dev/null
  echo "postgresql 15: $PG_RESULT cpu_us_per_lookup=$PG_CPU_PER" \
    "(backends of the lookups $PG_CONN_PER)"
else
  echo "postgresql 15: not installed ($PGBIN), no baseline" >&2
fi

LINE="{\"scenario\":\"view_lookup\",\"keys\":$KEYS,\"keys_loaded\":$LOADED,\"rate\":$RATE,\"update_rate\":$UPDATE_RATE,\"clients\":$CLIENTS,\"seconds\":$SECONDS_RUN,\"load\":\"$(bench_load)\",\"rtsqld\":$RTSQL_RESULT,\"rtsqld_peak_rss_kb\":$PEAK_KB,\"rtsqld_rss_loaded_kb\":$RSS_LOADED,\"rtsqld_rss_restored_kb\":$RSS_RESTORED,\"restore_s\":$RESTORE_S,\"rtsqld_cpu_us_per_lookup\":$CPU_PER,\"rtsqld_connections_cpu_us_per_lookup\":$CONN_PER,\"postgresql\":$PG_RESULT,\"postgresql_cpu_us_per_lookup\":$PG_CPU_PER,\"postgresql_backends_cpu_us_per_lookup\":$PG_CONN_PER}"
echo "$LINE"
[ -z "$RESULTS_OUT" ] || echo "$LINE" >>"$RESULTS_OUT"
