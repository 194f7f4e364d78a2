#!/usr/bin/env bash
# Installs everything rtsql needs to build, test and run on Debian 12, as root.
# Safe to run again: apt-get skips what is already installed.
set -euo pipefail

PACKAGES=(
  # toolchain
  g++ cmake ninja-build make pkg-config git ca-certificates
  # sanitizer builds and fuzz targets (scripts/sanitize.sh): clang with libFuzzer
  clang-14 libclang-rt-14-dev
  # grammar: the ANTLR tool (Java) and its C++ runtime
  antlr4 libantlr4-runtime-dev default-jre-headless
  # libraries
  librdkafka-dev libboost-dev libboost-system-dev librocksdb-dev libfmt-dev
  doctest-dev libpq-dev libsimdjson-dev libcli11-dev libedit-dev libssl-dev
  libre2-dev
  # clients and tools used by the tests and the demo
  openssl postgresql-client kafkacat python3 python3-psycopg python3-pytest python3-confluent-kafka curl
  # the real Apache Kafka broker for the end-to-end tests
  openjdk-17-jre-headless maven
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
