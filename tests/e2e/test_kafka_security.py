"""Kafka sources and sinks on secured listeners of a real Apache Kafka broker:
SASL_SSL with PLAIN, SASL_SSL with SCRAM-SHA-512, and mutual TLS (client
certificates). scripts/kafka.sh starts these listeners beside the PLAINTEXT one
and writes their ports, users, passwords and certificate paths to
STATE/security.env. Each flow reads a topic and writes another through a
secured listener; the records are produced and read back over PLAINTEXT, so
what arrives went through both secured clients. A wrong password fails CREATE
FLOW with 28P01 naming authentication; a bad mechanism or protocol fails CREATE
SOURCE / CREATE SINK with 22023.

Runs only when RTSQL_KAFKA_BOOTSTRAP names the broker of scripts/kafka.sh. The
SCRAM round trip needs a broker that accepts this build's librdkafka's SCRAM:
the main one when it does, else the Kafka 3.9 broker whose state dir is
RTSQL_SCRAM_KAFKA_STATE (.ci/run starts one: see test_sasl_ssl_scram_sha_512)."""

import ctypes
import os
import subprocess
import time
from pathlib import Path

import psycopg
import pytest

from conftest import RTSQLD, Kafka, service_or_skip, sql_str, unique

BOOTSTRAP = os.environ.get("RTSQL_KAFKA_BOOTSTRAP")
pytestmark = pytest.mark.skipif(not BOOTSTRAP, reason="needs RTSQL_KAFKA_BOOTSTRAP (scripts/kafka.sh start)")

ROWS = [{"id": i, "name": f"n{i}"} for i in range(20)]


def security_env(state=None):
    """What scripts/kafka.sh wrote about the secured listeners, in its state dir
    STATE: by default RTSQL_KAFKA_STATE, or the script's default for the
    broker's port."""
    named = state or os.environ.get("RTSQL_KAFKA_STATE")
    if not named:
        named = f"/tmp/rtsql-kafka-{BOOTSTRAP.rsplit(':', 1)[1]}"
    path = Path(named) / "security.env"
    if not path.exists():
        if state or os.environ.get("RTSQL_KAFKA_STATE"):
            pytest.fail(f"{path} is missing: was the broker started by scripts/kafka.sh?")
        pytest.skip(f"no {path}: the broker was not started by scripts/kafka.sh")
    env = {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition("=")
        if key:
            env[key.strip()] = value.strip()
    return env


def linked_librdkafka_version():
    """rd_kafka_version() of the librdkafka rtsqld links (0 when unknown)."""
    out = subprocess.run(["ldd", str(RTSQLD)], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "librdkafka.so" in line and "=>" in line:
            lib = ctypes.CDLL(line.split("=>")[1].split()[0])
            lib.rd_kafka_version.restype = ctypes.c_int
            return lib.rd_kafka_version()
    return 0


@pytest.fixture(scope="module")
def sec():
    return security_env()


@pytest.fixture(scope="module")
def plaintext():
    return Kafka("real", BOOTSTRAP, BOOTSTRAP)


def options(settings):
    return ", ".join(f"{sql_str(k)} = {sql_str(v)}" for k, v in settings.items())


def scram(sec, password=None):
    return {"kafka.bootstrap.servers": sec["RTSQL_KAFKA_SCRAM_BOOTSTRAP"],
            "kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "SCRAM-SHA-512",
            "kafka.sasl.username": sec["RTSQL_KAFKA_SCRAM_USER"],
            "kafka.sasl.password": password or sec["RTSQL_KAFKA_SCRAM_PASSWORD"],
            "kafka.ssl.ca.location": sec["RTSQL_KAFKA_CA"]}


def plain(sec, password=None):
    return {"kafka.bootstrap.servers": sec["RTSQL_KAFKA_PLAIN_BOOTSTRAP"],
            "kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "PLAIN",
            "kafka.sasl.username": sec["RTSQL_KAFKA_PLAIN_USER"],
            "kafka.sasl.password": password or sec["RTSQL_KAFKA_PLAIN_PASSWORD"],
            "kafka.ssl.ca.location": sec["RTSQL_KAFKA_CA"]}


def mtls(sec):
    return {"kafka.bootstrap.servers": sec["RTSQL_KAFKA_MTLS_BOOTSTRAP"],
            "kafka.security.protocol": "SSL",
            "kafka.ssl.certificate.location": sec["RTSQL_KAFKA_CLIENT_CERT"],
            "kafka.ssl.key.location": sec["RTSQL_KAFKA_CLIENT_KEY"],
            "kafka.ssl.ca.location": sec["RTSQL_KAFKA_CA"]}


def declare(server, plaintext, settings, prefix, sink_settings=None):
    """A source on a fresh topic holding ROWS and a sink on another topic, both
    through the listener of SETTINGS (the sink's: SINK_SETTINGS when given);
    returns (source, sink, out topic)."""
    topic, out = unique(f"{prefix}_in"), unique(f"{prefix}_out")
    src, snk = unique(f"{prefix}_src"), unique(f"{prefix}_snk")
    plaintext.create_topic(topic)
    plaintext.create_topic(out)
    plaintext.produce(topic, ROWS)
    server.query(f"CREATE SOURCE {src} (id BIGINT, name STRING) WITH (connector = 'kafka', "
                 f"{options(settings)}, subscribe = '{topic}', startingOffsets = 'earliest')")
    server.query(f"CREATE SINK {snk} WITH (connector = 'kafka', {options(sink_settings or settings)}, "
                 f"topic = '{out}', format = 'json')")
    return src, snk, out


def flow_round_trip(server, plaintext, settings, prefix):
    src, snk, out = declare(server, plaintext, settings, prefix)
    flow = unique(f"{prefix}_flow")
    server.query(f"CREATE FLOW {flow} INTO {snk} TRIGGER REALTIME AS "
                 f"SELECT id, upper(name) AS name FROM {src}")
    got = plaintext.consume_json(out, n=len(ROWS), timeout=30, grace=0.5)
    server.query(f"DROP FLOW {flow}")
    assert sorted(got, key=lambda r: r["id"]) == [
        {"id": r["id"], "name": r["name"].upper()} for r in ROWS]


def create_error(server, sql):
    with pytest.raises(psycopg.Error) as e:
        server.query(sql)
    return e.value


def test_sasl_ssl_plain(server, plaintext, sec):
    flow_round_trip(server, plaintext, plain(sec), "sec_plain")


def test_mutual_tls(server, plaintext, sec):
    flow_round_trip(server, plaintext, mtls(sec), "sec_mtls")


def broker_major(sec):
    """The major version of the broker that wrote SEC (4 when it does not say:
    scripts/kafka.sh's default)."""
    return int(sec.get("RTSQL_KAFKA_VERSION", "4").split(".")[0])


def scram_refused(sec):
    """Whether the broker of SEC refuses every SCRAM login of the linked
    librdkafka: before 2.6.1 it repeats the client nonce in its final SCRAM
    message, which Apache Kafka 4 refuses whatever the password (3.9 lets it
    pass)."""
    return broker_major(sec) >= 4 and linked_librdkafka_version() < 0x020601FF


@pytest.fixture(scope="module")
def scram_broker(sec):
    """(settings of a broker that takes this librdkafka's SCRAM, its PLAINTEXT
    side): the main broker when it does, else the Kafka 3.9 broker of
    RTSQL_SCRAM_KAFKA_STATE (skipped where it is not set, failed under CI)."""
    if not scram_refused(sec):
        return sec, Kafka("real", BOOTSTRAP, BOOTSTRAP)
    # The variable names the state dir DIR of
    # `RTSQL_KAFKA_VERSION=3.9.1 RTSQL_KAFKA_STATE=DIR scripts/kafka.sh start`.
    state = service_or_skip("RTSQL_SCRAM_KAFKA_STATE", "the state dir of a Kafka 3.9 broker that "
                            "RTSQL_KAFKA_VERSION=3.9.1 scripts/kafka.sh start")
    other = security_env(state)
    assert not scram_refused(other), f"the broker of {state} is Kafka {other.get('RTSQL_KAFKA_VERSION')}"
    bootstrap = other["RTSQL_KAFKA_PLAINTEXT_BOOTSTRAP"]
    return other, Kafka("real", bootstrap, bootstrap)


def test_sasl_ssl_scram_sha_512(server, scram_broker):
    settings, broker = scram_broker
    flow_round_trip(server, broker, scram(settings), "sec_scram")


def test_scram_wrong_password_fails_create_flow(server, scram_broker):
    settings, broker = scram_broker
    src, snk, _ = declare(server, broker, scram(settings, password="not-the-password"), "sec_scram_bad")
    err = create_error(server, f"CREATE FLOW {unique('sec_scram_bad_flow')} INTO {snk} "
                               f"TRIGGER REALTIME AS SELECT id, name FROM {src}")
    assert err.sqlstate == "28P01", f"{err.sqlstate} {err}"
    assert "kafka authentication failed" in str(err).lower()


def test_scram_refused_by_kafka_4_says_why(server, plaintext, sec):
    # With a librdkafka before 2.6.1 and Apache Kafka 4, every SCRAM login is
    # refused: the flow must fail with an error that says so.
    if not scram_refused(sec):
        pytest.skip(f"Kafka {sec.get('RTSQL_KAFKA_VERSION', '4')} with librdkafka "
                    f"{linked_librdkafka_version():#x} takes SCRAM logins")
    src, snk, _ = declare(server, plaintext, scram(sec), "sec_scram")
    err = create_error(server, f"CREATE FLOW {unique('sec_scram_flow')} INTO {snk} "
                               f"TRIGGER REALTIME AS SELECT id, name FROM {src}")
    assert err.sqlstate == "28P01", f"{err.sqlstate} {err}"
    assert "authentication failed" in str(err).lower()
    assert "SCRAM" in err.diag.message_hint and "2.6.1" in err.diag.message_hint


def test_wrong_password_fails_create_flow(server, plaintext, sec):
    src, snk, _ = declare(server, plaintext, plain(sec, password="not-the-password"), "sec_bad")
    err = create_error(server, f"CREATE FLOW {unique('sec_bad_flow')} INTO {snk} "
                               f"TRIGGER REALTIME AS SELECT id, name FROM {src}")
    assert err.sqlstate == "28P01", f"{err.sqlstate} {err}"
    message = str(err).lower()
    assert "kafka authentication failed" in message
    assert sec["RTSQL_KAFKA_PLAIN_BOOTSTRAP"] in str(err)
    assert "kafka.sasl.password" in err.diag.message_hint

    # A sink connects when its flow first writes: the refusal fails the flow
    # at its next record or checkpoint, with the same message.
    src, snk, _ = declare(server, plaintext, {"kafka.bootstrap.servers": BOOTSTRAP}, "sec_badsink",
                          sink_settings=plain(sec, password="not-the-password"))
    flow = unique("sec_badsink_flow")
    server.query(f"CREATE FLOW {flow} INTO {snk} TRIGGER REALTIME CHECKPOINT INTERVAL '1 second' "
                 f"AS SELECT id, name FROM {src}")
    deadline = time.monotonic() + 30
    state = None
    while time.monotonic() < deadline:
        state = server.progress(flow)["status"]
        if state["state"] != "running":
            break
        time.sleep(0.2)
    server.query(f"DROP FLOW {flow}")
    assert state["state"] in ("recovering", "failed"), state
    assert f"Kafka authentication failed at {sec['RTSQL_KAFKA_PLAIN_BOOTSTRAP']}" in state["reason"]


def test_missing_client_certificate_fails_create_flow(server, plaintext, sec):
    settings = {k: v for k, v in mtls(sec).items()
                if k not in ("kafka.ssl.certificate.location", "kafka.ssl.key.location")}
    src, snk, _ = declare(server, plaintext, settings, "sec_nocert")
    err = create_error(server, f"CREATE FLOW {unique('sec_nocert_flow')} INTO {snk} "
                               f"TRIGGER REALTIME AS SELECT id, name FROM {src}")
    assert err.sqlstate == "28000", f"{err.sqlstate} {err}"
    assert "Kafka authentication failed" in str(err) and "client certificate" in str(err)
    assert "kafka.ssl.certificate.location" in err.diag.message_hint


def test_bad_mechanism_and_protocol_fail_create(server, sec):
    bad = {**plain(sec), "kafka.sasl.mechanism": "SCRAM-SHA-1024"}
    err = create_error(server, f"CREATE SOURCE {unique('sec_mech')} (id BIGINT) WITH "
                               f"(connector = 'kafka', {options(bad)}, subscribe = 't')")
    assert err.sqlstate == "22023", f"{err.sqlstate} {err}"
    assert "kafka.sasl.mechanism" in str(err) and "SCRAM-SHA-1024" in str(err)
    assert "SCRAM-SHA-512" in err.diag.message_hint
    bad = {**mtls(sec), "kafka.security.protocol": "TLS"}
    err = create_error(server, f"CREATE SINK {unique('sec_proto')} WITH "
                               f"(connector = 'kafka', {options(bad)}, topic = 't')")
    assert err.sqlstate == "22023", f"{err.sqlstate} {err}"
    assert "kafka.security.protocol" in str(err)
    assert "sasl_ssl" in err.diag.message_hint
