"""rtsqld --local-kafka: a real single-node Apache Kafka run by rtsqld, its
logs and port under the data directory. Records written with INSERT INTO a
source, a flow copying them exactly-once, then rtsqld killed with SIGKILL and
started again on the same data directory: the broker comes back on the same
port with the same topics, the flow resumes where its last epoch ended, and
every count is exact (nothing lost, nothing read twice). Needs a JRE and the
broker's jars (scripts/kafka.sh fetch, or Maven for rtsqld to fetch them)."""

import os
import shutil
import signal
from pathlib import Path

import pytest

from conftest import STOP_TIMEOUT_S, Kafka, Server, wait_for

JARS = Path(os.environ.get("RTSQL_KAFKA_HOME")
            or Path.home() / ".cache" / "rtsql" / "kafka-4.1.1") / "jars"


def require_broker_parts():
    if shutil.which("java") is None:
        pytest.skip("--local-kafka needs a JRE (scripts/setup.sh --tests)")
    if not (JARS / ".complete").exists() and shutil.which("mvn") is None:
        pytest.skip("--local-kafka needs the Kafka jars (scripts/kafka.sh fetch) or Maven")


class LocalKafkaServer(Server):
    start_timeout_s = 240  # the JVM's start on a loaded machine

    def extra_args(self):
        return ["--local-kafka"]

    def local_bootstrap(self):
        return self.query("SHOW local_kafka")[0][0]


def values_of(kafka, topic):
    """The `n` of every record of TOPIC (committed ones only)."""
    import json
    return sorted(json.loads(m.value())["n"] for m in kafka.consume_to_end(topic, timeout=30))


def broker_pid(server):
    path = server.data_dir / "kafka" / "broker.pid"
    return int(path.read_text()) if path.exists() else None


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie of ours counts as gone.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


def test_local_kafka_survives_kill(tmp_path):
    require_broker_parts()
    server = LocalKafkaServer(tmp_path)
    server.start()
    try:
        port_file = server.data_dir / "kafka" / "port"
        bootstrap = server.local_bootstrap()
        assert bootstrap == f"127.0.0.1:{port_file.read_text().strip()}"
        kafka = Kafka("local", "local", bootstrap)
        server.run_script("""
            CREATE SOURCE ev (n BIGINT) WITH (connector = 'kafka',
                'kafka.bootstrap.servers' = 'local', subscribe = 'ev',
                startingOffsets = 'earliest', format = 'json');
            CREATE SINK copied WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'local',
                topic = 'copied', format = 'json');
            CREATE FLOW copy INTO copied TRIGGER REALTIME CHECKPOINT INTERVAL '1 second'
                WITH ('delivery' = 'exactly-once')
                AS SELECT n FROM ev;
            CREATE TABLE first_batch (n BIGINT);
        """)
        server.query("INSERT INTO first_batch VALUES " + ", ".join(f"({n})" for n in range(100)))
        server.query("INSERT INTO ev SELECT n FROM first_batch")
        wait_for(lambda: values_of(kafka, "copied") == list(range(100)), 120,
                 "the first 100 records copied")

        # SIGKILL: no stop of the flow, no stop of the broker by rtsqld.
        old_broker = broker_pid(server)
        assert old_broker is not None and alive(old_broker)
        server.kill()
        server.start()
        assert server.local_bootstrap() == bootstrap, "the broker's port changed"
        assert broker_pid(server) != old_broker
        assert not alive(old_broker), "the killed rtsqld's broker still runs"

        server.query("INSERT INTO ev VALUES " + ", ".join(f"({n})" for n in range(100, 150)))
        wait_for(lambda: values_of(kafka, "copied") == list(range(150)), 180,
                 "all 150 records copied once each")
        # The input holds exactly what was inserted: the topic kept its
        # records across the restart and nothing was written twice.
        assert values_of(kafka, "ev") == list(range(150))
        progress = server.progress("copy")
        start = progress["sources"][0]["startOffset"]["ev"]["0"]
        assert start >= 100, f"the flow rewound to offset {start}"

        pid = broker_pid(server)
        assert server.stop(timeout=STOP_TIMEOUT_S + 60) == 0, server.log_tail()
        assert not alive(pid), "rtsqld left its broker running after SIGTERM"
        assert "local Kafka broker: stopping" in server.log_tail()
    finally:
        server.kill()
        pid = broker_pid(server)
        if pid is not None and alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_local_kafka_refused_without_flag(server):
    """'local' names a broker only a server started with --local-kafka has."""
    p = server.psql("""CREATE SOURCE nolocal (n BIGINT) WITH (connector = 'kafka',
        'kafka.bootstrap.servers' = 'local', subscribe = 'x', format = 'json')""", check=False)
    assert p.returncode != 0
    assert "--local-kafka" in p.stderr


def _start_failure(tmp_path, tools, env_extra):
    """rtsqld --local-kafka with only TOOLS on PATH: its exit code and log."""
    import subprocess
    from conftest import RTSQLD, free_port
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in tools:
        found = shutil.which(tool)
        if found is None:
            pytest.skip(f"{tool} is not installed")
        (bin_dir / tool).symlink_to(found)
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "RTSQL_KAFKA_HOME")}
    env.update({"PATH": str(bin_dir), **env_extra})
    p = subprocess.run([str(RTSQLD), "--port", str(free_port()), "--data-dir",
                        str(tmp_path / "data"), "--local-kafka"],
                       capture_output=True, text=True, timeout=300, env=env,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout + p.stderr


def test_local_kafka_without_java_is_a_clear_startup_error(tmp_path):
    code, log = _start_failure(tmp_path, ["bash", "dirname"], {})
    assert code == 1, log
    assert "cannot start the local Kafka broker: no Java runtime" in log, log
    assert "--embedded-kafka" in log  # the hint names the way without Java


def test_local_kafka_failed_fetch_is_a_clear_startup_error(tmp_path):
    """No jars in the cache and no Maven to fetch them with: the fetch by
    scripts/kafka.sh fails, and the start says so with the script's words."""
    empty = tmp_path / "kafka-home"
    empty.mkdir()
    code, log = _start_failure(tmp_path, ["bash", "dirname", "java"],
                               {"RTSQL_KAFKA_HOME": str(empty)})
    assert code == 1, log
    assert "fetching the Apache Kafka 4.1.1 jars failed" in log, log
    assert "mvn not found" in log, log
