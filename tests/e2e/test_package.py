"""The Debian package, built, unpacked and run the way it is installed.

`cpack -G DEB` makes the .deb from the build tree's install rules (into a
scratch directory); `dpkg-deb` unpacks it into a scratch root, nothing is
installed on this machine and no maintainer script runs. The package's own
`usr/bin/rtsqld` then starts from a copy of its `etc/rtsql/rtsqld.conf` whose
paths and port point into the scratch directory, and its own `usr/bin/rtsql`
runs statements against it. As root, `dpkg -i` also installs it for real
inside a private mount namespace whose /etc, /usr and /var are overlays on
the scratch directory, and the installed service runs as its own user. Alongside: the control data (Depends covers every
shared library the programs link, the conffile, the maintainer scripts), the
layout, the systemd unit (`systemd-analyze verify` where systemd-analyze is
installed), and the man pages, which must render and describe every long
option the programs' --help lists, and no option they do not have.
"""

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BIN_DIR, SOURCE_DIR, free_port

CPACK = shutil.which("cpack") or "/usr/bin/cpack"
START_TIMEOUT_S = 30
CONF = Path("etc/rtsql/rtsqld.conf")
UNIT = Path("lib/systemd/system/rtsqld.service")


def run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=120,
                          **kw)


def long_options(help_text):
    """The long options a --help output lists (`--name`)."""
    return set(re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", help_text))


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    """(the .deb, the scratch root it is unpacked into)."""
    tmp = tmp_path_factory.mktemp("package")
    out = tmp / "out"
    build = run([CPACK, "-G", "DEB", "-B", out, "--config", BIN_DIR / "CPackConfig.cmake"],
                cwd=BIN_DIR)
    assert build.returncode == 0, f"cpack failed:\n{build.stdout}\n{build.stderr}"
    debs = sorted(out.glob("rtsql_*.deb"))
    assert len(debs) == 1, f"cpack made {debs}:\n{build.stdout}"
    root = tmp / "root"
    unpack = run(["dpkg-deb", "-x", debs[0], root])
    assert unpack.returncode == 0, unpack.stderr
    return debs[0], root


def control_field(info, name):
    m = re.search(rf"^ {name}: (.*)$", info, re.MULTILINE)
    return m.group(1) if m else None


def owning_packages(paths):
    """{library path: the installed Debian package that holds it}, in one dpkg
    query (merged /usr: a file may be registered under /lib or /usr/lib)."""
    variants = {}
    for path in paths:
        for p in {path, os.path.realpath(path)}:
            variants[p] = path
            if p.startswith("/usr/lib/"):
                variants[p[len("/usr"):]] = path
            elif p.startswith("/lib/"):
                variants["/usr" + p] = path
    found = run(["dpkg", "-S", *variants])
    owners = {}
    for line in found.stdout.splitlines():
        pkgs, _, p = line.partition(": ")
        if p in variants:
            owners[variants[p]] = pkgs.split(",")[0].split(":")[0].strip()
    return owners


def test_control_data(package, tmp_path):
    deb, root = package
    info = run(["dpkg-deb", "-I", deb])
    assert info.returncode == 0, info.stderr
    assert control_field(info.stdout, "Package") == "rtsql"
    version = run([root / "usr/bin/rtsqld", "--version"]).stdout.split()[-1]
    assert control_field(info.stdout, "Version") == version
    depends = control_field(info.stdout, "Depends")
    assert depends, info.stdout
    depended = {d.strip().split()[0] for d in re.split(r"[,|]", depends)}
    # Every shared library the two programs link directly (ELF NEEDED) comes
    # from a package the .deb depends on: dpkg-shlibdeps computed the list,
    # this checks it from the other side, with ldd's paths and dpkg's database.
    # (The libraries those link are their own packages' dependencies.)
    libs = {}
    for prog in ("rtsqld", "rtsql"):
        binary = root / "usr/bin" / prog
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(\S+)\]",
                            run(["readelf", "-d", binary]).stdout)
        assert needed, f"readelf found no NEEDED in {prog}"
        resolved = dict(re.findall(r"^\s*(\S+) => (/\S+)", run(["ldd", binary]).stdout,
                                   re.MULTILINE))
        for soname in needed:
            assert soname in resolved, f"{prog}: ldd does not resolve {soname}"
            libs[resolved[soname]] = prog
    owners = owning_packages(libs)
    for lib, prog in libs.items():
        assert lib in owners, f"{lib} belongs to no installed package"
        assert owners[lib] in depended, \
            f"{prog} links {lib} of {owners[lib]}, not in Depends: {depends}"

    ctrl = tmp_path / "control"
    assert run(["dpkg-deb", "-e", deb, ctrl]).returncode == 0
    assert (ctrl / "conffiles").read_text().split() == ["/etc/rtsql/rtsqld.conf"]
    for script in ("postinst", "prerm", "postrm"):
        path = ctrl / script
        assert path.exists() and os.access(path, os.X_OK), f"{script} missing or not executable"
        check = run(["sh", "-n", path])
        assert check.returncode == 0, f"{script}: {check.stderr}"
        text = path.read_text()
        # Every systemctl or deb-systemd-invoke call is guarded by systemd
        # running, so a chroot or container without it installs cleanly.
        if "deb-systemd-invoke" in text or "systemctl" in text:
            assert "[ -d /run/systemd/system ]" in text, script
    assert "adduser --system" in (ctrl / "postinst").read_text()


def test_layout(package):
    deb, root = package
    for path in ("usr/bin/rtsqld", "usr/bin/rtsql", "usr/share/man/man1/rtsqld.1",
                 "usr/share/man/man1/rtsql.1", "usr/share/doc/rtsql/README.md",
                 "usr/share/doc/rtsql/docs/operations.md", "usr/share/doc/rtsql/docs/sql.md",
                 "usr/share/doc/rtsql/examples/README.md",
                 "usr/share/doc/rtsql/examples/quickstart.sql",
                 "usr/share/doc/rtsql/copyright", str(CONF), str(UNIT)):
        assert (root / path).is_file(), f"{path} is not in {deb.name}"
    # Every picture the installed README shows is installed beside it.
    doc = root / "usr/share/doc/rtsql"
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", (doc / "README.md").read_text())
    assert pictures, "README.md shows no picture"
    for picture in pictures:
        assert (doc / picture).is_file(), f"README.md shows {picture}, not in {deb.name}"
    assert "Files: *" in (doc / "copyright").read_text()
    for prog in ("rtsqld", "rtsql"):
        desc = run(["file", "-b", root / "usr/bin" / prog]).stdout
        assert "ELF" in desc and "not stripped" not in desc, desc
    unit = (root / UNIT).read_text()
    assert "ExecStart=/usr/bin/rtsqld --config /etc/rtsql/rtsqld.conf" in unit
    for line in ("User=rtsql", "StateDirectory=rtsql", "NoNewPrivileges=yes",
                 "ProtectSystem=strict", "ReadWritePaths=/var/lib/rtsql", "PrivateTmp=yes"):
        assert line in unit.splitlines(), line
    assert 'data-dir = "/var/lib/rtsql"' in (root / CONF).read_text().splitlines()


def test_systemd_unit_verifies(package):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    _, root = package
    # --root: the unit's ExecStart and paths resolve inside the unpacked
    # package, not on this machine.
    r = run([analyze, "verify", "--man=no", "--recursive-errors=no", f"--root={root}",
             root / UNIT])
    assert r.returncode == 0 and "rtsqld.service" not in r.stderr, r.stderr


def test_config_names_options(package):
    """Every option the shipped file names, set or commented out, is an option
    of rtsqld."""
    _, root = package
    help_opts = long_options(run([root / "usr/bin/rtsqld", "--help"]).stdout)
    named = re.findall(r"^#?([a-z][a-z-]*) = ", (root / CONF).read_text(), re.MULTILINE)
    assert len(named) >= 10, named
    assert set(named) <= help_opts, set(named) - help_opts


def test_install_under_another_prefix(tmp_path):
    """Under a prefix other than /usr the configuration file and the unit go
    below the prefix, the unit naming the prefix's paths; a second install
    keeps an edited configuration file. (The install script alone: the rest
    of `cmake --install` is the package's layout, checked above.)"""
    prefix = tmp_path / "opt"
    cmd = [shutil.which("cmake") or "/usr/bin/cmake", f"-DCMAKE_INSTALL_PREFIX={prefix}",
           f"-DRTSQL_DEPLOY_DIR={SOURCE_DIR / 'deploy'}", f"-DRTSQL_BINARY_DIR={tmp_path}",
           "-P", SOURCE_DIR / "cmake/InstallSystemFiles.cmake"]
    first = run(cmd)
    assert first.returncode == 0, first.stderr
    unit = (prefix / "lib/systemd/system/rtsqld.service").read_text()
    assert f"ExecStart={prefix}/bin/rtsqld --config {prefix}/etc/rtsql/rtsqld.conf" in unit
    # Every path of the package's places is the prefix's now.
    for path in re.findall(r"[^\s:=]*(?:/etc/rtsql|/bin/rtsqld|/share/doc)\S*", unit):
        assert path.startswith(str(prefix)), path
    conf = prefix / "etc/rtsql/rtsqld.conf"
    assert conf.read_text() == (SOURCE_DIR / "deploy/rtsqld.conf").read_text()
    conf.write_text(conf.read_text() + "port = 6543\n")
    second = run(cmd)
    assert second.returncode == 0, second.stderr
    assert conf.read_text().endswith("port = 6543\n")


@pytest.mark.parametrize("prog", ["rtsqld", "rtsql"])
def test_man_page(package, prog):
    _, root = package
    page = root / "usr/share/man/man1" / f"{prog}.1"
    if shutil.which("man"):
        rendered = run(["man", "-l", page], env={**os.environ, "MANPAGER": "cat",
                                                   "MANWIDTH": "80"})
    elif shutil.which("groff"):
        rendered = run(["groff", "-man", "-Tutf8", page])
    else:
        rendered = None
    source = page.read_text()
    if rendered is not None:
        assert rendered.returncode == 0, rendered.stderr
        for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS"):
            assert re.search(rf"^{section}$", rendered.stdout, re.MULTILINE), section
    else:
        for macro in (".TH", ".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS"):
            assert macro in source
    if shutil.which("groff"):
        warn = run(["groff", "-man", "-Tutf8", "-ww", "-z", page])
        assert warn.returncode == 0 and warn.stderr == "", warn.stderr

    # The page cannot drift from the program: the same long options both ways,
    # and the same version.
    helped = run([root / "usr/bin" / prog, "--help"])
    assert helped.returncode == 0, helped.stderr
    help_opts = long_options(helped.stdout)
    assert {"help", "version"} <= help_opts
    page_opts = long_options(source.replace("\\-", "-"))
    assert help_opts - page_opts == set(), f"{prog}.1 does not describe these options"
    assert page_opts - help_opts == set(), f"{prog}.1 describes options {prog} does not have"
    version = run([root / "usr/bin" / prog, "--version"]).stdout.split()[-1]
    assert f'"rtsql {version}"' in source.splitlines()[2]


def test_packaged_server_serves(package, tmp_path):
    """The unpacked rtsqld, started from the packaged configuration file (its
    paths and port moved into the scratch directory), serves the unpacked rtsql."""
    _, root = package
    port = free_port()
    data = tmp_path / "state"
    conf = tmp_path / "rtsqld.conf"
    text = (root / CONF).read_text()
    assert text.count('"/var/lib/rtsql"') == 1
    text = text.replace('"/var/lib/rtsql"', f'"{data}"').replace("#port = 5433",
                                                                  f"port = {port}")
    conf.write_text(text)
    rtsqld = root / "usr/bin/rtsqld"
    rtsql = root / "usr/bin/rtsql"

    # A name rtsqld does not know stops it at start, before it listens.
    bad = tmp_path / "bad.conf"
    bad.write_text(text + "\nno-such-option = 1\n")
    refused = run([rtsqld, "--config", bad])
    assert refused.returncode != 0, refused.stderr
    assert f"--config {bad}" in refused.stderr and "no-such-option" in refused.stderr, \
        refused.stderr

    log_path = tmp_path / "rtsqld.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([str(rtsqld), "--config", str(conf)], stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        client = [rtsql, "-h", "127.0.0.1", "-p", str(port), "-q"]
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            assert proc.poll() is None, f"rtsqld exited:\n{log_path.read_text()}"
            shown = run([*client, "-c", "SHOW FLOWS"])
            if shown.returncode == 0:
                break
            assert time.monotonic() < deadline, f"no connection:\n{log_path.read_text()}"
            time.sleep(0.2)
        # The data directory is the configuration file's, not the default
        # `data` of the working directory.
        assert f"data directory {data}" in log_path.read_text()
        assert data.is_dir()
        q = run([*client, "-c",
                 "CREATE SOURCE numbers (n BIGINT) WITH (connector = 'datagen', "
                 "'rows-per-second' = '1000', 'fields.n.kind' = 'sequence', "
                 "'fields.n.start' = '1'); "
                 "SELECT n * 10 AS tens FROM numbers LIMIT 3"])
        assert q.returncode == 0, q.stderr
        rows = [line.strip() for line in q.stdout.splitlines()]
        # One source task: the sequence 1, 2, 3 arrives in order.
        assert rows[rows.index("tens") + 2:][:4] == ["10", "20", "30", "(3 rows)"], q.stdout
        shown = run([*client, "-c", "SHOW SOURCES"])
        assert shown.returncode == 0 and "numbers" in shown.stdout, shown.stdout
        # The packaged quick start runs as installed: the packaged file turns
        # the embedded broker on, the generator flow fills `clicks`, and a
        # live SELECT over it ends after its LIMIT.
        quick = run([*client, "-f", root / "usr/share/doc/rtsql/examples/quickstart.sql"])
        assert quick.returncode == 0, quick.stdout + quick.stderr
        clicks = run([*client, "-c", "SELECT user_id FROM clicks LIMIT 3"])
        assert clicks.returncode == 0 and "(3 rows)" in clicks.stdout, \
            clicks.stdout + clicks.stderr
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
    assert proc.returncode == 0, log_path.read_text()


# Runs inside a private mount namespace (unshare --mount): /etc, /usr and /var
# are overlays whose writes land in the scratch directory, so dpkg installs
# the package for real, its postinst included, while this machine's own /etc, /usr and /var stay untouched. No
# systemd runs here: the scripts must get through without it.
INSTALL_SCRIPT = r"""
set -eu
scratch=$1 deb=$2 port=$3
for d in etc usr var; do
    mkdir -p "$scratch/$d/upper" "$scratch/$d/work"
    mount -t overlay overlay \
        -o "lowerdir=/$d,upperdir=$scratch/$d/upper,workdir=$scratch/$d/work" "/$d" || exit 77
done
# The man-db trigger would rebuild the whole index: seconds for nothing here.
rm -f /var/lib/man-db/auto-update
export DEBIAN_FRONTEND=noninteractive
dpkg -i "$deb" </dev/null
echo "user: $(getent passwd rtsql | cut -d: -f1,6)"
echo "data: $(stat -c %U:%a /var/lib/rtsql)"
echo "enabled: $(readlink /etc/systemd/system/multi-user.target.wants/rtsqld.service)"

# The service's command line as the service's user, the port moved.
cd /var/lib/rtsql
setpriv --reuid rtsql --regid rtsql --clear-groups \
    /usr/bin/rtsqld --config /etc/rtsql/rtsqld.conf --port "$port" 2>"$scratch/rtsqld.log" &
pid=$!
# Whatever fails below, the server started here does not outlive the script.
trap 'kill "$pid" 2>/dev/null || true' EXIT
i=0
until setpriv --reuid rtsql --regid rtsql --clear-groups \
        /usr/bin/rtsql -p "$port" -q -c "SHOW FLOWS" >/dev/null 2>&1; do
    i=$((i + 1))
    if [ "$i" -gt 150 ] || ! kill -0 "$pid" 2>/dev/null; then
        echo "no connection"; exit 1
    fi
    sleep 0.2
done
setpriv --reuid rtsql --regid rtsql --clear-groups /usr/bin/rtsql -p "$port" -q -c \
    "CREATE SOURCE packaged (n BIGINT) WITH (connector = 'datagen'); SHOW SOURCES"
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
trap - EXIT
echo "rtsqld exit: $status"
echo "state files: $(find /var/lib/rtsql -type f | wc -l)"
"""


def test_dpkg_installs_and_serves(package, tmp_path):
    """dpkg -i in a scratch root (overlays over this machine's own), then the
    installed rtsqld, run as the rtsql user the package created, from the
    packaged configuration file, answers the installed rtsql."""
    deb, _ = package
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("setpriv") is None:
        pytest.skip("needs root, unshare and setpriv for a private mount namespace")
    probe = run(["unshare", "--mount", "--propagation", "private", "true"])
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace here: {probe.stderr.strip()}")
    script = tmp_path / "install.sh"
    script.write_text(INSTALL_SCRIPT)
    r = run(["unshare", "--mount", "--propagation", "private", "sh", script, tmp_path, deb,
             free_port()])
    if r.returncode == 77:
        pytest.skip(f"overlay mounts are not allowed here: {r.stderr.strip()}")
    log = (tmp_path / "rtsqld.log").read_text() if (tmp_path / "rtsqld.log").exists() else ""
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}\n{log}"
    out = r.stdout
    assert "user: rtsql:/var/lib/rtsql" in out, out
    assert "data: rtsql:750" in out, out
    assert "enabled: /lib/systemd/system/rtsqld.service" in out, out
    assert "packaged" in out, out
    assert "rtsqld exit: 0" in out, f"{out}\n{log}"
    assert "data directory /var/lib/rtsql" in log, log
    assert re.search(r"^state files: [1-9]", out, re.MULTILINE), out
