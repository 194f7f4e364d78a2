#!/usr/bin/env bash
# Installs the peers that bench/peers/run.sh sets beside rtsql: PySpark (Spark
# real-time mode) and PyFlink (Flink SQL), each in its own virtualenv, and the
# Kafka connector jars each needs, into one private directory (not tracked):
#
#   bench/peers/setup.sh [--dir DIR]      (default: $RTSQL_PEERS_HOME or bench/peers/.deps)
#
# Idempotent: what is already there is kept, and every step says whether it
# installed or found it. Needs PyPI and Maven Central (pip and mvn), Java 17.
#
# Versions: pyspark 4.3.0 with the Spark 4.2.0 Kafka connector (the 4.3.0 one is
# not served), whose classes and kafka-clients 3.9 load in Spark 4.3; PyFlink
# 2.2.1 with flink-sql-connector-kafka 5.0.0-2.2 (the newest connector served,
# built for Flink 2.2).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
DIR="${RTSQL_PEERS_HOME:-$HERE/.deps}"
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) DIR="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

PYSPARK_VERSION=4.3.0
SPARK_KAFKA_VERSION=4.2.0
KAFKA_CLIENTS_VERSION=3.9.1
COMMONS_POOL2_VERSION=2.12.1
FLINK_VERSION=2.2.1
FLINK_KAFKA_VERSION=5.0.0-2.2
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

mkdir -p "$DIR/jars/spark" "$DIR/jars/flink"

# venv NAME PACKAGE==VERSION : a virtualenv DIR/NAME with that package.
venv() {
  local name="$1" req="$2" v="$DIR/$1"
  local have=""
  [ -x "$v/bin/python" ] && have="$("$v/bin/python" -m pip show "${req%%==*}" 2>/dev/null || true)"
  if grep -qx "Version: ${req##*==}" <<<"$have"; then
    echo "found   $req in $v"
    return 0
  fi
  [ -x "$v/bin/python" ] || "$PY" -m venv "$v"
  "$v/bin/python" -m pip install -q --upgrade pip >/dev/null
  "$v/bin/python" -m pip install -q "$req"
  echo "installed $req in $v"
}

# jar GROUP:ARTIFACT:VERSION DEST : copies one artifact (no dependencies) from
# Maven Central into DEST through mvn.
jar() {
  local gav="$1" dest="$2" a v
  a="$(echo "$gav" | cut -d: -f2)"
  v="$(echo "$gav" | cut -d: -f3)"
  if [ -s "$dest/$a-$v.jar" ]; then
    echo "found   $dest/$a-$v.jar"
    return 0
  fi
  mvn -q -B -Dstyle.color=never dependency:copy -Dartifact="$gav" -DoutputDirectory="$dest" \
    -Dmdep.overWriteReleases=false >&2
  [ -s "$dest/$a-$v.jar" ] || { echo "setup.sh: $gav did not arrive" >&2; exit 1; }
  echo "fetched $dest/$a-$v.jar"
}

venv spark "pyspark==$PYSPARK_VERSION"
venv flink "apache-flink==$FLINK_VERSION"
jar "org.apache.spark:spark-sql-kafka-0-10_2.13:$SPARK_KAFKA_VERSION" "$DIR/jars/spark"
jar "org.apache.spark:spark-token-provider-kafka-0-10_2.13:$SPARK_KAFKA_VERSION" "$DIR/jars/spark"
jar "org.apache.kafka:kafka-clients:$KAFKA_CLIENTS_VERSION" "$DIR/jars/spark"
jar "org.apache.commons:commons-pool2:$COMMONS_POOL2_VERSION" "$DIR/jars/spark"
jar "org.apache.flink:flink-sql-connector-kafka:$FLINK_KAFKA_VERSION" "$DIR/jars/flink"
echo "peers ready in $DIR"
