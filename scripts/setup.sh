#!/usr/bin/env bash
# Installs what rtsql needs to build and run on Debian 12, as root; with
# --tests, also what its tests need.
# Safe to run again: apt-get skips what is already installed.
set -euo pipefail

# What building and running rtsql need: scripts/demo.sh installs only these.
PACKAGES=(
  # toolchain
  g++ cmake ninja-build make pkg-config git ca-certificates
  # a compiler cache: a second build of the same sources (CI's three builds
  # after an earlier run on the machine) compiles only what changed
  ccache
  # a faster linker: CMake links with it when installed (the link of rtsqld
  # is the longest step of a build that ccache answers)
  mold
  # grammar: the ANTLR tool (Java) and its C++ runtime
  antlr4 libantlr4-runtime-dev default-jre-headless
  # libraries
  librdkafka-dev libboost-dev libboost-system-dev librocksdb-dev libfmt-dev
  doctest-dev libpq-dev libsimdjson-dev libcli11-dev libedit-dev libssl-dev
  libre2-dev
  # xxHash: the hash of state keys (executor/state/key_hash.cpp)
  libxxhash-dev
  # time zones over the system's tzdata (common/time_zone.cpp)
  libhowardhinnant-date-dev tzdata
  # zone names as Java prints them, from ICU's CLDR data (common/zone_names.cpp)
  libicu-dev
  # Avro: the avro format's encoding (libavro)
  libavro-dev
  # Protobuf: descriptor sets for the protobuf format (libprotobuf) and the
  # parser of the .proto text a schema registry stores (libprotoc)
  libprotobuf-dev libprotoc-dev
  # CPython embedded in rtsqld, for CREATE FUNCTION ... LANGUAGE PYTHON
  libpython3-dev
  # the clients the demo shows: psql, and kcat to read a topic
  postgresql-client kafkacat
  # the Debian package (cpack -G DEB: dpkg-shlibdeps, file)
  dpkg-dev file
)

# What the tests need besides (scripts/setup.sh --tests: scripts/test.sh and
# .ci/run).
TEST_PACKAGES=(
  # sanitizer builds and fuzz targets (scripts/sanitize.sh): clang with libFuzzer
  clang-14 libclang-rt-14-dev
  # independent Avro and Protobuf encoders for the format tests, and protoc
  python3-avro protobuf-compiler python3-protobuf
  # clients and tools used by the tests
  openssl python3 python3-psycopg python3-pytest python3-confluent-kafka curl
  # the savepoint durability test watches the server's fsyncs (test_savepoint_durability.py)
  strace
  # pip, for the Python packages Debian does not ship (below)
  python3-pip
  # the real Apache Kafka broker for the end-to-end tests
  openjdk-17-jre-headless maven
  # the web console's browser test (tests/e2e/test_console.py): headless Chromium
  chromium chromium-driver python3-selenium
)

TESTS=0
for arg in "$@"; do
  case "$arg" in
    --tests) TESTS=1 ;;
    *) echo "setup.sh: unknown argument $arg (only --tests)" >&2; exit 2 ;;
  esac
done
if [ "$TESTS" -eq 1 ]; then PACKAGES+=("${TEST_PACKAGES[@]}"); fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
else
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ "$TESTS" -eq 0 ]; then
  echo "setup: done (build and run; scripts/setup.sh --tests adds what the tests need)"
  exit 0
fi

# DuckDB, the batch reference of the differential end-to-end tests: Debian 12
# has no package for it, so pip installs it (a fixed version, for the same
# results on every machine) for the system's python3.
if /usr/bin/python3 -c "import duckdb" >/dev/null 2>&1; then
  echo "setup: python duckdb already installed"
else
  echo "setup: installing python duckdb"
  $SUDO /usr/bin/python3 -m pip install --quiet --break-system-packages "duckdb==2.0.1"
fi
# SQLAlchemy 2 and pandas, the tools tests/e2e/test_pg_drivers.py runs
# against rtsqld (fixed versions, as DuckDB's).
if /usr/bin/python3 -c "import sqlalchemy, pandas" >/dev/null 2>&1; then
  echo "setup: python sqlalchemy and pandas already installed"
else
  echo "setup: installing python sqlalchemy and pandas"
  $SUDO /usr/bin/python3 -m pip install --quiet --break-system-packages "sqlalchemy==2.1.9" \
    "pandas==3.1.1"
fi
# Node.js and npm, for kinesalite (scripts/kinesalite.sh), the local Kinesis
# the Kinesis source is tested against. A machine with Node.js from elsewhere
# (npm on the PATH) keeps it.
if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then
  echo "setup: node and npm already installed"
else
  echo "setup: installing nodejs npm"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends nodejs npm
fi
echo "setup: done"
