#!/usr/bin/env bash
# The latency benchmarks: one flow per scenario, its end-to-end latency at each
# rate, next to the broker's own produce-to-consume latency (the floor) measured
# in the same run with the same client settings. See docs/benchmarks.md.
#
#   bench/scenarios/scenario.sh NAME [--rate N | --rates "1000 10000"] [--seconds S]
#                     [--warmup S] [--bootstrap HOST:PORT] [--size BYTES]
#                     [--keys K] [--partitions P] [--dup-ratio R] [--results FILE]
#                     [--kinesis-endpoint URL] [--poll-interval-ms MS]   (kinesis)
#   bench/scenarios/scenario.sh NAME --find-max [--start-rate N] [--max-rate N]
#                     [--max-steps N] [--p99-ms MS] [--step-seconds S]
#                     [--step-warmup S] [--bootstrap ...] [--results FILE]
#
# NAME is one of
#   stateless       SELECT ts_us, user_id, upper(url), amount * 2 ... WHERE amount > 10
#   groupby         SELECT user_id, count(*) AS n, max(ts_us) AS ts_us ... GROUP BY user_id
#   groupby_new_key SELECT ts_us, pad, count(*) AS n ... GROUP BY ts_us, pad: every record
#                   a new group whose key is the whole record's size (--size), one state
#                   write per record (query B of the Databricks shape, bench/peers/run.sh
#                   --shape databricks)
#   broadcast_join  SELECT c.ts_us, c.user_id, m.name FROM clicks c
#                   JOIN merchants m ON c.merchant_id = m.id   (10,000-row csv table)
#   window          count, sum, max(ts_us) per user per 1-second tumbling window (updates)
#   dedup           SELECT DISTINCT ON (event_id) WITHIN WATERMARK ... (--dup-ratio 0.2
#                   of the input repeats an earlier event)
#   stream_join     clicks JOIN impressions ON event_id, impression within 5 s before
#                   the click (each rate is clicks/s; as many impressions/s again)
#   python_udf      stateless, with the url and amount labelled by a Python function:
#                   SELECT ts_us, user_id, label(url, amount) ... WHERE amount > 10
#   sql_udf         the same with label() a SQL function (inlined): python_udf's baseline
#   avro            stateless, with the input records in Avro (`rtsql_latency --format
#                   avro`, the same --size) instead of JSON; the output stays JSON
#   python_processor  a running count and sum per user in a Python processor's value
#                   state (bench/scenarios/processors/running_totals.py), one row per input row:
#                   SELECT user_id, n, total, ts_us FROM TRANSFORM((SELECT ts_us,
#                   user_id, amount FROM clicks) PARTITION BY user_id USING PROCESSOR ...)
#   sql_processor   the same in SQL, python_processor's baseline: SELECT user_id,
#                   count(*) AS n, sum(amount) AS total, max(ts_us) AS ts_us ... GROUP BY user_id
#   kinesis         stateless's query over a Kinesis source: bench/scenarios/kinesis_latency.py
#                   puts the records (the same fields and --size) into a stream of the
#                   Kinesis service at --kinesis-endpoint (default $RTSQL_KINESIS_ENDPOINT,
#                   e.g. scripts/kinesalite.sh start) and reads the sink topic; beside
#                   the broker's floor, the poll floor: a GetRecords loop at the source's
#                   --poll-interval-ms (default: the source's own, 200)
#
# --find-max searches the highest rate at which the flow's end-to-end P99 stays
# under --p99-ms (default 10) with nothing lost: doubling from --start-rate
# (default 1000) until a step fails, then bisection, at most --max-steps
# (default 9) short runs of --step-seconds (default 3) after --step-warmup
# (default 1), each on fresh topics and a fresh flow. No floor runs then.
#
# Without --bootstrap the flow and the collector use rtsqld's embedded broker;
# with it (e.g. scripts/kafka.sh start) they use that broker. --partitions P
# (default 1) creates every topic with P partitions (the records spread over
# them by user key); it needs a broker that creates topics on request. --results appends
# the raw results (JSON lines) to FILE. Everything listens on 127.0.0.1 only.
# SOURCE_OPTIONS and SINK_OPTIONS (environment) add options to the source's and
# the sink's WITH clause, e.g. SINK_OPTIONS="'kafka.linger.ms' = '2'", for
# comparing client settings; FLOW_OPTIONS gives the flow a WITH clause, e.g.
# FLOW_OPTIONS="'shuffle.partitions' = '2'". THREAD_CPU=1 (environment) also
# prints rtsqld's CPU and wakeups over each measured window by kind of thread
# (its tasks by stage: name/0.# the source tasks, name/1.# the first shuffle
# stage's; librdkafka's threads, RocksDB's), to stderr.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

usage() { sed -n '2,63p' "$0"; exit "${1:-0}"; }

SCENARIOS="stateless groupby groupby_new_key broadcast_join window dedup stream_join python_udf sql_udf avro
python_processor sql_processor kinesis"
[ $# -ge 1 ] || usage 2
SCENARIO="$1"
shift
case "$SCENARIO" in
  stateless|groupby|groupby_new_key|broadcast_join|window|dedup|stream_join|python_udf|sql_udf|avro) ;;
  python_processor|sql_processor|kinesis) ;;
  -h|--help) usage 0 ;;
  *) echo "scenario.sh: unknown scenario '$SCENARIO' ($(echo $SCENARIOS | sed 's/ /, /g'))" >&2; exit 2 ;;
esac

BOOTSTRAP=""
RATES="1000 10000"
SECONDS_RUN=10
WARMUP=3
SIZE=200
KEYS=1000
PARTITIONS=1
MERCHANTS=10000
DUP_RATIO=""
RESULTS_OUT=""
FIND_MAX=""
START_RATE=1000
MAX_RATE=200000
MAX_STEPS=9
P99_MS=10
STEP_SECONDS=3
STEP_WARMUP=1
KINESIS_ENDPOINT="${RTSQL_KINESIS_ENDPOINT:-}"
POLL_INTERVAL_MS=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bootstrap) BOOTSTRAP="$2"; shift 2 ;;
    --rates) RATES="$2"; shift 2 ;;
    --rate) RATES="$2"; shift 2 ;;
    --seconds) SECONDS_RUN="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --size) SIZE="$2"; shift 2 ;;
    --keys) KEYS="$2"; shift 2 ;;
    --partitions) PARTITIONS="$2"; shift 2 ;;
    --dup-ratio) DUP_RATIO="$2"; shift 2 ;;
    --results) RESULTS_OUT="$2"; shift 2 ;;
    --find-max) FIND_MAX=1; shift ;;
    --start-rate) START_RATE="$2"; shift 2 ;;
    --max-rate) MAX_RATE="$2"; shift 2 ;;
    --max-steps) MAX_STEPS="$2"; shift 2 ;;
    --p99-ms) P99_MS="$2"; shift 2 ;;
    --step-seconds) STEP_SECONDS="$2"; shift 2 ;;
    --step-warmup) STEP_WARMUP="$2"; shift 2 ;;
    --kinesis-endpoint) KINESIS_ENDPOINT="$2"; shift 2 ;;
    --poll-interval-ms) POLL_INTERVAL_MS="$2"; shift 2 ;;
    -h|--help) usage 0 ;;
    *) echo "scenario.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
# Only the dedup scenario repeats records unless asked otherwise; a repeat
# would give the other flows a second output row for the same event.
if [ -z "$DUP_RATIO" ]; then
  if [ "$SCENARIO" = dedup ]; then DUP_RATIO=0.2; else DUP_RATIO=0; fi
fi
if [ "$SCENARIO" = stream_join ] && [ "$DUP_RATIO" != 0 ]; then
  echo "scenario.sh: stream_join takes no --dup-ratio" >&2
  exit 2
fi
if [ "$SCENARIO" = kinesis ]; then
  [ -n "$KINESIS_ENDPOINT" ] || {
    echo "scenario.sh: kinesis needs --kinesis-endpoint or RTSQL_KINESIS_ENDPOINT" \
      "(scripts/kinesalite.sh start)" >&2
    exit 2
  }
  [ "$DUP_RATIO" = 0 ] && [ -z "$FIND_MAX" ] || {
    echo "scenario.sh: kinesis takes no --dup-ratio and no --find-max" >&2
    exit 2
  }
fi
KINESIS_DRIVER="$(dirname "$0")/kinesis_latency.py"

bench_require scenario.sh "$RTSQLD" "$RTSQL" "$LATENCY"
bench_start_rtsqld
bench_choose_broker "$BOOTSTRAP"
echo "$SCENARIO on $BROKER; ${SIZE}-byte records, ${KEYS} keys, ${PARTITIONS} partition(s)," \
  "repeat ratio ${DUP_RATIO};" \
  "load average $(bench_load)" >&2

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

# The function of the UDF scenarios, the same label in both languages: the
# Python one is called per row, the SQL one inlined into the flow's expression.
case "$SCENARIO" in
  python_udf)
    cat >"$WORK/function.sql" <<'EOF'
CREATE FUNCTION label(u STRING, a DOUBLE) RETURNS STRING LANGUAGE PYTHON AS $$
    if u is None or a is None:
        return None
    return u.upper() + ":" + ("high" if a > 50 else "low")
$$;
EOF
    ;;
  sql_udf)
    cat >"$WORK/function.sql" <<'EOF'
CREATE FUNCTION label(u STRING, a DOUBLE) RETURNS STRING AS
    upper(u) || ':' || CASE WHEN a > 50 THEN 'high' ELSE 'low' END;
EOF
    ;;
esac
[ ! -f "$WORK/function.sql" ] || "$RTSQL" -h 127.0.0.1 -p "$PORT" -q -f "$WORK/function.sql" >&2

# The processor of python_processor, from its one home (bench/micro/python_processor.cpp
# measures the same body per call).
if [ "$SCENARIO" = python_processor ]; then
  {
    echo 'CREATE PROCESSOR running_totals RETURNS (n BIGINT, total DOUBLE, ts_us BIGINT)'
    echo 'LANGUAGE PYTHON AS $$'
    cat "$(dirname "$0")/processors/running_totals.py"
    echo '$$;'
  } >"$WORK/processor.sql"
  "$RTSQL" -h 127.0.0.1 -p "$PORT" -q -f "$WORK/processor.sql" >&2
fi

# flow_query TAG : the SELECT of the scenario's flow over the source clicks_TAG
# (and impressions_TAG for stream_join).
flow_query() {
  case "$SCENARIO" in
    stateless|avro|kinesis)
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
    # Every record is a group of its own (its stamp is unique), keyed by the
    # stamp and the record's padding: a new key of the record's size per
    # record, whose one update carries that record's stamp.
    groupby_new_key)
      echo "SELECT ts_us, pad, count(*) AS n
FROM clicks_$1 GROUP BY ts_us, pad" ;;
    broadcast_join)
      echo "SELECT c.ts_us, c.user_id, m.name
FROM clicks_$1 c JOIN merchants m ON c.merchant_id = m.id" ;;
    # Updates, not EMIT ON WINDOW CLOSE: a final row per window would come a
    # window length plus the watermark delay after the window's first record,
    # which measures the window, not the flow. As for groupby, each record
    # updates its (window, user) group once, and max(ts_us) of the update is
    # the stamp of that record: what is measured is the time from a record's
    # send to the window result that includes it.
    window)
      echo "SELECT window.start AS window_start, user_id, count(*) AS n, sum(amount) AS total,
       max(ts_us) AS ts_us
FROM clicks_$1 GROUP BY window(ts, '1 second'), user_id" ;;
    # A repeat carries its original's event time, within the watermark delay,
    # so it is dropped; only the first row of an event (the original, which
    # is earlier in the same partition) comes out.
    dedup)
      echo "SELECT DISTINCT ON (event_id) WITHIN WATERMARK ts_us, event_id, user_id, amount
FROM clicks_$1" ;;
    # Each click has exactly one impression (same event_id), sent just before
    # it; the joined row carries the later of the two stamps, the moment the
    # match became possible, whichever side reaches the join stage last.
    stream_join)
      echo "SELECT greatest(c.ts_us, i.ts_us) AS ts_us, c.event_id, c.user_id, i.url AS imp_url
FROM clicks_$1 c JOIN impressions_$1 i
  ON c.event_id = i.event_id AND i.ts BETWEEN c.ts - INTERVAL '5' SECOND AND c.ts" ;;
    python_udf|sql_udf)
      echo "SELECT ts_us, user_id, label(url, amount) AS label, amount * 2 AS doubled
FROM clicks_$1 WHERE amount > 10" ;;
    # One row per input row with the user's running count and sum and the
    # record's own stamp. The processor reads the three columns it uses (the
    # aggregate reads no others either); as for groupby, the SQL flow's update
    # per record carries max(ts_us), the stamp of the record that caused it.
    python_processor)
      echo "SELECT user_id, n, total, ts_us
FROM TRANSFORM((SELECT ts_us, user_id, amount FROM clicks_$1)
               PARTITION BY user_id USING PROCESSOR running_totals)" ;;
    sql_processor)
      echo "SELECT user_id, count(*) AS n, sum(amount) AS total, max(ts_us) AS ts_us
FROM clicks_$1 GROUP BY user_id" ;;
  esac
}

# source_sql NAME TOPIC : a CREATE SOURCE over the generator's records. The
# stateful scenarios read the event time `ts` with a 1-second watermark delay;
# the others keep the columns of the first benchmarks.
source_sql() {
  local extra="" wm=""
  # The Kinesis source of the same columns, from the driver that feeds it.
  if [ "$SCENARIO" = kinesis ]; then
    "$PY" "$KINESIS_DRIVER" --endpoint "$KINESIS_ENDPOINT" --source-sql "$1" "$2" \
      ${POLL_INTERVAL_MS:+--poll-interval-ms "$POLL_INTERVAL_MS"}
    return
  fi
  # The Avro records' columns come from their schema, the generator's own.
  if [ "$SCENARIO" = avro ]; then
    cat <<EOF
CREATE SOURCE $1 WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = '${SQL_BOOTSTRAP}',
    subscribe = '$2',
    startingOffsets = 'earliest',
    format = 'avro',
    'avro.schema' = '$("$LATENCY" --avro-schema)'${SOURCE_OPTIONS:+,
    ${SOURCE_OPTIONS}}
);
EOF
    return
  fi
  case "$SCENARIO" in
    window|dedup|stream_join)
      extra="
    ts          TIMESTAMP,
    event_id    BIGINT,"
      wm=",
    WATERMARK FOR ts AS ts - INTERVAL '1' SECOND" ;;
  esac
  cat <<EOF
CREATE SOURCE $1 (
    ts_us       BIGINT,${extra}
    seq         BIGINT,
    user_id     STRING,
    url         STRING,
    amount      DOUBLE,
    merchant_id BIGINT,
    pad         STRING${wm}
) WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = '${SQL_BOOTSTRAP}',
    subscribe = '$2',
    startingOffsets = 'earliest',
    format = 'json'${SOURCE_OPTIONS:+,
    ${SOURCE_OPTIONS}}
);
EOF
}

# avro_warm_record TOPIC : the warm-up record above as an Avro datum of the
# generator's schema (its bytes may hold newlines, which kcat -P would split).
avro_warm_record() {
  "$PY" - "$CLIENT_BOOTSTRAP" "$1" <<'EOF'
import struct, sys
from confluent_kafka import Producer
def long(v):
    z, out = ((v << 1) ^ (v >> 63)) & ((1 << 64) - 1), b""
    while True:
        b, z = z & 0x7F, z >> 7
        out += bytes([b | 0x80 if z else b])
        if not z:
            return out
def string(s):
    return long(len(s)) + s.encode()
datum = (long(1) + long(1000) + long(-1) + long(-1) + string("warm") + string("u")
         + struct.pack("<d", 11.0) + long(0) + string(""))
p = Producer({"bootstrap.servers": sys.argv[1]})
p.produce(sys.argv[2], datum)
sys.exit(0 if p.flush(10) == 0 else 1)
EOF
}

RUN_ID="$(date +%s)"
RESULTS="$WORK/results.jsonl"
: >"$RESULTS"

# deploy TAG : creates the topics bench_{in,in2,out,floor}_RUN_TAG and the flow
# SCENARIO_TAG; sets IN, IN2 (empty unless stream_join), OUT, FLOOR, FLOW.
deploy() {
  local tag="$1" t
  IN="bench_in_${RUN_ID}_${tag}"
  IN2=""
  [ "$SCENARIO" != stream_join ] || IN2="bench_in2_${RUN_ID}_${tag}"
  OUT="bench_out_${RUN_ID}_${tag}"
  FLOOR="bench_floor_${RUN_ID}_${tag}"
  FLOW="${SCENARIO}_${tag}"
  # Every topic exists before the flow and the collector start (so the
  # collector can assign itself its partitions): one record each that the
  # collector ignores (its ts_us is older than any run, its event time too,
  # so it closes no window and matches no event).
  [ "$SCENARIO" = kinesis ] || bench_create_topics "$CLIENT_BOOTSTRAP" "$PARTITIONS" "$IN" $IN2 "$OUT" "$FLOOR"
  for t in "$IN" $IN2 "$OUT" "$FLOOR"; do
    # The kinesis scenario's input is a stream of the Kinesis service.
    if [ "$SCENARIO" = kinesis ] && [ "$t" = "$IN" ]; then
      "$PY" "$KINESIS_DRIVER" --endpoint "$KINESIS_ENDPOINT" --create-stream "$IN"
      continue
    fi
    if [ "$SCENARIO" = avro ] && [ "$t" != "$OUT" ]; then
      avro_warm_record "$t"
      continue
    fi
    echo '{"ts_us":1,"ts":1,"seq":-1,"event_id":-1,"user_id":"warm","url":"u","amount":11.0,"merchant_id":0,"pad":""}' \
      | kcat -b "$CLIENT_BOOTSTRAP" -t "$t" -P 2>/dev/null
  done
  {
    source_sql "clicks_${tag}" "$IN"
    [ -z "$IN2" ] || source_sql "impressions_${tag}" "$IN2"
    cat <<EOF
CREATE SINK out_${tag} WITH (
    connector = 'kafka',
    'kafka.bootstrap.servers' = '${SQL_BOOTSTRAP}',
    topic = '${OUT}',
    format = 'json'${SINK_OPTIONS:+,
    ${SINK_OPTIONS}}
);
CREATE FLOW ${FLOW} INTO out_${tag} TRIGGER REALTIME${FLOW_OPTIONS:+ WITH (${FLOW_OPTIONS})} AS
$(flow_query "$tag");
EOF
  } >"$WORK/flow_${tag}.sql"
  "$RTSQL" -h 127.0.0.1 -p "$PORT" -q -f "$WORK/flow_${tag}.sql" >&2
}

# collect RATE SECONDS WARMUP [--floor] : one collector run; prints its JSON.
collect() {
  local rate="$1" secs="$2" warm="$3"
  shift 3
  local args=(--bootstrap "$CLIENT_BOOTSTRAP" --rate "$rate" --seconds "$secs" --warmup "$warm"
    --size "$SIZE" --keys "$KEYS" --merchants "$MERCHANTS" --dup-ratio "$DUP_RATIO" --json)
  [ "$SCENARIO" != avro ] || args+=(--format avro)
  if [ "${1:-}" = --floor ]; then
    args+=(--in "$FLOOR" --floor)
  elif [ "$SCENARIO" = kinesis ]; then
    # Records put into the stream, read from the sink topic, beside a
    # GetRecords loop at the source's poll interval (pollFloorMs).
    "$PY" "$KINESIS_DRIVER" --endpoint "$KINESIS_ENDPOINT" --stream "$IN" \
      --bootstrap "$CLIENT_BOOTSTRAP" --out "$OUT" --rate "$rate" --seconds "$secs" \
      --warmup "$warm" --size "$SIZE" --keys "$KEYS" \
      ${POLL_INTERVAL_MS:+--poll-interval-ms "$POLL_INTERVAL_MS"} ||
      echo "kinesis_latency.py failed (rate $rate)" >&2
    return
  else
    args+=(--in "$IN" --out "$OUT")
    [ -z "$IN2" ] || args+=(--in2 "$IN2")
  fi
  "$LATENCY" "${args[@]}" || echo "rtsql_latency failed (rate $rate${1:+, floor})" >&2
}

# record RATE LOAD_BEFORE FLOOR_JSON FLOW_JSON [STEP [CPU_JSON]] : reads the
# flow's progress and state, stops it, and appends one result line to $RESULTS.
record() {
  local progress state load_after
  progress="$(psql_q "SHOW PROGRESS ${FLOW}" 2>/dev/null || echo '{}')"
  state="$(psql_q "SHOW FLOWS" 2>/dev/null | grep "^${FLOW}|" || true)"
  load_after="$(bench_load)"
  psql_q "STOP FLOW ${FLOW}" >/dev/null 2>&1 || true
  "$PY" -c 'import json,sys
a = sys.argv
def j(s):
    try:
        return json.loads(s or "{}")
    except ValueError:
        return {}
print(json.dumps({"scenario": a[1], "broker": a[2], "rate": int(a[3]),
                  "load": [a[4], a[5]], "flowState": a[6],
                  "floor": j(a[7]), "flow": j(a[8]), "progress": j(a[9]),
                  "step": int(a[10]) if a[10] else None, "cpu": j(a[11])}))' \
    "$SCENARIO" "$BROKER" "$1" "$2" "$load_after" "$state" "$3" "$4" "$progress" "${5:-}" \
    "${6:-}" \
    >>"$RESULTS"
}

# passes : whether the last result line meets the find-max criterion.
passes() {
  "$PY" - "$RESULTS" "$P99_MS" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
f = r["flow"]
ok = (f.get("received", 0) > 0 and f.get("lost", 1) == 0 and f.get("repeatsPassed", 0) == 0
      and f.get("latencyMs", {}).get("P99", 1e18) < float(sys.argv[2]))
sys.exit(0 if ok else 1)
EOF
}

if [ -z "$FIND_MAX" ]; then
  echo "${SECONDS_RUN} s per run after ${WARMUP} s warm-up" >&2
  for RATE in $RATES; do
    deploy "$RATE"
    LOAD_BEFORE="$(bench_load)"
    echo "rate ${RATE}: floor (load average ${LOAD_BEFORE})" >&2
    FLOOR_JSON="$(collect "$RATE" "$SECONDS_RUN" "$WARMUP" --floor)"
    echo "rate ${RATE}: flow" >&2
    # rtsqld's CPU over the collector's measured window (after its warm-up).
    bench_cpu_window "$RTSQLD_PID" "$WARMUP" "$SECONDS_RUN" "$WORK/cpu_${RATE}"
    [ -z "${THREAD_CPU:-}" ] ||
      bench_thread_cpu_window "$RTSQLD_PID" "$WARMUP" "$SECONDS_RUN" "$WORK/threads_${RATE}"
    FLOW_JSON="$(collect "$RATE" "$SECONDS_RUN" "$WARMUP")"
    wait "$CPU_WINDOW_PID" 2>/dev/null || true
    if [ -n "${THREAD_CPU:-}" ]; then
      wait "$THREAD_WINDOW_PID" 2>/dev/null || true
      echo "rate ${RATE}: rtsqld's CPU by kind of thread (load average $(bench_load))" >&2
      bench_thread_cpu_table "$WORK/threads_${RATE}" "$RATE" >&2
    fi
    record "$RATE" "$LOAD_BEFORE" "$FLOOR_JSON" "$FLOW_JSON" "" "$(bench_cpu_json "$WORK/cpu_${RATE}" "$RATE")"
  done
else
  # Doubling until the first failing step, then bisection between the highest
  # passing and the lowest failing rate (or halving when the start fails),
  # until they are within 10% or the steps run out. Rates are rounded to 100.
  echo "find-max: P99 < ${P99_MS} ms and nothing lost; ${STEP_SECONDS} s per step after" \
    "${STEP_WARMUP} s warm-up, at most ${MAX_STEPS} steps" >&2
  LO=0
  HI=0
  RATE="$START_RATE"
  for STEP in $(seq 1 "$MAX_STEPS"); do
    deploy "s${STEP}_${RATE}"
    LOAD_BEFORE="$(bench_load)"
    FLOW_JSON="$(collect "$RATE" "$STEP_SECONDS" "$STEP_WARMUP")"
    record "$RATE" "$LOAD_BEFORE" "" "$FLOW_JSON" "$STEP"
    if passes; then LO="$RATE"; VERDICT=pass; else HI="$RATE"; VERDICT=fail; fi
    echo "step ${STEP}: ${RATE} rec/s ${VERDICT} (load average ${LOAD_BEFORE})" >&2
    if [ "$HI" = 0 ]; then
      [ "$RATE" -lt "$MAX_RATE" ] || break
      RATE=$((RATE * 2 < MAX_RATE ? RATE * 2 : MAX_RATE))
    elif [ "$LO" = 0 ]; then
      RATE=$((RATE / 2 / 100 * 100))
      [ "$RATE" -ge 100 ] || break
    else
      [ $((HI - LO)) -gt $((LO / 10)) ] || break
      NEXT=$(((LO + HI) / 2 / 100 * 100))
      { [ "$NEXT" -gt "$LO" ] && [ "$NEXT" -lt "$HI" ]; } || break
      RATE="$NEXT"
    fi
  done
fi

[ -z "$RESULTS_OUT" ] || cat "$RESULTS" >>"$RESULTS_OUT"

"$PY" - "$RESULTS" "${FIND_MAX:-}" "$P99_MS" <<'EOF'
import json, sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
find_max = bool(sys.argv[2])
if rows:
    print(f"{rows[0]['scenario']}, {rows[0]['broker']}")
print("latency in ms, measured by the client: receive time - ts_us in the record;")
print("srv columns: the flow's own rtmMetrics from SHOW PROGRESS; cpu: rtsqld's CPU time")
print("(/proc/PID/stat) over the measured window, as % of a core and us per input record")


def lat(d, p):
    return d.get("latencyMs", {}).get(p)


def fmt(v):
    return "n/a" if v is None else f"{v:.2f}"


def ratio(a, b):
    return "n/a" if a is None or b is None or b <= 0 else f"{a / b:.1f}"


def srv(r):
    rtm = r["progress"].get("rtmMetrics", {})
    proc = rtm.get("processingLatencyMs", {})
    e2e = rtm.get("e2eLatencyMs", {})
    return (f"{fmt(proc.get('P50'))}/{fmt(proc.get('P99'))}",
            f"{fmt(e2e.get('P50'))}/{fmt(e2e.get('P99'))}")


def cpu(r, k):
    v = r.get("cpu", {}).get(k)
    return "n/a" if v is None else f"{v:.1f}"


def state(r):
    return r["flowState"].split("|")[2] if r["flowState"].count("|") >= 2 else "?"


def repeats(fw):
    n = fw.get("repeatsSent", 0)
    return f"{fw.get('repeatsPassed', 0)} of {n}" if n else "-"


def table(hdr, lines):
    print(" | ".join(hdr))
    print(" | ".join("-" * len(h) for h in hdr))
    for l in lines:
        print(" | ".join(l))


if not find_max:
    hdr = ("rate/s", "load before/after", "floor P50", "floor P99", "flow P50", "flow P99",
           "x P50", "x P99", "flow max", "expected", "lost", "dup", "repeats passed",
           "floor lost", "srv proc P50/P99", "srv e2e P50/P99", "cpu %", "cpu us/rec",
           "flow state")
    lines = []
    for r in rows:
        fl, fw = r["floor"], r["flow"]
        lines.append([
            str(r["rate"]), f"{r['load'][0].split()[0]}/{r['load'][1].split()[0]}",
            fmt(lat(fl, "P50")), fmt(lat(fl, "P99")),
            fmt(lat(fw, "P50")), fmt(lat(fw, "P99")),
            ratio(lat(fw, "P50"), lat(fl, "P50")), ratio(lat(fw, "P99"), lat(fl, "P99")),
            fmt(lat(fw, "max")), str(fw.get("expected", fw.get("sent", "n/a"))),
            str(fw.get("lost", "n/a")), str(fw.get("duplicates", "n/a")), repeats(fw),
            str(fl.get("lost", "n/a")), *srv(r), cpu(r, "cpuPct"), cpu(r, "usPerRecord"),
            state(r)])
    table(hdr, lines)
    polls = [r for r in rows if "pollFloorMs" in r["flow"]]
    if polls:
        print()
        print("Kinesis poll floor (a GetRecords loop at the source's poll interval, put to read):")
        for r in polls:
            pf = r["flow"]["pollFloorMs"]
            print(f"rate {r['rate']}: poll interval {r['flow'].get('pollIntervalMs')} ms, "
                  f"P50 {fmt(pf.get('P50'))}, P99 {fmt(pf.get('P99'))}; flow / poll floor "
                  f"x P50 {ratio(lat(r['flow'], 'P50'), pf.get('P50'))}, "
                  f"x P99 {ratio(lat(r['flow'], 'P99'), pf.get('P99'))}")
else:
    limit = float(sys.argv[3])
    hdr = ("step", "rate/s", "load before/after", "flow P50", "flow P99", "flow max",
           "expected", "lost", "dup", "repeats passed", "srv proc P50/P99",
           "srv e2e P50/P99", "verdict")
    lines, best, worst = [], None, None
    for r in rows:
        fw = r["flow"]
        ok = (fw.get("received", 0) > 0 and fw.get("lost", 1) == 0
              and fw.get("repeatsPassed", 0) == 0 and (lat(fw, "P99") or 1e18) < limit)
        if ok:
            best = max(best or 0, r["rate"])
        else:
            worst = min(worst or r["rate"], r["rate"])
        lines.append([
            str(r["step"]), str(r["rate"]),
            f"{r['load'][0].split()[0]}/{r['load'][1].split()[0]}",
            fmt(lat(fw, "P50")), fmt(lat(fw, "P99")), fmt(lat(fw, "max")),
            str(fw.get("expected", "n/a")), str(fw.get("lost", "n/a")),
            str(fw.get("duplicates", "n/a")), repeats(fw), *srv(r),
            "pass" if ok else "fail"])
    table(hdr, lines)
    print()
    if best is None:
        print(f"result: no tried rate kept P99 < {limit:g} ms with nothing lost")
    else:
        above = f" (lowest failing: {worst:,} rec/s)" if worst else " (no tried rate failed)"
        print(f"result: highest rate with P99 < {limit:g} ms and nothing lost: "
              f"{best:,} rec/s{above}")
print()
print("raw results (JSON lines):")
for r in rows:
    print(json.dumps({"rate": r["rate"], "step": r.get("step"), "floor": r["floor"],
                      "flow": r["flow"], "cpu": r.get("cpu", {})}))
EOF
