"""INSERT INTO a Kafka source: records written to its topic in its format,
with the key, headers, partition and timestamp the statement gives, read
back with a Kafka client; INSERT ... SELECT over a static table and without
FROM; and the statements refused with a clear error (a live SELECT, a
datagen source, a column the broker sets, the wrong number of values)."""

import json

from conftest import sql_str, unique


def test_insert_values_json(server, kafka):
    topic = unique("ins_json")
    kafka.create_topic(topic)
    server.run_script(f"""
        CREATE SOURCE ins_json_{kafka.name} (user_id STRING, amount DOUBLE, ts TIMESTAMP)
            WITH ({kafka.options()}, subscribe = {sql_str(topic)}, format = 'json');
        CREATE TABLE ins_users_{kafka.name} (name STRING, amt DOUBLE);
        INSERT INTO ins_users_{kafka.name} VALUES ('dave', 7), ('erin', 0.5);
    """)
    assert server.query(f"""INSERT INTO ins_json_{kafka.name} VALUES
        ('alice', 12.5, TIMESTAMP '2024-05-01 12:00:00'), ('bob', 3, NULL)""") == []
    server.query(f"""INSERT INTO ins_json_{kafka.name} (user_id, amount, _key, _headers, _partition, _timestamp)
        VALUES ('carol', 1, CAST('carol' AS BINARY),
                array(named_struct('key', 'h', 'value', CAST('v' AS BINARY))), 0,
                TIMESTAMP '2024-05-01 12:00:05')""")
    server.query(f"INSERT INTO ins_json_{kafka.name} SELECT name, amt * 2, NULL FROM ins_users_{kafka.name} WHERE amt > 1")
    server.query(f"INSERT INTO ins_json_{kafka.name} SELECT 'x', 1.0, NULL")
    # Records without a partition may go to any: read them in user order.
    msgs = sorted(kafka.consume(topic, n=5, timeout=30),
                  key=lambda m: json.loads(m.value())["user_id"])
    assert [json.loads(m.value()) for m in msgs] == [
        {"user_id": "alice", "amount": 12.5, "ts": "2024-05-01T12:00:00.000Z"},
        {"user_id": "bob", "amount": 3.0, "ts": None},
        {"user_id": "carol", "amount": 1.0, "ts": None},
        {"user_id": "dave", "amount": 14.0, "ts": None},
        {"user_id": "x", "amount": 1.0, "ts": None},
    ]
    carol = msgs[2]
    assert carol.key() == b"carol"
    assert carol.headers() == [("h", b"v")]
    assert carol.timestamp()[1] == 1714564805000
    assert carol.partition() == 0
    assert msgs[0].key() is None


def test_insert_raw_and_command_tag(server, kafka):
    topic = unique("ins_raw")
    kafka.create_topic(topic)
    server.query(f"""CREATE SOURCE ins_raw_{kafka.name} WITH ({kafka.options()}, subscribe = {sql_str(topic)},
        format = 'raw')""")
    p = server.psql(f"INSERT INTO ins_raw_{kafka.name} VALUES (CAST('k1' AS BINARY), CAST('v1' AS BINARY)), "
                    "(NULL, CAST('v2' AS BINARY))")
    msgs = kafka.consume(topic, n=2, timeout=30)
    assert sorted((m.value(), m.key()) for m in msgs) == [(b"v1", b"k1"), (b"v2", None)]
    p = server.rtsql("-c", f"INSERT INTO ins_raw_{kafka.name} (value) VALUES (CAST('v3' AS BINARY))")
    assert "INSERT 0 1" in p.stdout


def test_insert_refusals(server, kafka):
    topic = unique("ins_bad")
    kafka.create_topic(topic)
    server.run_script(f"""
        CREATE SOURCE ins_bad_{kafka.name} (n BIGINT)
            WITH ({kafka.options()}, subscribe = {sql_str(topic)}, format = 'json');
        CREATE SOURCE ins_gen_{kafka.name} (n BIGINT) WITH (connector = 'datagen', 'rows-per-second' = '1');
        CREATE SOURCE ins_avro_{kafka.name} WITH ({kafka.options()}, subscribe = {sql_str(topic)},
            format = 'avro', 'avro.schema' = '{{"type": "record", "name": "r",
                "fields": [{{"name": "n", "type": "long"}}]}}');
    """)
    cases = [
        (f"INSERT INTO ins_bad_{kafka.name} SELECT n FROM ins_bad_{kafka.name}", "0A000", "never ends"),
        (f"INSERT INTO ins_gen_{kafka.name} VALUES (1)", "0A000", "makes its own records"),
        (f"INSERT INTO ins_bad_{kafka.name} (_offset) VALUES (1)", "0A000", "broker's to set"),
        (f"INSERT INTO ins_bad_{kafka.name} VALUES (1, 2)", "42601", "2 values but 1 target"),
        (f"INSERT INTO ins_bad_{kafka.name} (nope) VALUES (1)", "42703", "does not exist"),
        (f"INSERT INTO ins_bad_{kafka.name} SELECT count(*) FROM ins_bad_{kafka.name} GROUP BY n", "0A000", "aggregate"),
        (f"INSERT INTO ins_avro_{kafka.name} VALUES (1)", "0A000", "not avro"),
    ]
    for sql, state, text in cases:
        p = server.rtsql("-c", sql, check=False)
        assert p.returncode != 0, sql
        out = p.stdout + p.stderr
        assert state in out and text in out, f"{sql}: {out}"
    # Nothing of the refused statements reached the topic.
    assert kafka.consume(topic, timeout=2) == []


def test_insert_csv(server, kafka):
    topic = unique("ins_csv")
    kafka.create_topic(topic)
    server.query(f"""CREATE SOURCE ins_csv_{kafka.name} (a STRING, b INT) WITH ({kafka.options()},
        subscribe = {sql_str(topic)}, format = 'csv')""")
    server.query(f"INSERT INTO ins_csv_{kafka.name} VALUES ('x,y', 3), ('z', NULL)")
    msgs = kafka.consume(topic, n=2, timeout=30)
    assert sorted(m.value() for m in msgs) == [b'"x,y",3', b"z,"]
