"""A savepoint is durable when STOP FLOW ... WITH SAVEPOINT answers: its files
are fsynced before the rename that names it, and the directory that holds it
after the rename, all before the answer.

strace, attached to the running rtsqld for the statement alone, records the
fsync and rename calls with the paths of their file descriptors (-y). Needs
strace and the right to ptrace the server (skipped without them).
"""

import re
import shutil
import subprocess

import pytest

from conftest import Kafka, Server, unique, wait_for

WAIT_S = 60


def attach_strace(pid, log):
    """strace on every thread of PID, writing to LOG; returns once attached."""
    proc = subprocess.Popen(
        ["strace", "-f", "-y", "-e", "trace=fsync,fdatasync,rename,renameat,renameat2",
         "-o", str(log), "-p", str(pid)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    attached = []

    def ready():
        if proc.poll() is not None:
            return True
        line = proc.stderr.readline()
        attached.append(line)
        return "attached" in line

    wait_for(ready, WAIT_S, "strace to attach")
    if proc.poll() is not None:
        pytest.skip(f"strace cannot attach to rtsqld: {''.join(attached)}")
    # strace attaches every thread of the process before it prints "Process N
    # attached with M threads", so nothing is left to wait for.
    return proc


def test_stop_with_savepoint_is_durable_before_it_answers(tmp_path):
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    uid = unique("sp_sync")
    server = Server(tmp_path).start()
    try:
        with server.connect() as conn:
            conn.execute(f"""CREATE SOURCE {uid}_src (k STRING)
                             WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
                                   subscribe = '{uid}_in', startingOffsets = 'earliest',
                                   format = 'json')""")
            conn.execute(f"""CREATE SINK {uid}_out WITH (connector = 'kafka',
                             'kafka.bootstrap.servers' = 'embedded', topic = '{uid}_out',
                             format = 'json')""")
            conn.execute(f"""CREATE FLOW {uid} INTO {uid}_out AS
                             SELECT k, count(*) AS n FROM {uid}_src GROUP BY k""")
            Kafka("embedded", "embedded", server.embedded_bootstrap).produce(
                f"{uid}_in", [{"k": "a"}, {"k": "b"}])
            server.wait_progress(uid, lambda p: p.get("numInputRows", 0) >= 2 or
                                 p.get("batchId", -1) >= 2, timeout=WAIT_S)
            log = tmp_path / "strace.log"
            tracer = attach_strace(server.proc.pid, log)
            try:
                conn.execute(f"STOP FLOW {uid} WITH SAVEPOINT before_deploy")
            finally:
                tracer.terminate()
                tracer.wait(timeout=WAIT_S)
        calls = log.read_text().splitlines()
        root = re.escape(str(server.data_dir))
        tmp_dir = rf"{root}/[^>]*/savepoints/before_deploy\.tmp"

        def first(pattern):
            for i, line in enumerate(calls):
                if re.search(pattern, line):
                    return i
            raise AssertionError(f"no call matches {pattern}:\n" + "\n".join(calls[-40:]))

        meta = first(rf"fsync\(\d+<{tmp_dir}/checkpoint\.meta>\)")
        plan = first(rf"fsync\(\d+<{tmp_dir}/plan\.txt>\)")
        folder = first(rf"fsync\(\d+<{tmp_dir}>\)")
        renamed = first(rf'rename(at2?)?\(.*"{tmp_dir}".*"{root}/[^"]*/savepoints/before_deploy"')
        parent = first(rf"fsync\(\d+<{root}/[^>]*/savepoints>\)")
        assert max(meta, plan, folder) < renamed < parent, (meta, plan, folder, renamed, parent)
    finally:
        server.stop()
