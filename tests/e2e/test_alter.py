"""ALTER on running flows, end to end on a broker that outlives the server
(the embedded broker of a second rtsqld, and Apache Kafka when
RTSQL_KAFKA_BOOTSTRAP is set): a flow that failed on a record its source
cannot decode goes on after ALTER SOURCE ... SET ('on.error' = 'skip') with
its state kept (every group's count and sum exact against the input), the
change survives a restart, and ALTER FLOW's checkpoint interval is the one
the flow checkpoints at, as its progress shows. With a users file, another
user reads credentials masked in SHOW CREATE and may not alter what others'
flows use."""

from collections import defaultdict

import psycopg
import pytest

from cluster import (flows, readers, run_again_on_40001, start_node,  # noqa: F401
                     stop_all, two_nodes_reading_a_topic)
from conftest import Server, unique, wait_for
from test_owners import OwnersServer


def expected(records):
    """Each key's count and sum, as the flow's rows give them."""
    out = defaultdict(lambda: {"c": 0, "total": 0})
    for r in records:
        out[r["k"]]["c"] += 1
        out[r["k"]]["total"] += r["n"]
    return {k: {"k": k, **v} for k, v in out.items()}


def latest(broker, topic):
    """The last row of each key in TOPIC (an at-least-once sink may repeat rows)."""
    rows = {}
    for r in broker.consume_json(topic, timeout=3):
        rows[r["k"]] = r
    return rows


def flow_state(server, flow):
    rows = [r for r in server.query("SHOW FLOWS") if r[0] == flow]
    return rows[0][2] if rows else None


def test_alter_source_on_error_keeps_state_and_survives_restart(broker, tmp_path):
    topic, out = unique("al_in"), unique("al_out")
    src, snk, flow = unique("al_src"), unique("al_snk"), unique("al_f")
    broker.create_topic(topic)
    server = Server(tmp_path)
    server.start()
    try:
        server.run_script(
            f"CREATE SOURCE {src} (k STRING, n BIGINT) WITH ({broker.options()}, "
            f"subscribe = '{topic}', startingOffsets = 'earliest', format = 'json');\n"
            f"CREATE SINK {snk} WITH ({broker.options()}, topic = '{out}', format = 'json');\n"
            f"CREATE FLOW {flow} INTO {snk} CHECKPOINT INTERVAL '1 second' AS "
            f"SELECT k, count(*) AS c, sum(n) AS total FROM {src} GROUP BY k;\n")
        first = [{"k": f"k{i % 3}", "n": i} for i in range(30)]
        broker.produce(topic, first, partition=0)
        wait_for(lambda: latest(broker, out) == expected(first), 60, "the first counts")

        # A record that is not JSON fails the flow ('on.error' is 'fail').
        broker.produce(topic, [b"{not json"], partition=0)
        second = [{"k": f"k{i % 4}", "n": 100 + i} for i in range(20)]
        broker.produce(topic, second, partition=0)
        wait_for(lambda: flow_state(server, flow) == "failed", 60, "the flow to fail")

        with server.connect() as conn:
            notices = []
            conn.add_notice_handler(lambda d: notices.append(d.message_primary))
            conn.execute(f"ALTER SOURCE {src} SET ('on.error' = 'skip')")
        # It goes on at once, or (a broker slow to answer) the supervisor
        # starts it again soon after: either way a NOTICE names it.
        assert any(flow in n for n in notices), notices
        wait_for(lambda: latest(broker, out) == expected(first + second), 60,
                 "the counts past the bad record, with the state before it")
        assert server.progress(flow)["sources"][0]["numDecodeErrors"] >= 1
    finally:
        assert server.stop() == 0, server.log_tail()

    # A restart keeps the change: another bad record is skipped too.
    again = Server(tmp_path)
    again.start()
    try:
        (text,), = again.query(f"SHOW CREATE SOURCE {src}")
        assert "'on.error' = 'skip'" in text, text
        third = [{"k": f"k{i % 5}", "n": 1000 + i} for i in range(10)]
        broker.produce(topic, [b"also not json"] + third, partition=0)
        wait_for(lambda: latest(broker, out) == expected(first + second + third), 60,
                 "the counts after the restart")
        assert flow_state(again, flow) == "running"
    finally:
        assert again.stop() == 0, again.log_tail()


def test_alter_flow_checkpoint_interval(broker, tmp_path):
    topic, out = unique("al_ci_in"), unique("al_ci_out")
    src, snk, flow = unique("al_ci_src"), unique("al_ci_snk"), unique("al_ci_f")
    broker.create_topic(topic)
    server = Server(tmp_path)
    server.start()
    try:
        server.run_script(
            f"CREATE SOURCE {src} (k STRING, n BIGINT) WITH ({broker.options()}, "
            f"subscribe = '{topic}', startingOffsets = 'earliest', format = 'json');\n"
            f"CREATE SINK {snk} WITH ({broker.options()}, topic = '{out}', format = 'json');\n"
            f"CREATE FLOW {flow} INTO {snk} CHECKPOINT INTERVAL '1 hour' AS "
            f"SELECT k, count(*) AS c, sum(n) AS total FROM {src} GROUP BY k;\n")
        broker.produce(topic, [{"k": "a", "n": 1}], partition=0)
        wait_for(lambda: latest(broker, out) == expected([{"k": "a", "n": 1}]), 60, "a row")
        # Within the hour, no epoch ends with a checkpoint.
        assert server.progress(flow)["checkpoint"] is None
        server.query(f"ALTER FLOW {flow} SET ('checkpoint.interval' = '1 second')")
        # The ALTER's own stop checkpointed once; the new interval brings more.
        first = server.wait_progress(flow, lambda p: p["checkpoint"] is not None, timeout=60)
        assert first["checkpoint"] is not None, first
        later = server.wait_progress(
            flow, lambda p: p["checkpoint"] and p["checkpoint"]["epoch"] >= first["checkpoint"]["epoch"] + 3,
            timeout=60)
        assert later["checkpoint"]["epoch"] >= first["checkpoint"]["epoch"] + 3, later
        (text,), = server.query(f"SHOW CREATE FLOW {flow}")
        assert "CHECKPOINT INTERVAL '1 second'" in text, text
    finally:
        assert server.stop() == 0, server.log_tail()


def test_owners_alter_and_credentials_in_show_create(tmp_path):
    """With a users file: another user reads a sink's password masked in SHOW
    CREATE, with a NOTICE, and may not alter a source another user's flow
    reads, nor that flow (42501); the owner may."""
    server = OwnersServer(tmp_path)
    server.start()
    try:
        src, snk, secret, flow = unique("al_o_src"), unique("al_o_snk"), unique("al_o_sec"), unique("al_o_f")
        with server.connect(user="owner") as conn:
            conn.execute(f"CREATE SOURCE {src} (k STRING, n BIGINT) WITH (connector = 'kafka', "
                         f"'kafka.bootstrap.servers' = 'embedded', subscribe = '{unique('t')}', "
                         "format = 'json')")
            conn.execute(f"CREATE SINK {snk} WITH (connector = 'kafka', 'kafka.bootstrap.servers' "
                         f"= 'embedded', topic = '{unique('o')}', format = 'json')")
            conn.execute(f"CREATE SINK {secret} WITH (connector = 'kafka', "
                         f"'kafka.bootstrap.servers' = 'embedded', topic = '{unique('s')}', "
                         "format = 'json', 'kafka.sasl.password' = 'hunter2')")
            conn.execute(f"CREATE FLOW {flow} INTO {snk} AS SELECT k, n FROM {src}")
            (text,), = conn.execute(f"SHOW CREATE SINK {secret}").fetchall()
            assert "'kafka.sasl.password' = 'hunter2'" in text, text
        with server.connect(user="bob") as conn:
            notices = []
            conn.add_notice_handler(lambda d: notices.append(d.message_primary))
            (text,), = conn.execute(f"SHOW CREATE SINK {secret}").fetchall()
            assert "'kafka.sasl.password' = '********'" in text and "hunter2" not in text, text
            assert any("only a superuser" in n for n in notices), notices
        # The console's /sql runs it too (it only reads), masked alike.
        rows = server.sql_over_http("bob", f"SHOW CREATE SINK {secret}")
        assert "'kafka.sasl.password' = '********'" in rows[0][0], rows
        with server.connect(user="bob") as conn:
            for sql in (f"ALTER SOURCE {src} SET ('on.error' = 'skip')",
                        f"ALTER FLOW {flow} SET ('checkpoint.interval' = '1 minute')"):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute(sql)
        with server.connect(user="owner") as conn:
            conn.execute(f"ALTER SOURCE {src} SET ('on.error' = 'skip')")
            (text,), = conn.execute(f"SHOW CREATE SOURCE {src}").fetchall()
            assert "'on.error' = 'skip'" in text, text
    finally:
        assert server.stop() == 0, server.log_tail()


def test_alter_in_a_cluster(broker, start_node):
    """In a cluster, an ALTER on the node that does not run the flow reaches
    the one that does through the catalog topic: the source is changed in
    place there (not dropped), and the failed flow goes on with its state."""
    uid, a, b = two_nodes_reading_a_topic(start_node, broker, "alc", "out")
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    wait_for(lambda: [r for r in b.query("SHOW SINKS") if r[0] == "out"], 60, "b to see the sink")
    run_again_on_40001(b, "CREATE FLOW f INTO out CHECKPOINT INTERVAL '1 second' AS "
                          "SELECT k, count(*) AS c, sum(n) AS total FROM ev GROUP BY k")
    where = readers("f", a, b)
    runner = a if a.name in where else b
    other = b if runner is a else a
    first = [{"k": f"k{i % 3}", "n": i} for i in range(30)]
    broker.produce(topic_in, first, partition=0)
    wait_for(lambda: latest(broker, topic_out) == expected(first), 60, "the first counts")
    second = [{"k": f"k{i % 4}", "n": 100 + i} for i in range(20)]
    broker.produce(topic_in, [b"{not json"] + second, partition=0)
    wait_for(lambda: flows(runner).get("f", ("",))[0] == "failed", 60, "f to fail")
    run_again_on_40001(other, "ALTER SOURCE ev SET ('on.error' = 'skip')")
    wait_for(lambda: latest(broker, topic_out) == expected(first + second), 90,
             "the counts past the bad record, on the node that runs f")
    for node in (a, b):
        wait_for(lambda: "'on.error' = 'skip'" in node.query("SHOW CREATE SOURCE ev")[0][0], 60,
                 f"node {node.name} to have the change")
    # A sharded flow's copies run apart: ALTER of what it reads is refused.
    run_again_on_40001(a, "CREATE FLOW g INTO out WITH ('shards' = '2') AS "
                          "SELECT k, count(*) AS c FROM ev GROUP BY k")
    with pytest.raises(psycopg.errors.FeatureNotSupported) as refused:
        run_again_on_40001(a, "ALTER SOURCE ev RESET ('on.error')")
    assert 'flow "g" is sharded' in str(refused.value), str(refused.value)
    stop_all(a, b)
