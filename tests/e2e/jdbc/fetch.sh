#!/usr/bin/env bash
# Fetches the PostgreSQL JDBC driver from Maven Central with Maven, once, into a
# cache, and prints the jar's path. Exits non-zero (with Maven's reason on
# stderr) when the jar cannot be had, e.g. offline; the tests then skip.
#
# Environment: RTSQL_PGJDBC_VERSION (default 42.7.4), RTSQL_JDBC_CACHE (default
# ~/.cache/rtsql/jdbc).
set -euo pipefail

VERSION="${RTSQL_PGJDBC_VERSION:-42.7.4}"
CACHE="${RTSQL_JDBC_CACHE:-${HOME}/.cache/rtsql/jdbc}"
JAR="${CACHE}/postgresql-${VERSION}.jar"

if [ ! -s "${JAR}" ]; then
  command -v mvn >/dev/null || { echo "fetch.sh: mvn is not installed" >&2; exit 2; }
  mkdir -p "${CACHE}"
  mvn -q -B dependency:copy "-Dartifact=org.postgresql:postgresql:${VERSION}:jar" \
    "-DoutputDirectory=${CACHE}" >&2
fi
[ -s "${JAR}" ] || { echo "fetch.sh: ${JAR} was not fetched" >&2; exit 1; }
echo "${JAR}"
