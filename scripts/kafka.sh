#!/usr/bin/env bash
# A real Apache Kafka broker (KRaft, one node, loopback only) for the end-to-end
# tests and the benchmarks. The broker's jars come from Maven Central through
# `mvn`, so nothing but a JRE and Maven is needed, and they are cached so that
# the second run downloads nothing.
#
#   scripts/kafka.sh fetch       download the jars into the cache (idempotent)
#   scripts/kafka.sh start       fetch, format storage, start, wait; prints HOST:PORT
#   scripts/kafka.sh stop        SIGTERM, bounded wait, then SIGKILL
#   scripts/kafka.sh status      prints HOST:PORT and exits 0 when it answers
#   scripts/kafka.sh bootstrap   prints HOST:PORT
#   scripts/kafka.sh security    prints the secured listeners' settings (below)
#
# Besides the PLAINTEXT listener on PORT (what every test uses), the broker has
# three secured loopback listeners, for the tests of the clients' security
# options. Each start makes a throwaway CA, a broker certificate and a client
# certificate (EC keys, PEM) under STATE/tls, and writes what a client needs,
# as shell assignments, to STATE/security.env:
#   PORT+2  SASL_SSL, SCRAM-SHA-512   RTSQL_KAFKA_SCRAM_BOOTSTRAP, _SCRAM_USER, _SCRAM_PASSWORD
#   PORT+3  SASL_SSL, PLAIN           RTSQL_KAFKA_PLAIN_BOOTSTRAP, _PLAIN_USER, _PLAIN_PASSWORD
#   PORT+4  SSL, client certificate   RTSQL_KAFKA_MTLS_BOOTSTRAP, _CLIENT_CERT, _CLIENT_KEY
#   (all)   the CA certificate        RTSQL_KAFKA_CA
# and, for a test that needs a broker of its own, RTSQL_KAFKA_PLAINTEXT_BOOTSTRAP
# (PORT) and RTSQL_KAFKA_VERSION (the broker's version).
# The users and passwords are fixed and the keys throwaway: loopback tests only.
#
# Environment:
#   RTSQL_KAFKA_VERSION   broker version (default 4.1.1)
#   RTSQL_KAFKA_HOME      jar cache (default ~/.cache/rtsql/kafka-<version>)
#   RTSQL_KAFKA_STATE     state dir: config, logs, data, pid (default /tmp/rtsql-kafka-<port>)
#   RTSQL_KAFKA_PORT      client port (default 19092); the controller uses PORT+1,
#                         the secured listeners PORT+2..PORT+4
#   RTSQL_KAFKA_WAIT      seconds to wait for the broker to answer (default 60)
set -euo pipefail

VERSION="${RTSQL_KAFKA_VERSION:-4.1.1}"
LOG4J_VERSION="2.24.3"
SLF4J_VERSION="2.0.17"
HOME_DIR="${RTSQL_KAFKA_HOME:-${HOME:-/root}/.cache/rtsql/kafka-${VERSION}}"
JARS="${HOME_DIR}/jars"
PORT="${RTSQL_KAFKA_PORT:-19092}"
CPORT="$((PORT + 1))"
SCRAM_PORT="$((PORT + 2))"
PLAIN_PORT="$((PORT + 3))"
MTLS_PORT="$((PORT + 4))"
HOST="127.0.0.1"
STATE="${RTSQL_KAFKA_STATE:-/tmp/rtsql-kafka-${PORT}}"
PIDFILE="${STATE}/broker.pid"
LOGFILE="${STATE}/broker.log"
WAIT="${RTSQL_KAFKA_WAIT:-60}"
TLS="${STATE}/tls"
SECURITY_ENV="${STATE}/security.env"
SCRAM_USER="rtsql-scram"
SCRAM_PASSWORD="rtsql-scram-secret"
PLAIN_USER="rtsql-plain"
PLAIN_PASSWORD="rtsql-plain-secret"

log() { echo "kafka.sh: $*" >&2; }

# Whether the broker answers a metadata request; bounded by kcat's own timeout.
answers() {
  if command -v kcat >/dev/null 2>&1; then
    timeout 10 kcat -b "${HOST}:${PORT}" -L -m 3 >/dev/null 2>&1
  else
    timeout 10 kafkacat -b "${HOST}:${PORT}" -L -m 3 >/dev/null 2>&1
  fi
}

# running_pid, stop_service
. "$(dirname "${BASH_SOURCE[0]}")/service.sh"

fetch() {
  if [ -f "${JARS}/.complete" ]; then
    return 0
  fi
  command -v mvn >/dev/null || { log "mvn not found; run scripts/setup.sh --tests"; exit 1; }
  mkdir -p "$HOME_DIR"
  local work="${HOME_DIR}/pom"
  mkdir -p "$work"
  # The broker is the Scala core artifact; its dependencies bring the server,
  # raft, metadata and storage modules (the storage tool lives in it too).
  # Kafka 4 logs through SLF4J to Log4j 2, so the Log4j 2 binding is added to
  # make the broker log to a file; it needs SLF4J 2, newer than the 1.7 API
  # the broker's own dependencies name, so the API is pinned here.
  cat >"${work}/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>rtsql</groupId>
  <artifactId>kafka-broker-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>${VERSION}</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>${SLF4J_VERSION}</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j2-impl</artifactId><version>${LOG4J_VERSION}</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>${LOG4J_VERSION}</version></dependency>
  </dependencies>
</project>
EOF
  log "fetching Apache Kafka ${VERSION} jars with Maven into ${JARS}"
  rm -rf "${JARS}.tmp"
  (cd "$work" && mvn -q -B dependency:copy-dependencies -DincludeScope=runtime \
      -Dstyle.color=never -DoutputDirectory="${JARS}.tmp" >&2) || { log "mvn failed"; exit 1; }
  # Two SLF4J bindings would make SLF4J pick one at random; keep Log4j 2's.
  rm -f "${JARS}.tmp"/slf4j-reload4j-*.jar "${JARS}.tmp"/reload4j-*.jar
  rm -rf "$JARS"
  mv "${JARS}.tmp" "$JARS"
  touch "${JARS}/.complete"
  log "fetched $(ls "$JARS" | wc -l) jars"
}

write_config() {
  mkdir -p "${STATE}/data"
  cat >"${STATE}/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@${HOST}:${CPORT}
listeners=PLAINTEXT://${HOST}:${PORT},CONTROLLER://${HOST}:${CPORT},SCRAM://${HOST}:${SCRAM_PORT},SASLPLAIN://${HOST}:${PLAIN_PORT},MTLS://${HOST}:${MTLS_PORT}
advertised.listeners=PLAINTEXT://${HOST}:${PORT},SCRAM://${HOST}:${SCRAM_PORT},SASLPLAIN://${HOST}:${PLAIN_PORT},MTLS://${HOST}:${MTLS_PORT}
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SCRAM:SASL_SSL,SASLPLAIN:SASL_SSL,MTLS:SSL
ssl.keystore.type=PEM
ssl.keystore.location=${TLS}/broker.pem
ssl.truststore.type=PEM
ssl.truststore.location=${TLS}/ca.pem
listener.name.mtls.ssl.client.auth=required
listener.name.scram.sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.scram.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.saslplain.sasl.enabled.mechanisms=PLAIN
listener.name.saslplain.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_${PLAIN_USER}="${PLAIN_PASSWORD}";
inter.broker.listener.name=PLAINTEXT
log.dirs=${STATE}/data
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
auto.create.topics.enable=true
group.initial.rebalance.delay.ms=0
log.flush.interval.messages=9223372036854775807
EOF
  cat >"${STATE}/log4j2.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = ${LOGFILE}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.apache.name = org.apache.kafka
logger.apache.level = INFO
EOF
}

# A CA, the broker's certificate (for 127.0.0.1 and localhost) and a client
# certificate, all EC P-256 (fast to make), in PEM: Kafka reads PEM key stores
# (key and chain in one file) and librdkafka reads PEM files.
make_certificates() {
  mkdir -p "$TLS"
  local curve=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  openssl req -x509 "${curve[@]}" -keyout "${TLS}/ca.key" -out "${TLS}/ca.pem" -days 30 \
    -subj "/CN=rtsql test CA" 2>/dev/null
  printf 'subjectAltName=IP:%s,DNS:%s,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' \
    "$HOST" "$HOST" >"${TLS}/broker.ext"
  printf 'extendedKeyUsage=clientAuth\n' >"${TLS}/client.ext"
  local who
  for who in broker client; do
    openssl req -new "${curve[@]}" -keyout "${TLS}/${who}.key" -out "${TLS}/${who}.csr" \
      -subj "/CN=rtsql-${who}" 2>/dev/null
    openssl x509 -req -in "${TLS}/${who}.csr" -CA "${TLS}/ca.pem" -CAkey "${TLS}/ca.key" \
      -CAcreateserial -days 30 -extfile "${TLS}/${who}.ext" -out "${TLS}/${who}.crt" 2>/dev/null
  done
  cat "${TLS}/broker.key" "${TLS}/broker.crt" >"${TLS}/broker.pem"
  {
    echo "RTSQL_KAFKA_SCRAM_BOOTSTRAP=${HOST}:${SCRAM_PORT}"
    echo "RTSQL_KAFKA_SCRAM_USER=${SCRAM_USER}"
    echo "RTSQL_KAFKA_SCRAM_PASSWORD=${SCRAM_PASSWORD}"
    echo "RTSQL_KAFKA_PLAIN_BOOTSTRAP=${HOST}:${PLAIN_PORT}"
    echo "RTSQL_KAFKA_PLAIN_USER=${PLAIN_USER}"
    echo "RTSQL_KAFKA_PLAIN_PASSWORD=${PLAIN_PASSWORD}"
    echo "RTSQL_KAFKA_MTLS_BOOTSTRAP=${HOST}:${MTLS_PORT}"
    echo "RTSQL_KAFKA_CLIENT_CERT=${TLS}/client.crt"
    echo "RTSQL_KAFKA_CLIENT_KEY=${TLS}/client.key"
    echo "RTSQL_KAFKA_CA=${TLS}/ca.pem"
    echo "RTSQL_KAFKA_PLAINTEXT_BOOTSTRAP=${HOST}:${PORT}"
    echo "RTSQL_KAFKA_VERSION=${VERSION}"
  } >"$SECURITY_ENV"
}

java_cmd() {
  java -Xms128m -Xmx512m -XX:+UseG1GC -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="file:${STATE}/log4j2.properties" \
    -cp "${JARS}/*" "$@"
}

start() {
  if running_pid >/dev/null && answers; then
    echo "${HOST}:${PORT}"
    return 0
  fi
  fetch
  command -v java >/dev/null || { log "java not found; run scripts/setup.sh --tests"; exit 1; }
  # A fresh broker every start: tests want no topics left from an earlier run.
  stop_quiet
  rm -rf "$STATE"
  mkdir -p "$STATE"
  command -v openssl >/dev/null || { log "openssl not found"; exit 1; }
  make_certificates
  write_config
  # The SCRAM user is written into the metadata log as it is formatted, so it
  # exists before the broker takes its first connection.
  local scram="SCRAM-SHA-512=[name=${SCRAM_USER},password=${SCRAM_PASSWORD}]"
  local uuid
  uuid="$(java_cmd kafka.tools.StorageTool random-uuid 2>>"$LOGFILE" | tail -n 1)"
  if ! java_cmd kafka.tools.StorageTool format -t "$uuid" -c "${STATE}/server.properties" \
      --standalone --add-scram "$scram" >>"$LOGFILE" 2>&1; then
    # Older 4.x releases reject --standalone with static controller.quorum.voters.
    java_cmd kafka.tools.StorageTool format -t "$uuid" -c "${STATE}/server.properties" \
      --add-scram "$scram" >>"$LOGFILE" 2>&1 || { log "storage format failed"; tail -n 40 "$LOGFILE" >&2; exit 1; }
  fi
  # java itself is the background job (no wrapping shell), so the pid file
  # names the process that SIGTERM must reach.
  nohup java -Xms128m -Xmx512m -XX:+UseG1GC -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="file:${STATE}/log4j2.properties" \
    -cp "${JARS}/*" kafka.Kafka "${STATE}/server.properties" \
    >>"${STATE}/broker.out" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  local deadline=$((SECONDS + WAIT))
  while [ $SECONDS -lt $deadline ]; do
    if ! running_pid >/dev/null; then
      log "broker exited during start"
      tail -n 40 "$LOGFILE" "${STATE}/broker.out" >&2 || true
      exit 1
    fi
    if answers; then
      echo "${HOST}:${PORT}"
      return 0
    fi
    sleep 1
  done
  log "broker did not answer within ${WAIT}s"
  tail -n 40 "$LOGFILE" "${STATE}/broker.out" >&2 || true
  stop_quiet
  exit 1
}

stop_quiet() {
  stop_service broker 30
}

case "${1:-}" in
  fetch) fetch ;;
  start) start ;;
  stop) stop_quiet ;;
  status)
    if running_pid >/dev/null && answers; then
      echo "${HOST}:${PORT}"
    else
      log "not running"
      exit 1
    fi
    ;;
  bootstrap) echo "${HOST}:${PORT}" ;;
  security)
    [ -f "$SECURITY_ENV" ] || { log "no ${SECURITY_ENV}: start the broker first"; exit 1; }
    cat "$SECURITY_ENV"
    ;;
  *)
    echo "usage: $0 {fetch|start|stop|status|bootstrap|security}" >&2
    exit 2
    ;;
esac
