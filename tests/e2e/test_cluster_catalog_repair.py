"""A damaged record in a cluster's catalog topic (a value that is not a
catalog entry, written by something other than rtsqld): a running node logs
and skips it; a node that starts replays the topic and stops with an error
naming the topic, partition, offset and key, unless a later record or
tombstone of that key settles it; `rtsqld --cluster-repair` writes a tombstone
for the damaged key, after which the node starts without that object, and
with the rest of the catalog (a function with its owner).

The broker outlives every node: the embedded broker of an rtsqld outside the
cluster, and Apache Kafka too when RTSQL_KAFKA_BOOTSTRAP is set.
"""

import re
import subprocess

import pytest

from cluster import run_again_on_40001, start_node, wait_for  # noqa: F401 (a fixture)
from conftest import RTSQLD, unique

GARBAGE = b"rtsql-catalog 1 999 deadbeef\nnot what rtsqld writes"


def sources(node):
    return sorted(r[0] for r in node.query("SHOW SOURCES"))


def repair(cluster, broker, tmp_path):
    """rtsqld --cluster-repair: (exit code, output)."""
    p = subprocess.run(
        [str(RTSQLD), "--data-dir", str(tmp_path / "repair"), "--cluster", cluster,
         "--kafka", broker.bootstrap, "--cluster-repair"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout + p.stderr


def test_a_damaged_catalog_record_is_named_and_repaired(broker, start_node, tmp_path):
    cluster = unique("repair")
    topic = f"_rtsql-{cluster}-catalog"
    a = start_node(cluster, broker, "a")
    b = start_node(cluster, broker, "b")
    for name in ("keep", "hurt", "mended"):
        run_again_on_40001(a, f"CREATE SOURCE {name} (x BIGINT) WITH (connector = 'datagen')")
    assert sorted(sources(a)) == ["hurt", "keep", "mended"]
    run_again_on_40001(a, "CREATE FUNCTION twice(x BIGINT) RETURNS BIGINT AS x * 2")
    # Another node applies it as its own, with its owner.
    wait_for("b has the function and its owner", lambda: {
        r[0]: r[1] for r in b.query("DESCRIBE FUNCTION twice")}.get("owner") == "rtsql")

    # While the nodes run: the damaged record is skipped, each node keeps
    # what it has. A damaged record followed by a tombstone of its key is
    # settled by the tombstone.
    broker.produce(topic, [GARBAGE], key=b"source/hurt", partition=0)
    broker.produce(topic, [GARBAGE], key=b"source/mended", partition=0)
    broker.produce(topic, [None], key=b"source/mended", partition=0)
    for node in (a, b):
        wait_for("a running node applies the tombstone", lambda: "mended" not in sources(node))
        assert sorted(sources(node)) == ["hurt", "keep"]
        assert "skipped the record" in node.log_tail(200)
    assert a.stop() == 0, a.log_tail()

    # A start replays the topic: source/hurt's last record is damaged.
    with pytest.raises(AssertionError) as e:
        start_node(cluster, broker, "a")
    log = str(e.value)
    assert "rtsqld exited with 1" in log, log
    found = re.search(r"record at offset (\d+) of topic (\S+) partition 0 \(key \"source/hurt\"\)",
                      log)
    assert found and found.group(2) == topic, log
    assert "--cluster-repair" in log, log
    assert "mended" not in log and "damaged keys in all" not in log, log

    code, out = repair(cluster, broker, tmp_path)
    assert code == 0, out
    assert 'wrote a tombstone for key "source/hurt"' in out, out
    assert f"at offset {found.group(1)}" in out, out
    assert "cluster catalog repaired (tombstones: 1)" in out, out
    # (Node b ran all along: the repair fenced its writer.) Nothing is left
    # to repair.
    code, out = repair(cluster, broker, tmp_path)
    assert code == 0 and "nothing to repair" in out, out

    a = start_node(cluster, broker, "a")
    assert sources(a) == ["keep"]
    # A node that ran through it all applied the tombstone as a drop.
    wait_for("b drops the repaired source", lambda: sources(b) == ["keep"])
    # What was intact came back from the topic, with its owner.
    owner = {r[0]: r[1] for r in a.query("DESCRIBE FUNCTION twice")}["owner"]
    assert owner == "rtsql"
    # The catalog is writable again: the object is made anew.
    run_again_on_40001(a, "CREATE SOURCE hurt (x BIGINT) WITH (connector = 'datagen')")
    assert sorted(sources(a)) == ["hurt", "keep"]


def test_cluster_repair_needs_a_cluster(tmp_path):
    p = subprocess.run([str(RTSQLD), "--data-dir", str(tmp_path / "d"), "--cluster-repair"],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "--cluster and --kafka" in p.stdout + p.stderr
