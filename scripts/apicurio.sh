#!/usr/bin/env bash
# A real Apicurio Registry (one node, loopback only, in-memory storage) for the
# end-to-end tests of the schema-registry formats. Its Confluent-compatible API
# (/apis/ccompat/v7) is what rtsql's 'schema.registry.url' speaks. The registry
# is the Quarkus distribution that Apicurio publishes on Maven Central
# (io.apicurio:apicurio-registry-app, classifier all, tar.gz), fetched through
# `mvn` and cached, so the second run downloads nothing. The default version,
# 2.6.13.Final, runs on Debian 12's Java 17; the 3.x line needs Java 21.
#
#   scripts/apicurio.sh fetch    download and unpack the distribution (idempotent)
#   scripts/apicurio.sh start    fetch, start, wait until it answers; prints the URL
#   scripts/apicurio.sh stop     SIGTERM, bounded wait, then SIGKILL
#   scripts/apicurio.sh status   prints the URL and exits 0 when it answers
#   scripts/apicurio.sh url      prints the URL
#
# The registry keeps its schemas in memory (its default in-memory H2 storage):
# every start is empty.
#
# Environment:
#   RTSQL_APICURIO_VERSION  registry version (default 2.6.13.Final, Java 17; 3.x needs
#                           Java 21 or later)
#   RTSQL_APICURIO_HOME     cache of the unpacked distribution
#                           (default ~/.cache/rtsql/apicurio-<version>)
#   RTSQL_APICURIO_STATE    state dir: log, pid (default /tmp/rtsql-apicurio-<port>)
#   RTSQL_APICURIO_PORT     HTTP port (default 18081); the management interface
#                           uses PORT+1
#   RTSQL_APICURIO_JAVA     the java binary (default: the first Java found on PATH
#                           or under /usr/lib/jvm that is new enough for VERSION)
#   RTSQL_APICURIO_WAIT     seconds to wait for the registry to answer (default 180)
set -euo pipefail

VERSION="${RTSQL_APICURIO_VERSION:-2.6.13.Final}"
# 2.x runs on Java 17, 3.x on 21.
case "$VERSION" in
  2.*) JAVA_MIN=17 ;;
  *) JAVA_MIN=21 ;;
esac
HOME_DIR="${RTSQL_APICURIO_HOME:-${HOME:-/root}/.cache/rtsql/apicurio-${VERSION}}"
DIST="${HOME_DIR}/dist"
PORT="${RTSQL_APICURIO_PORT:-18081}"
MPORT="$((PORT + 1))"
HOST="127.0.0.1"
STATE="${RTSQL_APICURIO_STATE:-/tmp/rtsql-apicurio-${PORT}}"
PIDFILE="${STATE}/registry.pid"
LOGFILE="${STATE}/registry.log"
WAIT="${RTSQL_APICURIO_WAIT:-180}"
URL="http://${HOST}:${PORT}/apis/ccompat/v7"

log() { echo "apicurio.sh: $*" >&2; }

answers() {
  curl -sf --max-time 5 "${URL}/subjects" >/dev/null 2>&1
}

# running_pid, stop_service
. "$(dirname "${BASH_SOURCE[0]}")/service.sh"

# The major version of a java binary, or nothing when it does not run.
java_major() {
  "$1" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1
}

find_java() {
  if [ -n "${RTSQL_APICURIO_JAVA:-}" ]; then
    echo "$RTSQL_APICURIO_JAVA"
    return 0
  fi
  local candidate major
  for candidate in "$(command -v java || true)" /usr/lib/jvm/*/bin/java; do
    [ -n "$candidate" ] && [ -x "$candidate" ] || continue
    major="$(java_major "$candidate")"
    if [ -n "$major" ] && [ "$major" -ge "$JAVA_MIN" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

# The jar that starts the registry in an unpacked distribution, or nothing.
runner_jar() {
  local jar
  for jar in "$1/quarkus-run.jar" "$1"/apicurio-registry-app-*-runner.jar; do
    if [ -f "$jar" ]; then
      echo "$jar"
      return 0
    fi
  done
}

fetch() {
  if [ -f "${DIST}/.complete" ]; then
    return 0
  fi
  command -v mvn >/dev/null || { log "mvn not found; run scripts/setup.sh --tests"; exit 1; }
  mkdir -p "$HOME_DIR"
  local artifact="io.apicurio:apicurio-registry-app:${VERSION}:tar.gz:all"
  log "fetching ${artifact} with Maven into ${HOME_DIR}"
  rm -rf "${HOME_DIR}/download" "${DIST}.tmp"
  mvn -q -B dependency:copy -Dartifact="$artifact" -Dstyle.color=never \
    -DoutputDirectory="${HOME_DIR}/download" >&2 || { log "mvn failed"; exit 1; }
  mkdir -p "${DIST}.tmp"
  tar -xzf "${HOME_DIR}/download/apicurio-registry-app-${VERSION}-all.tar.gz" -C "${DIST}.tmp" \
    || { log "unpacking failed"; exit 1; }
  # 3.x starts from quarkus-run.jar, 2.x from its runner jar.
  [ -n "$(runner_jar "${DIST}.tmp")" ] || { log "no runnable jar in the distribution"; exit 1; }
  rm -rf "${HOME_DIR}/download" "$DIST"
  mv "${DIST}.tmp" "$DIST"
  touch "${DIST}/.complete"
}

start() {
  if running_pid >/dev/null && answers; then
    echo "$URL"
    return 0
  fi
  fetch
  local java
  java="$(find_java)" || {
    log "no Java ${JAVA_MIN} or later found; set RTSQL_APICURIO_JAVA"
    exit 1
  }
  command -v curl >/dev/null || { log "curl not found"; exit 1; }
  # A fresh registry every start: tests want no schema left from an earlier run.
  stop_quiet
  rm -rf "$STATE"
  mkdir -p "$STATE"
  # java itself is the background job, so the pid file names the process that
  # SIGTERM must reach. Both listeners are bound to loopback.
  nohup "$java" -Xms64m -Xmx512m -Djava.awt.headless=true \
    -Dquarkus.http.host="$HOST" -Dquarkus.http.port="$PORT" \
    -Dquarkus.management.host="$HOST" -Dquarkus.management.port="$MPORT" \
    -Dquarkus.log.level=WARN \
    -jar "$(runner_jar "$DIST")" >>"$LOGFILE" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  local deadline=$((SECONDS + WAIT))
  while [ $SECONDS -lt $deadline ]; do
    if ! running_pid >/dev/null; then
      log "registry exited during start"
      tail -n 40 "$LOGFILE" >&2 || true
      exit 1
    fi
    if answers; then
      echo "$URL"
      return 0
    fi
    sleep 1
  done
  log "registry did not answer within ${WAIT}s"
  tail -n 40 "$LOGFILE" >&2 || true
  stop_quiet
  exit 1
}

stop_quiet() {
  stop_service registry 30
}

case "${1:-}" in
  fetch) fetch ;;
  start) start ;;
  stop) stop_quiet ;;
  status)
    if running_pid >/dev/null && answers; then
      echo "$URL"
    else
      log "not running"
      exit 1
    fi
    ;;
  url) echo "$URL" ;;
  *)
    echo "usage: $0 {fetch|start|stop|status|url}" >&2
    exit 2
    ;;
esac
