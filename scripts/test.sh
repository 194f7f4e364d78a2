#!/usr/bin/env bash
# Builds rtsql if needed and runs every test: the unit tests and the end-to-end
# tests (tests/e2e, real rtsqld + psql + psycopg + a Kafka client).
#
# The end-to-end tests always use rtsqld's embedded broker; when
# RTSQL_KAFKA_BOOTSTRAP names a real broker (scripts/kafka.sh start prints one),
# they run against it as well. Extra arguments go to ctest, e.g. `-L e2e` or
# `-R quickstart`.
#
# Environment: RTSQL_BUILD_DIR (default build), RTSQL_JOBS (default 2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${RTSQL_BUILD_DIR:-${ROOT}/build}"
JOBS="${RTSQL_JOBS:-2}"

# Installs what a fresh machine lacks (a quick no-op once everything is there).
bash "${ROOT}/scripts/setup.sh" --tests

if [ ! -f "${BUILD}/build.ninja" ] && [ ! -f "${BUILD}/Makefile" ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja
fi
cmake --build "$BUILD" -j "$JOBS"

if [ -n "${RTSQL_KAFKA_BOOTSTRAP:-}" ]; then
  echo "test.sh: end-to-end tests also run on the broker at ${RTSQL_KAFKA_BOOTSTRAP}"
fi
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" "$@"
