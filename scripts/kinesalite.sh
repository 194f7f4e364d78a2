#!/usr/bin/env bash
# kinesalite, a local implementation of the Kinesis Data Streams API (Node.js,
# from the npm registry, a fixed version), for the Kinesis source's end-to-end
# tests and benchmark. It is installed with npm into a cache outside the
# repository, so only the first start downloads anything; it listens on
# loopback only and keeps its streams in memory.
#
#   scripts/kinesalite.sh fetch     install it into the cache (idempotent)
#   scripts/kinesalite.sh start     install, start, wait until it answers; prints the endpoint
#   scripts/kinesalite.sh stop      SIGTERM, bounded wait, then SIGKILL
#   scripts/kinesalite.sh status    prints the endpoint and exits 0 when it answers
#   scripts/kinesalite.sh endpoint  prints the endpoint
#
# Environment:
#   RTSQL_KINESALITE_VERSION  kinesalite version (default 3.3.3)
#   RTSQL_KINESALITE_HOME     install cache (default ~/.cache/rtsql/kinesalite-<version>)
#   RTSQL_KINESALITE_PORT     port (default 4567)
#   RTSQL_KINESALITE_STATE    state dir: pid and log (default /tmp/rtsql-kinesalite-<port>)
#   RTSQL_KINESALITE_WAIT     seconds to wait for it to answer (default 30)
set -euo pipefail

VERSION="${RTSQL_KINESALITE_VERSION:-3.3.3}"
HOME_DIR="${RTSQL_KINESALITE_HOME:-${HOME:-/root}/.cache/rtsql/kinesalite-${VERSION}}"
PORT="${RTSQL_KINESALITE_PORT:-4567}"
HOST="127.0.0.1"
STATE="${RTSQL_KINESALITE_STATE:-/tmp/rtsql-kinesalite-${PORT}}"
PIDFILE="${STATE}/kinesalite.pid"
LOGFILE="${STATE}/kinesalite.log"
WAIT="${RTSQL_KINESALITE_WAIT:-30}"
ENDPOINT="http://${HOST}:${PORT}"

log() { echo "kinesalite.sh: $*" >&2; }

# Whether it answers a ListStreams request (it checks no signature, but wants
# an Authorization header).
answers() {
  curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST "${ENDPOINT}/" \
    -H 'Content-Type: application/x-amz-json-1.1' \
    -H 'X-Amz-Target: Kinesis_20131202.ListStreams' \
    -H 'Authorization: AWS4-HMAC-SHA256 Credential=local/20240101/us-east-1/kinesis/aws4_request, SignedHeaders=host, Signature=0' \
    -H 'X-Amz-Date: 20240101T000000Z' \
    -d '{}' 2>/dev/null | grep -q '^200$'
}

# running_pid, stop_service
. "$(dirname "${BASH_SOURCE[0]}")/service.sh"

fetch() {
  if [ -f "${HOME_DIR}/.complete" ]; then return 0; fi
  command -v npm >/dev/null 2>&1 || { log "npm is missing: run scripts/setup.sh --tests"; exit 1; }
  log "installing kinesalite ${VERSION} into ${HOME_DIR}"
  mkdir -p "$HOME_DIR"
  npm install --prefix "$HOME_DIR" --no-audit --no-fund --no-save --loglevel=error \
    "kinesalite@${VERSION}" >&2
  touch "${HOME_DIR}/.complete"
}

start() {
  fetch
  if running_pid >/dev/null && answers; then
    echo "$ENDPOINT"
    return 0
  fi
  mkdir -p "$STATE"
  # Its own command line listens on every interface: the server is made
  # here and bound to loopback. Streams are ACTIVE at once (no simulated
  # delay for create, delete or reshard), so that tests wait on what rtsql
  # does, not on the stand-in.
  nohup node -e '
    const [dir, host, port] = process.argv.slice(1);
    const server = require(dir)({createStreamMs: 0, deleteStreamMs: 0, updateStreamMs: 0,
                                 shardLimit: 100});
    server.listen(Number(port), host, () => console.log("listening on " + host + ":" + port));
  ' "${HOME_DIR}/node_modules/kinesalite" "$HOST" "$PORT" >"$LOGFILE" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  local i
  for ((i = 0; i < WAIT * 5; i++)); do
    if answers; then
      echo "$ENDPOINT"
      return 0
    fi
    if ! running_pid >/dev/null; then
      log "kinesalite exited; its log:"
      cat "$LOGFILE" >&2 || true
      exit 1
    fi
    sleep 0.2
  done
  log "kinesalite did not answer within ${WAIT}s"
  stop
  exit 1
}

stop() {
  stop_service kinesalite 10
}

case "${1:-}" in
  fetch) fetch ;;
  start) start ;;
  stop) stop ;;
  status)
    if answers; then echo "$ENDPOINT"; else exit 1; fi
    ;;
  endpoint) echo "$ENDPOINT" ;;
  *)
    echo "usage: $0 fetch|start|stop|status|endpoint" >&2
    exit 2
    ;;
esac
