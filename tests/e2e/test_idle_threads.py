"""A server with no flow does not wake its own threads: the flow supervisor
sleeps until a flow needs it (it used to look five times a second), and so
does every other thread of rtsql's own. Counted as each thread's voluntary
context switches (/proc/PID/task/*/status) over a few seconds; librdkafka's
threads of the embedded broker (`rdk:*`) keep their one-second housekeeping
tick and are left out."""

import time
from pathlib import Path

from conftest import unique

SAMPLE_S = 4
# Generous: a thread that polled at 5 Hz would wake 20 times in the sample.
# A sleeping one wakes only if something (a signal, a statement) reaches it.
MAX_WAKES = 2


def wakes_by_thread(pid):
    """Voluntary context switches so far of each thread of PID, by name."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            status = (task / "status").read_text()
        except OSError:
            continue  # the thread ended meanwhile
        for line in status.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                out[name] = out.get(name, 0) + int(line.split()[1])
    return out


def wakes_over(pid, seconds):
    before = wakes_by_thread(pid)
    time.sleep(seconds)
    after = wakes_by_thread(pid)
    return {name: after[name] - before.get(name, 0) for name in after}


def test_no_thread_of_a_server_without_flows_wakes(server):
    # Whatever the start left (the supervisor's first round) is over by now.
    time.sleep(1)
    wakes = wakes_over(server.proc.pid, SAMPLE_S)
    assert "flow-supervisor" in wakes, wakes
    own = {name: n for name, n in wakes.items() if not name.startswith("rdk:")}
    busy = {name: n for name, n in own.items() if n > MAX_WAKES}
    assert not busy, f"threads that woke over {SAMPLE_S} s with no flow: {busy} (all: {own})"


def test_supervisor_sleeps_beside_a_running_flow(server, tmp_path):
    out = tmp_path / f"{unique('idle')}.jsonl"
    server.run_script(f"""
        CREATE SOURCE idle_gen (a BIGINT) WITH (connector = 'datagen', rowsPerSecond = '1');
        CREATE SINK idle_out WITH (connector = 'file', path = '{out}', format = 'json');
        CREATE FLOW idle_flow INTO idle_out AS SELECT a FROM idle_gen;
    """)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            rows = {r[0]: r for r in server.query("SHOW FLOWS")}
            if rows.get("idle_flow") and rows["idle_flow"][2] == "running":
                break
            time.sleep(0.2)
        assert rows["idle_flow"][2] == "running", rows
        time.sleep(1)
        wakes = wakes_over(server.proc.pid, SAMPLE_S)
        assert wakes.get("flow-supervisor", 0) <= MAX_WAKES, wakes
    finally:
        server.query("DROP FLOW idle_flow")
