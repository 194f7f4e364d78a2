#!/usr/bin/env bash
# Sets everything up and runs the quick start on the embedded defaults:
# installs the Debian packages (as root), builds rtsql, starts rtsqld with its
# embedded Kafka broker, deploys examples/quickstart.sql with the rtsql shell,
# then shows records arriving in the output topic and the flow's progress JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${RTSQL_BUILD_DIR:-$ROOT/build}
PORT=${RTSQL_PORT:-5433}
HTTP_PORT=${RTSQL_HTTP_PORT:-9464}
START=$(date +%s)

if [ "$(id -u)" -eq 0 ]; then
  bash scripts/setup.sh
else
  sudo bash scripts/setup.sh
fi

echo "== building rtsqld and rtsql (cmake, $(nproc) cores)"
# Optimised, with line tables only (-g1): a backtrace still names the line,
# and the build takes a quarter less time and a binary a fraction of the size
# of full debug information. A unity build (RTSQL_UNITY_BUILD: the sources
# compiled in batches) takes about 40% off the compile time again. The
# same flags as .ci/run, so the two share ccache's objects. A build directory
# configured before keeps its own flags.
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" -DRTSQL_UNITY_BUILD=ON >/dev/null
fi
cmake --build "$BUILD" -j"$(nproc)" --target rtsqld rtsql

DATA=$(mktemp -d /tmp/rtsql-demo.XXXXXX)
LOG=$DATA/rtsqld.log
echo "== starting rtsqld --embedded-kafka on 127.0.0.1:$PORT, console on 127.0.0.1:$HTTP_PORT (log: $LOG)"
"$BUILD/server/rtsqld" --host 127.0.0.1 --port "$PORT" --http-port "$HTTP_PORT" \
  --data-dir "$DATA" --embedded-kafka >"$LOG" 2>&1 &
SERVER=$!
cleanup() {
  kill -TERM "$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
}
trap cleanup EXIT

SHELL_CMD=("$BUILD/client/rtsql" -h 127.0.0.1 -p "$PORT")
for _ in $(seq 1 100); do
  "${SHELL_CMD[@]}" -c "SHOW FLOWS" >/dev/null 2>&1 && break
  kill -0 "$SERVER" 2>/dev/null || { cat "$LOG"; exit 1; }
  sleep 0.1
done

echo "== deploying examples/quickstart.sql"
"${SHELL_CMD[@]}" -f examples/quickstart.sql

BROKER=$("${SHELL_CMD[@]}" -q -c "SHOW embedded_kafka" | grep -Eo '127\.0\.0\.1:[0-9]+' | head -1)
echo "== the embedded broker is $BROKER; 5 records of topic big_clicks (kcat):"
sleep 3
timeout 20 kcat -C -b "$BROKER" -t big_clicks -o beginning -c 5 -e -q || true

echo
echo "== SHOW FLOWS"
"${SHELL_CMD[@]}" -c "SHOW FLOWS"
echo "== SHOW PROGRESS big_spenders"
"${SHELL_CMD[@]}" -c "SHOW PROGRESS big_spenders"
echo
echo "== first output $(( $(date +%s) - START )) s after the start of scripts/demo.sh"
echo
echo "The server keeps running while you explore. Where to go next:"
echo "  the console:      http://127.0.0.1:$HTTP_PORT/"
echo "  the shell:        $BUILD/client/rtsql -p $PORT        (or: psql -h 127.0.0.1 -p $PORT)"
echo "  a live query:     $BUILD/client/rtsql -p $PORT -c \"SELECT user_id, amount FROM clicks WHERE amount > 50 LIMIT 10\""
echo "  more examples:    examples/README.md (deploy one with: $BUILD/client/rtsql -p $PORT -f examples/FILE.sql)"
echo "  the tests:        scripts/test.sh (installs what they need besides: scripts/setup.sh --tests)"
echo "Press Enter to stop it."
if [ -t 0 ]; then read -r _; fi
