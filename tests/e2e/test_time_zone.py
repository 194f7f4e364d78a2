"""The session time zone over the wire, and a flow's zone across a restart.

pgwire reports TimeZone as a ParameterStatus at connect (UTC) and after each
SET TIME ZONE, as PostgreSQL does, so a driver knows the session's zone; a
flow created with 'timezone' reads its TIMESTAMPs in that zone after a restart
too, whatever zone the session that created it had set.
"""

import psycopg

from conftest import Server, unique, wait_for


def test_set_time_zone_reports_the_parameter_and_show_answers_it(server):
    with server.connect() as conn:
        assert conn.info.parameter_status("TimeZone") == "UTC"
        conn.execute("SET TIME ZONE 'Europe/Berlin'")
        assert conn.info.parameter_status("TimeZone") == "Europe/Berlin"
        assert conn.execute("SHOW TIME ZONE").fetchone()[0] == "Europe/Berlin"
        # The session's TIMESTAMPs are read in it: 02:30 in Berlin on a winter day is 01:30 UTC.
        row = conn.execute("SELECT unix_timestamp('2024-01-15 02:30:00')").fetchone()
        assert row[0] == 1705282200
        conn.execute("SET spark.sql.session.timeZone = '+05:30'")
        assert conn.info.parameter_status("TimeZone") == "+05:30"
        # An unknown zone is refused and leaves the session's zone as it was.
        try:
            conn.execute("SET TIME ZONE 'Mars/Olympus_Mons'")
            raise AssertionError("an unknown zone was accepted")
        except psycopg.Error as e:
            assert e.sqlstate == "22023"
        assert conn.execute("SHOW TIME ZONE").fetchone()[0] == "+05:30"


def test_a_flow_keeps_its_zone_across_a_restart(tmp_path, broker):
    src, sink, flow = unique("tzsrc"), unique("tzsink"), unique("tzflow")
    broker.create_topic(src)  # Apache Kafka refuses a source over a missing topic
    srv = Server(tmp_path).start()
    try:
        with srv.connect() as conn:
            conn.execute("SET TIME ZONE 'America/Los_Angeles'")
            conn.execute(f"CREATE SOURCE {src} (id STRING, ts TIMESTAMP) WITH ({broker.options()}, "
                         f"subscribe = '{src}', startingOffsets = 'earliest', format = 'json')")
            conn.execute(f"CREATE SINK {sink} WITH ({broker.options()}, topic = '{sink}', "
                         "format = 'json')")
            conn.execute(f"CREATE FLOW {flow} INTO {sink} WITH ('timezone' = 'Asia/Kolkata') AS "
                         f"SELECT id, hour(ts) AS h FROM {src}")
        broker.produce(src, ['{"id": "a", "ts": "2024-01-01T00:00:00Z"}'])
        assert broker.consume_json(sink, 1, timeout=60) == [{"id": "a", "h": 5}]
        srv.stop()
        srv = Server(tmp_path).start()
        broker.produce(src, ['{"id": "b", "ts": "2024-01-01T01:00:00Z"}'])
        # The sink is read from its start each time: "a" is there (twice if
        # the restart replays it), "b" once the restarted flow wrote it.
        seen = {}

        def b_arrived():
            seen["rows"] = broker.consume_json(sink, timeout=5)
            return any(r["id"] == "b" for r in seen["rows"])

        wait_for(b_arrived, 90, "the restarted flow's row")
        assert {r["h"] for r in seen["rows"] if r["id"] == "b"} == {6}
    finally:
        srv.stop()
