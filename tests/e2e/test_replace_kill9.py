"""kill -9 inside CREATE OR REPLACE FLOW: rtsqld is killed at a point of the
replace, started again on the same data directory, and the flow must run
either the old query or the new one with its state exact: the highest count
per key DuckDB's over all the input the query it runs admits, never a row
lost or counted twice.

The kill comes from strace, which stops the server at a system call and
delivers SIGKILL there (`-e inject=...:signal=SIGKILL`):
- before the catalog write: at the rename that would put the new catalog file
  in place (the rename is skipped): the old query must come back;
- after the catalog write: at the fsync of the data directory that follows
  that rename: the new query must come back, restoring the replaced plan's
  checkpoint through the recorded state migration;
- during the state carry-over: when the new plan, having removed the flow's
  live state, makes its directory again to fill it from the replaced plan's
  checkpoint: the new query.
Needs strace and the right to ptrace the server (skipped without them).
"""

import json
import random
import shutil
import subprocess
import threading
import time

import duckdb
import psycopg
import pytest

from conftest import unique, wait_for, start_server

KEYS = 8
CONVERGE_TIMEOUT_S = 120
OLD = "SELECT k, count(*) AS n FROM ev GROUP BY k"
NEW = "SELECT k, count(*) AS n, sum(v) AS total FROM ev WHERE v >= 0 GROUP BY k"
RENAMES = "rename,renameat,renameat2"


def highest_counts(broker, topic):
    best = {}
    for m in broker.consume_to_end(topic, timeout=3):
        r = json.loads(m.value())
        best[r["k"]] = max(best.get(r["k"], 0), r["n"])
    return best


def counts_of(rows, admit_all):
    db = duckdb.connect()
    db.execute("CREATE TABLE ev (k VARCHAR, v BIGINT)")
    db.executemany("INSERT INTO ev VALUES (?, ?)", [(r["k"], r["v"]) for r in rows])
    where = "" if admit_all else "WHERE v >= 0"
    return dict(db.execute(f"SELECT k, count(*) FROM ev {where} GROUP BY k").fetchall())


def wait_exact(server, broker, topic, want):
    deadline = time.monotonic() + CONVERGE_TIMEOUT_S
    while True:
        got = highest_counts(broker, topic)
        over = {k: (n, want.get(k)) for k, n in got.items() if n > want.get(k, 0)}
        assert not over, f"records counted twice: {over}"
        if got == want:
            return
        assert time.monotonic() < deadline, f"counts {got} did not reach {want}\n{server.log_tail()}"
        time.sleep(1)


def strace_kill(pid, args, log):
    """strace on every thread of PID with ARGS, which kill it at a call;
    returns once it has attached."""
    proc = subprocess.Popen(["strace", "-f", "-y", *args, "-o", str(log), "-p", str(pid)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines = []

    def ready():
        if proc.poll() is not None:
            return True
        line = proc.stderr.readline()
        lines.append(line)
        return "attached" in line

    wait_for(ready, 60, "strace to attach")
    if proc.poll() is not None:
        pytest.skip(f"strace cannot attach to rtsqld: {''.join(lines)}")
    return proc


def kill_points(data_dir):
    catalog = str(data_dir / "catalog")
    flow_dirs = list((data_dir / "flows").iterdir())
    assert len(flow_dirs) == 1, flow_dirs
    state = str(flow_dirs[0] / "state")
    return {
        # strace matches a rename by the path it renames.
        "before_write": (["-P", catalog + ".tmp", "-e", f"trace={RENAMES}",
                          "-e", f"inject={RENAMES}:error=EIO:signal=SIGKILL"], "old"),
        "after_write": (["-P", str(data_dir), "-e", "trace=fsync",
                         "-e", "inject=fsync:signal=SIGKILL"], "new"),
        # The new plan's restore removes the flow's live state and makes its
        # directory again, to fill it from the replaced plan's checkpoint.
        "carry_over": (["-P", state, "-e", "trace=mkdir,mkdirat",
                        "-e", "inject=mkdir,mkdirat:error=EIO:signal=SIGKILL"], "new"),
    }


@pytest.mark.parametrize("point", ["before_write", "after_write", "carry_over"])
def test_kill_9_inside_a_replace(broker, tmp_path, point):
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    uid = unique("rk9")
    topic_in, topic_out = f"{uid}_in", f"{uid}_out"
    broker.create_topic(topic_in)
    broker.create_topic(topic_out)
    opts = broker.options()
    rng = random.Random(sum(map(ord, point)))
    before = [{"k": f"k{rng.randrange(KEYS)}", "v": rng.randrange(0, 100)} for _ in range(500)]
    after = [{"k": f"k{rng.randrange(KEYS)}", "v": rng.randrange(-50, 100)} for _ in range(500)]
    server = start_server(tmp_path, 0)
    server.run_script(f"""
        CREATE SOURCE ev (k STRING, v BIGINT)
            WITH ({opts}, subscribe = '{topic_in}', startingOffsets = 'earliest', format = 'json');
        CREATE SINK counts WITH ({opts}, topic = '{topic_out}', format = 'json');
        CREATE FLOW c INTO counts CHECKPOINT INTERVAL '1 hour' AS {OLD};
    """)
    broker.produce(topic_in, before)
    wait_exact(server, broker, topic_out, counts_of(before, True))

    args, expect = kill_points(server.data_dir)[point]
    tracer = strace_kill(server.proc.pid, args, tmp_path / "strace.log")
    answer = []

    def replace():
        try:
            server.query(f"CREATE OR REPLACE FLOW c INTO counts CHECKPOINT INTERVAL '1 hour' "
                         f"AS {NEW}")
            answer.append("ok")
        except psycopg.Error as e:
            answer.append(e)

    t = threading.Thread(target=replace)
    t.start()
    t.join(timeout=60)
    assert not t.is_alive(), "the replace did not end within 60 s"
    # Killed by strace at the call, before the statement could answer.
    assert server.proc.wait(timeout=30) == -9, answer
    assert answer and answer[0] != "ok", answer
    tracer.wait(timeout=30)

    server = start_server(tmp_path, 1)
    try:
        text = server.query("SHOW CREATE FLOW c")[0][0]
        runs = "new" if "sum(v) AS total" in text else "old"
        assert runs == expect, (point, text, answer)
        wait_for(lambda: {r[0]: r[2] for r in server.query("SHOW FLOWS")}.get("c") == "running",
                 60, "the flow to run again")
        broker.produce(topic_in, after)
        if runs == "old":
            want = counts_of(before + after, True)
        else:
            want = counts_of(before, True)
            for k, n in counts_of(after, False).items():
                want[k] = want.get(k, 0) + n
        wait_exact(server, broker, topic_out, want)
    finally:
        code = server.stop()
        assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{server.log_tail()}"
