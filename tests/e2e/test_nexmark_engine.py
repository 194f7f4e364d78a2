"""The nexmark source and the blackhole sink in a running rtsqld: a flow from
one into the other reads every event of a bounded source and the progress
says so (source offsets, blackhole row count); a flow from the nexmark source
into a file resumes at its checkpointed event offsets after STOP/START (no row
lost, none twice) and after rtsqld is killed (no row lost); and
bench/nexmark/nexmark_engine.sh runs and prints its table.
"""

import json
import os
import re
import subprocess
import time

from conftest import BIN_DIR, SOURCE_DIR, Server, unique

BID_COLUMNS = ("auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, "
               "date_time TIMESTAMP, extra STRING")


def bids_in(events):
    """Bids among the events 0 .. events-1: 46 of every 50, from the 5th on."""
    return sum(1 for n in range(events) if n % 50 >= 4)


def offsets_read(progress):
    return sum(int(v) for s in progress["sources"] for parts in s["endOffset"].values()
               for v in parts.values())


def blackhole_rows(progress):
    m = re.fullmatch(r"Blackhole\[rows=(\d+)\]", progress["sink"]["description"])
    assert m, progress["sink"]
    return int(m.group(1))


def test_nexmark_into_blackhole_reads_every_event(server):
    name = unique("nxbh")
    events = 20_000
    server.run_script(f"""
        CREATE SOURCE {name}_bid ({BID_COLUMNS},
            WATERMARK FOR date_time AS date_time - INTERVAL '2' SECOND)
            WITH (connector = 'nexmark', 'nexmark.table' = 'bid', events = '{events}',
                  partitions = '3');
        CREATE SINK {name}_out WITH (connector = 'blackhole');
        CREATE FLOW {name} INTO {name}_out AS
            SELECT auction, bidder, price * 2 AS price, date_time FROM {name}_bid;
    """)
    want = bids_in(events)
    p = server.wait_progress(name, lambda p: offsets_read(p) == events
                             and blackhole_rows(p) == want, timeout=120)
    assert offsets_read(p) == events, p["sources"]
    assert blackhole_rows(p) == want, p["sink"]
    # Three partitions of the generator's sequence, each read to its end.
    assert p["sources"][0]["endOffset"] == {f"{name}_bid": {"0": 6667, "1": 6667, "2": 6666}}
    assert p["sources"][0]["description"] == "Nexmark[bid, events=20000]"
    server.psql(f"DROP FLOW {name}")


def read_rows(path):
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_nexmark_flow_resumes_at_its_checkpointed_offsets(tmp_path):
    """Auctions (ids 1000 on, one per event of three in fifty) paced at 400
    events/s into a file: stopped and started, then killed and restarted, the
    flow goes on from the event offsets of its last checkpoint."""
    events = 8_000  # 480 auctions, 20 s at 400 events/s
    auctions = sum(1 for n in range(events) if 1 <= n % 50 <= 3)
    out = tmp_path / "auctions.jsonl"
    server = Server(tmp_path).start()
    try:
        server.run_script(f"""
            CREATE SOURCE auction (id BIGINT, seller BIGINT, date_time TIMESTAMP)
                WITH (connector = 'nexmark', 'nexmark.table' = 'auction', events = '{events}',
                      'events-per-second' = '400', partitions = '2');
            CREATE SINK rows WITH (connector = 'file', path = '{out}', format = 'json');
            CREATE FLOW f INTO rows CHECKPOINT INTERVAL '1 second' AS
                SELECT id, seller, date_time FROM auction;
        """)

        def wait_rows(n, timeout=60):
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and len(read_rows(out)) < n:
                time.sleep(0.2)
            return read_rows(out)

        # A graceful stop ends the epoch and checkpoints it: the start goes
        # on from there, and no row is lost or written twice.
        assert len(wait_rows(60)) >= 60, server.log_tail()
        server.psql("STOP FLOW f")
        stopped = read_rows(out)
        server.psql("START FLOW f")
        rows = wait_rows(len(stopped) + 60)
        ids = [r["id"] for r in rows]
        assert len(ids) == len(set(ids)), "a row was written twice after STOP/START"
        assert ids[:len(stopped)] == [r["id"] for r in stopped]

        # SIGKILL after a checkpoint: the restarted server restores the flow at
        # the checkpoint's offsets. The file sink is at-least-once, so rows
        # after that checkpoint may come twice, but none may be missing.
        server.wait_progress("f", lambda p: p["checkpoint"] is not None, timeout=30)
        server.proc.kill()
        server.proc.wait(timeout=10)
        server = Server(tmp_path)
        server.log_path = tmp_path / "rtsqld.restarted.log"
        server.start()
        rows = wait_rows(auctions + 1, timeout=90)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and {r["id"] for r in rows} != set(
                range(1000, 1000 + auctions)):
            time.sleep(0.5)
            rows = read_rows(out)
        ids = {r["id"] for r in rows}
        assert ids == set(range(1000, 1000 + auctions)), (
            f"missing {sorted(set(range(1000, 1000 + auctions)) - ids)[:10]}\n{server.log_tail()}")
        p = server.progress("f")
        assert p["recovery"] is not None and p["recovery"]["fromEpoch"] >= 0
        # The restored source did not start over: the rows written before the
        # STOP, which every later checkpoint covers, are in the file once.
        counts = {}
        for r in rows:
            counts[r["id"]] = counts.get(r["id"], 0) + 1
        again = [r["id"] for r in stopped if counts[r["id"]] != 1]
        assert not again, f"rows before the last checkpoint written again: {again[:10]}"
    finally:
        code = server.stop()
        assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{server.log_tail()}"


def test_nexmark_engine_bench_prints_its_table():
    env = {**os.environ, "RTSQL_BIN_DIR": str(BIN_DIR)}
    p = subprocess.run([str(SOURCE_DIR / "bench" / "nexmark" / "nexmark_engine.sh"), "--events", "20000",
                        "--queries", "q0 q5 q8", "--timeout", "120"],
                       capture_output=True, text=True, timeout=600, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = {line.split("|")[1].strip(): line for line in p.stdout.splitlines()
             if re.match(r"\| q\d", line)}
    assert set(lines) == {"q0", "q5", "q8"}, p.stdout
    # q0 writes every bid; each row says events, seconds, CPU and events/s per core.
    cells = [c.strip() for c in lines["q0"].split("|")[1:-1]]
    assert cells[1] == "20,000" and cells[7] == f"{bids_in(20000):,}", lines["q0"]
    assert "incomplete" not in p.stdout
