#!/usr/bin/env bash
# The connections benchmark: does a crowd of clients slow a flow down? One
# stateless flow (filter + projection) runs at a fixed input rate; its
# end-to-end latency is measured alone, then again while --idle client
# sessions sit open and --live live queries (`SELECT ... FROM clicks`, rows
# streaming to their clients) run beside it. Prints both P99s and their ratio;
# the target is a ratio within 1.10. See docs/benchmarks.md, "Connections".
#
#   bench/scenarios/connections.sh [--rate N] [--seconds S] [--warmup S] [--idle N]
#                        [--live N] [--live-filter SQL] [--bootstrap HOST:PORT]
#                        [--pairs N] [--results FILE]
#
# --pairs N (default 3) measures alone and with the crowd N times in turn and
# compares the medians. Defaults: 1000 records/s, 20 s runs after 3 s warm-up,
# 1000 idle sessions, 50 live queries whose filter (--live-filter, default `amount > 110.3`)
# passes about one record in a thousand, so each live query reads the whole
# topic as a flow does but the clients are not the bottleneck. The live
# queries read the flow's own source. Without --bootstrap everything uses
# rtsqld's embedded broker (librdkafka's mock cluster, one thread: it becomes
# the bottleneck first); with it, that broker (scripts/kafka.sh start).
# rtsqld listens on 127.0.0.1 only; --max-connections and --slots are raised.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

usage() { sed -n '2,21p' "$0"; exit "${1:-0}"; }

RATE=1000
SECONDS_RUN=20
WARMUP=3
IDLE=1000
LIVE=50
LIVE_FILTER="amount > 110.3"
RESULTS_OUT=""
PAIRS=3
BOOTSTRAP=""
SIZE=200
KEYS=1000
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) RATE="$2"; shift 2 ;;
    --seconds) SECONDS_RUN="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --idle) IDLE="$2"; shift 2 ;;
    --live) LIVE="$2"; shift 2 ;;
    --live-filter) LIVE_FILTER="$2"; shift 2 ;;
    --results) RESULTS_OUT="$2"; shift 2 ;;
    --pairs) PAIRS="$2"; shift 2 ;;
    --bootstrap) BOOTSTRAP="$2"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "connections.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

CLIENT="$(dirname "$0")/connections_client.py"
bench_require connections.sh "$RTSQLD" "$LATENCY"

# Each session is a socket on both ends, and the client holds them all in one
# process: both need a descriptor limit above the session count.
NEED_FDS=$(( (IDLE + LIVE) * 2 + 1000 ))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$NEED_FDS" ]; then
  ulimit -n "$NEED_FDS" 2>/dev/null || {
    echo "connections.sh: ulimit -n is $(ulimit -n); $NEED_FDS descriptors are needed" \
      "(raise it with ulimit -n or in /etc/security/limits.conf)" >&2
    exit 1
  }
fi

# rtsqld as bench_start_rtsqld starts it, with room for the sessions and for
# the live queries' tasks (each is a temporary flow with tasks of its own).
bench_start_rtsqld --max-connections $(( IDLE + LIVE + 50 )) --slots $(( 4 * LIVE + 64 ))
bench_choose_broker "$BOOTSTRAP"

RUN_ID="$(date +%s)"
IN="conn_in_${RUN_ID}"
OUT="conn_out_${RUN_ID}"
for T in "$IN" "$OUT"; do
  echo '{"ts_us":1,"seq":-1,"user_id":"warm","url":"u","amount":11.0,"merchant_id":0,"pad":""}' \
    | kcat -b "$CLIENT_BOOTSTRAP" -t "$T" -P 2>/dev/null
done
psql_q "CREATE SOURCE clicks (ts_us BIGINT, seq BIGINT, user_id STRING, url STRING,
          amount DOUBLE, merchant_id BIGINT, pad STRING)
        WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${SQL_BOOTSTRAP}',
              subscribe = '${IN}', startingOffsets = 'latest', format = 'json')" >/dev/null
psql_q "CREATE SINK out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '${SQL_BOOTSTRAP}',
          topic = '${OUT}', format = 'json')" >/dev/null
psql_q "CREATE FLOW stateless INTO out TRIGGER REALTIME AS
        SELECT ts_us, user_id, upper(url) AS url, amount * 2 AS doubled
        FROM clicks WHERE amount > 10" >/dev/null

# measure LABEL : one run of the collector; its JSON on stdout.
measure() {
  echo "$1: ${SECONDS_RUN} s at ${RATE}/s (load average $(bench_load))" >&2
  "$LATENCY" --bootstrap "$CLIENT_BOOTSTRAP" --in "$IN" --out "$OUT" --rate "$RATE" \
    --seconds "$SECONDS_RUN" --warmup "$WARMUP" --size "$SIZE" --keys "$KEYS" --json
}

# start_crowd : idle sessions and live queries, held until the client's stdin
# closes. The client reports READY once all of it is up. Sets CLIENT_PID, FDS.
start_crowd() {
  rm -f "$WORK/client_in" "$WORK/client.out"
  mkfifo "$WORK/client_in"
  "$PY" "$CLIENT" --port "$PORT" --idle "$IDLE" --live "$LIVE" \
    --live-sql "SELECT ts_us, user_id, amount FROM clicks WHERE ${LIVE_FILTER}" \
    --seconds $(( SECONDS_RUN + WARMUP + 600 )) <"$WORK/client_in" >"$WORK/client.out" \
    2>"$WORK/client.err" &
  CLIENT_PID=$!
  BENCH_CHILDREN="$BENCH_CHILDREN $CLIENT_PID"
  exec 3>"$WORK/client_in"
  for _ in $(seq 1 600); do
    grep -q '^READY' "$WORK/client.out" 2>/dev/null && break
    kill -0 "$CLIENT_PID" 2>/dev/null || { cat "$WORK/client.err" >&2; exit 1; }
    sleep 0.5
  done
  grep -q '^READY' "$WORK/client.out" || { echo "the client was not ready in 300 s" >&2; exit 1; }
  FDS="$(ls /proc/"$RTSQLD_PID"/fd | wc -l)"
  echo "$(grep '^READY' "$WORK/client.out"); rtsqld: $(ls /proc/"$RTSQLD_PID"/task | wc -l)" \
    "threads, ${FDS} descriptors, RSS $(awk '/^VmRSS/{print $2, $3}' /proc/"$RTSQLD_PID"/status)" >&2
}

# stop_crowd : closes the client's stdin, which ends its sessions; sets CLIENT_JSON.
stop_crowd() {
  exec 3>&-
  for _ in $(seq 1 120); do
    kill -0 "$CLIENT_PID" 2>/dev/null || break
    sleep 0.5
  done
  CLIENT_JSON="$(grep '^{' "$WORK/client.out" || echo '{}')"
}

# Alone and with the crowd, --pairs times in turn: a P99 over 20,000 records
# moves by a few tenths of a millisecond from run to run on a shared machine,
# so one pair says little; the medians of several say more.
: >"$WORK/pairs.tsv"
for pair in $(seq 1 "$PAIRS"); do
  ALONE_JSON="$(measure "pair ${pair}: alone")" || { echo "rtsql_latency failed (alone)" >&2; exit 1; }
  start_crowd
  CROWD_JSON="$(measure "pair ${pair}: with ${IDLE} idle sessions and ${LIVE} live queries")" \
    || { echo "rtsql_latency failed (crowd)" >&2; exit 1; }
  stop_crowd
  printf '%s\t%s\t%s\n' "$ALONE_JSON" "$CROWD_JSON" "$CLIENT_JSON" >>"$WORK/pairs.tsv"
done
LOAD_AFTER="$(bench_load)"
PROGRESS="$(psql_q "SHOW PROGRESS stateless" 2>/dev/null || echo '{}')"

"$PY" - "$RATE" "$IDLE" "$LIVE" "$LIVE_FILTER" "$WORK/pairs.tsv" \
  "$LOAD_AFTER" "$FDS" "${RESULTS_OUT:-}" "$PROGRESS" <<'EOF'
import json, statistics, sys

rate, idle, live, live_filter = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
pairs = [[json.loads(x or "{}") for x in line.rstrip("\n").split("\t")]
         for line in open(sys.argv[5]) if line.strip()]
load_after, fds, results_out = sys.argv[6], sys.argv[7], sys.argv[8]
progress = json.loads(sys.argv[9] or "{}")


def lat(d, p):
    return d.get("latencyMs", {}).get(p)


def fmt(v):
    return "n/a" if v is None else f"{v:.2f}"


print(f"connections: stateless flow at {rate}/s; crowd = {idle} idle sessions + {live} live "
      f"queries (WHERE {live_filter}); rtsqld had {fds} descriptors open with the crowd")
print("latency in ms, measured by the client: receive time - ts_us in the record")
hdr = ("run", "P50", "P90", "P99", "max", "sent", "lost", "dup")
print(" | ".join(hdr))
print(" | ".join("-" * len(h) for h in hdr))
for i, (alone, crowd, client) in enumerate(pairs, 1):
    for name, d in ((f"{i}: alone", alone), (f"{i}: with the crowd", crowd)):
        print(" | ".join([name, fmt(lat(d, "P50")), fmt(lat(d, "P90")), fmt(lat(d, "P99")),
                          fmt(lat(d, "max")), str(d.get("sent", "n/a")),
                          str(d.get("lost", "n/a")), str(d.get("duplicates", "n/a"))]))


def median(run, p):
    vals = [lat(pair[run], p) for pair in pairs if lat(pair[run], p) is not None]
    return statistics.median(vals) if vals else None


for p in ("P50", "P90", "P99"):
    a, c = median(0, p), median(1, p)
    ratio = c / a if a and c else None
    verdict = "n/a" if ratio is None else ("within 10%" if ratio <= 1.10 else "NOT within 10%")
    print(f"median {p}: alone {fmt(a)}, with the crowd {fmt(c)}, ratio "
          f"{'n/a' if ratio is None else f'{ratio:.2f}'} ({verdict})")
client = pairs[-1][2] if pairs else {}
print(f"client (last pair): {json.dumps(client)}; load average after: {load_after}")
if results_out:
    a, c = median(0, "P99"), median(1, "P99")
    with open(results_out, "a") as f:
        f.write(json.dumps({"benchmark": "connections", "rate": rate, "idle": idle, "live": live,
                            "liveFilter": live_filter, "pairs": pairs,
                            "ratioMedianP99": c / a if a and c else None,
                            "progress": progress.get("rtmMetrics", {})}) + "\n")
EOF
