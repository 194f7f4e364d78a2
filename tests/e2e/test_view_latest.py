"""A materialized view's latest state, as an explicit choice: a read sees the
view's last committed epoch unless the session SETs rtsql.view_snapshot =
'latest', and SHOW rtsql.view_epoch says which it read (the epoch, or
'latest').

The view checkpoints once an hour, so that within the test its epochs are
committed only when it stops (a stop takes a final checkpoint): rows that
arrive after its start are in an open epoch, which a committed read never
sees and a latest read does. Every wait is on a condition.
"""

import psycopg
import pytest

from conftest import Kafka, Server, unique, wait_for

WAIT_S = 90


def rows(conn, sql, params=None):
    return [tuple(r) for r in conn.execute(sql, params).fetchall()]


def test_a_latest_read_sees_rows_a_committed_read_does_not(tmp_path):
    server = Server(tmp_path).start()
    try:
        kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
        uid = unique("mv_latest")
        topic, v = f"{uid}_in", f"{uid}_v"
        kafka.create_topic(topic)
        with server.connect() as conn:
            conn.execute(f"""CREATE SOURCE {uid}_src (k STRING, n BIGINT)
                             WITH ({kafka.options()}, subscribe = '{topic}',
                                   startingOffsets = 'earliest', format = 'json')""")
            conn.execute(f"""CREATE MATERIALIZED VIEW {v} CHECKPOINT INTERVAL '1 hour'
                             WITH ('shuffle.partitions' = '2') AS
                             SELECT k, count(*) AS c, sum(n) AS s FROM {uid}_src GROUP BY k
                             HAVING count(*) < 3""")
        kafka.produce(topic, [{"k": "a", "n": 1}, {"k": "b", "n": 2}, {"k": "a", "n": 3}])
        first = [("a", 2, 4), ("b", 1, 2)]
        committed = server.connect()
        latest = server.connect()
        try:
            latest.execute("SET rtsql.view_snapshot = 'latest'")
            wait_for(lambda: rows(latest, f"SELECT * FROM {v}") == first, WAIT_S,
                     "a latest read to see the first rows")
            assert latest.execute("SHOW rtsql.view_epoch").fetchone()[0] == "latest"
            # Nothing is committed yet: the view is empty as of its start.
            assert rows(committed, f"SELECT * FROM {v}") == []
            assert committed.execute("SHOW rtsql.view_epoch").fetchone()[0] is None

            # A stop commits them; the view goes on from that epoch.
            committed.execute(f"STOP FLOW {v}")
            committed.execute(f"START FLOW {v}")
            wait_for(lambda: rows(committed, f"SELECT * FROM {v}") == first, WAIT_S,
                     "a committed read to see the first rows after the stop")
            epoch = committed.execute("SHOW rtsql.view_epoch").fetchone()[0]
            assert epoch is not None and int(epoch) >= 0

            # An update (b), a new key (c) and a delete (a's third row: HAVING).
            kafka.produce(topic, [{"k": "a", "n": 10}, {"k": "c", "n": 5}, {"k": "b", "n": 7}])
            second = [("b", 2, 9), ("c", 1, 5)]
            wait_for(lambda: rows(latest, f"SELECT * FROM {v}") == second, WAIT_S,
                     "a latest read to see the rows of the open epoch")
            # The open epoch stays out of committed reads, whatever their form.
            assert rows(committed, f"SELECT * FROM {v}") == first
            assert rows(committed, f"SELECT * FROM {v} WHERE k = 'c'") == []
            assert rows(committed, f"SELECT k, s FROM {v} ORDER BY s DESC LIMIT 1") == [("a", 4)]
            assert committed.execute("SHOW rtsql.view_epoch").fetchone()[0] == epoch
            # A latest read, by key (prepared too) and as a bounded query: the
            # delete hides the committed row of its key.
            assert rows(latest, f"SELECT * FROM {v} WHERE k = 'c'") == [("c", 1, 5)]
            assert rows(latest, f"SELECT * FROM {v} WHERE k = 'a'") == []
            assert rows(latest, f"SELECT c FROM {v} WHERE k = %s", ("b",)) == [(2,)]
            prepared = latest.execute(f"SELECT s FROM {v} WHERE k = %s", ("b",),
                                      prepare=True).fetchone()
            assert prepared == (9,)
            assert rows(latest, f"SELECT k, s FROM {v} ORDER BY s DESC LIMIT 1") == [("b", 9)]
            assert rows(latest, f"SELECT sum(c) FROM {v}") == [(3,)]
            assert latest.execute("SHOW rtsql.view_epoch").fetchone()[0] == "latest"
            # Back to committed on the same session.
            latest.execute("SET rtsql.view_snapshot = 'committed'")
            assert rows(latest, f"SELECT * FROM {v}") == first
            assert latest.execute("SHOW rtsql.view_epoch").fetchone()[0] == epoch
            latest.execute("SET rtsql.view_snapshot = 'latest'")

            # A stopped view has no latest state: a latest read answers its
            # last committed epoch and says which.
            committed.execute(f"STOP FLOW {v}")
            assert rows(latest, f"SELECT * FROM {v}") == second
            stopped_epoch = latest.execute("SHOW rtsql.view_epoch").fetchone()[0]
            assert stopped_epoch not in (None, "latest") and int(stopped_epoch) > int(epoch)
        finally:
            committed.close()
            latest.close()
    finally:
        server.stop()


def test_view_snapshot_takes_committed_or_latest(tmp_path):
    server = Server(tmp_path).start()
    try:
        with server.connect() as conn:
            assert conn.execute("SHOW rtsql.view_snapshot").fetchone()[0] == "committed"
            with pytest.raises(psycopg.Error) as err:
                conn.execute("SET rtsql.view_snapshot = 'newest'")
            assert err.value.sqlstate == "22023"
            conn.execute("SET rtsql.view_snapshot = 'LATEST'")
            assert conn.execute("SHOW rtsql.view_snapshot").fetchone()[0].lower() == "latest"
    finally:
        server.stop()
