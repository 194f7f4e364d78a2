"""The web console in a real headless browser (Debian's chromium driven by
selenium): rtsqld with --http-port and a users file serves the page at `/`;
without credentials it is a 401, with them the page loads, lists the flows,
draws the plan, its input-rate chart moves as records flow, and a flow that
failed on a bad record shows why, and the SQL box runs SHOW and a live SELECT
(stopped by its LIMIT, its timeout, or the client going away) but refuses
what would change the server. Screenshots go to
$RTSQL_BIN_DIR/test-artifacts/console/."""

import base64
import json
import os
import re
import shutil
import socket
import tempfile
import threading
import time
import urllib.error
import urllib.request

import psycopg
import pytest

from conftest import BIN_DIR, Kafka, Server, free_port, unique

USER, PASSWORD = "console", "watch the flows"
ARTIFACTS = BIN_DIR / "test-artifacts" / "console"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
WAIT_S = 30


class ConsoleServer(Server):
    """An rtsqld with --embedded-kafka, --http-port and a users file."""

    def __init__(self, tmp):
        super().__init__(tmp)
        self.http_port = free_port()
        self.users = self.tmp / "users"
        self.users.write_text(f"{USER}:{PASSWORD}\n")

    def extra_args(self):
        return ["--http-port", str(self.http_port), "--users-file", str(self.users)]

    def connect(self, connect_timeout=10):
        return psycopg.connect(host=self.host, port=self.port, user=USER, password=PASSWORD,
                               dbname="rtsql", sslmode="disable",
                               connect_timeout=connect_timeout, autocommit=True)

    def url(self, path="/"):
        return f"http://{self.host}:{self.http_port}{path}"

    def slots_used(self):
        """rtsql_slots_used from /metrics."""
        status, _, body = self.http("/metrics", auth=(USER, PASSWORD))
        assert status == 200, body
        return int(re.search(r"^rtsql_slots_used (\d+)$", body, re.M).group(1))

    def http(self, path, auth=None, json_body=None, timeout=10):
        """(status, headers, body) of a GET (a POST of JSON_BODY when given), with
        Basic credentials when given."""
        data = None if json_body is None else json.dumps(json_body).encode()
        req = urllib.request.Request(self.url(path), data=data)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if auth:
            token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
            req.add_header("Authorization", f"Basic {token}")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.headers, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = ConsoleServer(tmp_path_factory.mktemp("rtsqld_console"))
    s.start()
    yield s
    code = s.stop()
    assert code == 0, f"rtsqld exit code on SIGTERM: {code}\n{s.log_tail()}"


@pytest.fixture(scope="module")
def flows(server):
    """A running aggregate over a topic the tests feed, and a flow that failed
    on a record it could not decode."""
    kafka = Kafka("embedded", "embedded", server.embedded_bootstrap)
    opts = "connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded'"
    names = {"topic": unique("clicks"), "bad_topic": unique("bad"), "flow": unique("counts"),
             "failed": unique("strict")}
    kafka.create_topic(names["topic"])
    kafka.create_topic(names["bad_topic"])
    kafka.produce(names["bad_topic"], [{"user_id": "x", "amount": "abc"}])
    src, bad_src = unique("src"), unique("bad_src")
    with server.connect() as conn:
        for source, topic in ((src, names["topic"]), (bad_src, names["bad_topic"])):
            conn.execute(
                f"CREATE SOURCE {source} (user_id STRING, amount DOUBLE) WITH ({opts}, "
                f"subscribe = '{topic}', startingOffsets = 'earliest', format = 'json')")
        conn.execute(f"CREATE SINK {src}_out WITH ({opts}, topic = '{unique('out')}', "
                     "format = 'json')")
        conn.execute(f"CREATE SINK {bad_src}_out WITH ({opts}, topic = '{unique('out')}', "
                     "format = 'json')")
        conn.execute(
            f"CREATE FLOW {names['flow']} INTO {src}_out AS "
            f"SELECT user_id, count(*) AS clicks, sum(amount) AS total FROM {src} GROUP BY user_id")
        conn.execute(f"CREATE FLOW {names['failed']} INTO {bad_src}_out AS "
                     f"SELECT user_id, amount FROM {bad_src}")
    names["kafka"] = kafka
    names["src"] = src
    return names


@pytest.fixture(scope="module")
def browser(server):
    """A headless chromium that has the console's credentials (as a user who
    answered the browser's Basic prompt would)."""
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.fail("the console test needs Debian's chromium and chromium-driver "
                    "(scripts/setup.sh --tests installs them: apt-get install chromium chromium-driver "
                    "python3-selenium)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("the console test needs python3-selenium (scripts/setup.sh --tests installs it)")
    profile = tempfile.mkdtemp(prefix="rtsql-console-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # The background-networking flags keep chromium from calling out: this
    # machine's network is closed, and those connections would only fail.
    # The page's console messages: a Content-Security-Policy refusal shows there.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 "--window-size=1400,1100", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(WAIT_S)
    token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setExtraHTTPHeaders",
                           {"headers": {"Authorization": f"Basic {token}"}})
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def wait_for(driver, condition, what, timeout=WAIT_S):
    """Polls CONDITION(driver) until it is truthy; fails with a screenshot."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition(driver)
        if value:
            return value
        time.sleep(0.2)
    name = what.replace(" ", "_")[:60]
    driver.save_screenshot(str(ARTIFACTS / f"timeout_{name}.png"))
    raise AssertionError(f"timed out waiting for {what}; page:\n"
                         f"{driver.find_element('tag name', 'body').text[:3000]}")


def js(driver, script, *args):
    return driver.execute_script(script, *args)


def test_credentials_are_required(server):
    status, headers, body = server.http("/")
    assert status == 401
    assert headers.get("WWW-Authenticate", "").startswith("Basic ")
    assert "<html" not in body
    status, _, _ = server.http("/", auth=(USER, "wrong"))
    assert status == 401
    status, headers, body = server.http("/", auth=(USER, PASSWORD))
    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert "/console/console.js" in body
    status, headers, body = server.http("/console/console.js", auth=(USER, PASSWORD))
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    assert "max-age" in headers["Cache-Control"]
    status, _, _ = server.http("/console/nothing.js", auth=(USER, PASSWORD))
    assert status == 404


def test_plan_json(server, flows):
    status, headers, body = server.http(f"/flows/{flows['flow']}/plan", auth=(USER, PASSWORD))
    assert status == 200, body
    plan = json.loads(body)
    assert plan["flow"] == flows["flow"]
    stages = plan["stages"]
    # The aggregate's plan: a source stage shuffling by user_id into the aggregate.
    assert stages[0]["scan"]["topic"] == flows["topic"]
    assert stages[0]["output"] == {"kind": "shuffle", "targetStage": 1, "targetInput": 0,
                                   "keys": ["user_id"]}
    assert stages[1]["operators"][0]["text"].startswith("Aggregate keys=[user_id]")
    assert stages[1]["operators"][0]["changelog"] == "updates"
    assert stages[1]["operators"][0]["state"]
    assert stages[1]["output"] == {"kind": "sink"}
    assert plan["slots"] == sum(s["tasks"] for s in stages)


def test_page_lists_flows_and_its_chart_moves(server, flows, browser):
    browser.get(server.url("/"))
    flow = flows["flow"]
    row = f'tr.flow[data-flow="{flow}"]'
    wait_for(browser, lambda d: js(d, f"return document.querySelector('{row}') !== null"),
             "the flow in the list")
    js(browser, f"document.querySelector('{row}').click()")
    wait_for(browser, lambda d: js(d, "return document.querySelector('#plan-graph .shuffle') !== null"),
             "the plan graph with its shuffle")
    chart = "document.querySelector('[data-chart=\"input-rate\"]')"

    def rate_points(d):
        return js(d, f"const c = {chart}; return c ? [Number(c.dataset.points), "
                     "Number(c.dataset.last || 0)] : [0, 0]")

    # Records flow in while the test watches: the chart must draw a line (a
    # rate needs two polls) ending at a positive rate, not only idle zeros.
    def moved(d):
        flows["kafka"].produce(flows["topic"],
                               [{"user_id": f"u{i % 7}", "amount": float(i)} for i in range(50)])
        points, last = rate_points(d)
        return points >= 2 and last > 0

    wait_for(browser, moved, "the input-rate chart to move")
    assert "running" in browser.find_element("css selector", f"{row} td.state").text
    browser.save_screenshot(str(ARTIFACTS / "console_running_flow.png"))


def test_plan_boxes_show_whole_texts_and_charts_have_time_and_gaps(server, flows, browser):
    """A plan box wraps a long operator text onto more lines instead of cutting
    it; each chart has a time axis under it; a poll the server did not answer
    breaks the chart's line (an outage is a gap, not a ramp); and while /flows
    does not answer, no flow reads as running."""
    browser.get(server.url("/"))
    flow = flows["flow"]
    row = f'tr.flow[data-flow="{flow}"]'
    wait_for(browser, lambda d: js(d, f"return document.querySelector('{row}') !== null"),
             "the flow in the list")
    js(browser, f"document.querySelector('{row}').click()")
    wait_for(browser, lambda d: js(d, "return document.querySelector('#plan-graph') !== null"),
             "the plan graph")
    status, _, body = server.http(f"/flows/{flow}/plan", auth=(USER, PASSWORD))
    assert status == 200, body
    shown = js(browser, "return [...document.querySelectorAll('#plan-graph .stage-box text')]"
                        ".map(t => t.firstChild ? t.firstChild.textContent : '')")
    assert not any("\u2026" in line for line in shown), shown
    squeezed = re.sub(r"\s+", "", "".join(shown))
    for stage in json.loads(body)["stages"]:
        for op in stage["operators"]:
            assert re.sub(r"\s+", "", op["text"]) in squeezed, (op["text"], shown)
    long_text = ("Project user_id, upper(concat(url, '?from=', referrer)) AS page, "
                 "amount * 2 AS doubled, CASE WHEN amount > 10 THEN 'big' ELSE 'small' END")
    lines = js(browser, "return wrap(arguments[0], 44)", long_text)
    assert len(lines) > 1 and all(len(line) <= 44 for line in lines), lines
    assert re.sub(r"\s+", "", "".join(lines)) == re.sub(r"\s+", "", long_text), lines

    # The time axis: clock times under each chart, ending at "now".
    wait_for(browser, lambda d: js(d, "const a = document.querySelector("
                                      "'[data-chart=\"input-rate\"] .axis-start');"
                                      "return a && a.textContent.length > 0"),
             "the input-rate chart's time axis")
    assert js(browser, "return document.querySelector('[data-chart=\"input-rate\"] .axis-end')"
                       ".textContent") == "now"

    # Two runs of points around a poll without an answer: two lines, no ramp.
    segments = js(browser, """
        const now = Date.now();
        const samples = [0, 1, 2].map(i => ({t: now - 60000 + i * 1000, inputRate: 5 + i}))
            .concat([{t: now - 50000, gap: true}])
            .concat([0, 1, 2].map(i => ({t: now - 40000 + i * 1000, inputRate: 9 - i})));
        const c = CHARTS.find(c => c.id === "input-rate");
        drawChart(c, samples);
        const box = document.querySelector('[data-chart="input-rate"]');
        return [Number(box.dataset.segments), box.querySelectorAll("polyline").length];
    """)
    assert segments == [2, 2], segments

    # The server stops answering /flows: the flow's state is unknown, not running.
    state = js(browser, """
        const real = window.getJson;
        window.getJson = async () => { throw new Error("connection refused"); };
        return pollFlows().then(() => {
            window.getJson = real;
            const cell = document.querySelector('tr.flow[data-flow="' + arguments[0] + '"] td.state');
            return [cell.textContent, cell.className];
        });
    """, flow)
    assert state == ["unknown", "state state-unknown"], state
    wait_for(browser, lambda d: "running" in js(
        d, f"return document.querySelector('{row} td.state').textContent"),
        "the flow running again once /flows answers")


def test_content_security_policy_refuses_nothing_the_page_does(server, flows, browser):
    """The endpoint's Content-Security-Policy allows only the page's own script
    and style: the page, a flow's charts and their legend colors work under it,
    and the browser reports no refusal."""
    browser.get_log("browser")  # what earlier tests left
    browser.get(server.url("/"))
    row = f'tr.flow[data-flow="{flows["flow"]}"]'
    wait_for(browser, lambda d: js(d, f"return document.querySelector('{row}') !== null"),
             "the flow in the list")
    js(browser, f"document.querySelector('{row}').click()")
    legend = "#chart-input-rate .legend span"
    wait_for(browser, lambda d: js(d, f"return document.querySelector('{legend}') !== null"),
             "the input-rate chart's legend")
    # The series' color, #2f6fd0, set by the script despite no inline styles.
    color = js(browser, f"return getComputedStyle(document.querySelector('{legend}')).color")
    assert color == "rgb(47, 111, 208)", color
    # A running flow without errors says "none" in the muted grey, not in red.
    none = wait_for(browser, lambda d: js(
        d, "const e = document.querySelector('#errors li.muted'); "
           "return e && getComputedStyle(e).color"), "the errors list's 'none'")
    assert none == "rgb(107, 118, 134)", none
    # The icon browsers ask for is there.
    status, _, _ = server.http("/favicon.ico", auth=(USER, PASSWORD))
    assert status == 200
    refused = [e["message"] for e in browser.get_log("browser")
               if "Content Security Policy" in e["message"]]
    assert not refused, refused


def test_failed_flow_shows_its_reason(server, flows, browser):
    browser.get(server.url("/"))
    failed = flows["failed"]
    reason = f'[data-flow-reason="{failed}"]'
    text = wait_for(browser, lambda d: js(
        d, f"const r = document.querySelector('{reason}'); return r && r.textContent"),
        "the failed flow's reason in the list")
    assert "cannot decode" in text and "abc" in text, text
    js(browser, f"document.querySelector('tr.flow[data-flow=\"{failed}\"]').click()")
    # A flow may be retried ("Recovering: ...") before it is given up on.
    banner = wait_for(browser, lambda d: js(
        d, "const e = document.getElementById('flow-error'); "
           "return !e.hidden && e.textContent.startsWith('Failed:') && e.textContent"),
        "the failure banner")
    assert "cannot decode" in banner and "abc" in banner, banner
    browser.save_screenshot(str(ARTIFACTS / "console_failed_flow.png"))


def test_sql_endpoint_runs_read_only_statements_only(server, flows):
    auth = (USER, PASSWORD)
    status, _, body = server.http("/sql", auth=auth, json_body={"sql": "SHOW FLOWS"})
    assert status == 200, body
    result = json.loads(body)
    assert result["columns"][0]["name"] == "name"
    by_name = {row[0]: row for row in result["rows"]}
    assert by_name[flows["flow"]][2] == "running"
    assert by_name[flows["failed"]][2] == "failed"

    created = unique("never")
    status, _, body = server.http("/sql", auth=auth, json_body={
        "sql": f"CREATE SOURCE {created} (a INT) WITH (connector = 'datagen')"})
    assert status == 400
    assert json.loads(body)["sqlstate"] == "25006"
    assert not [r for r in server.query("SHOW SOURCES") if r[0] == created]

    status, _, _ = server.http("/sql", json_body={"sql": "SHOW FLOWS"})
    assert status == 401


def test_sql_box_in_the_page(server, flows, browser):
    browser.get(server.url("/"))
    wait_for(browser, lambda d: js(d, "return document.getElementById('sql-form') !== null"),
             "the SQL box")
    js(browser, "document.getElementById('sql-text').value = arguments[0];"
                "document.getElementById('sql-run').click()", f"EXPLAIN FLOW {flows['flow']}")
    text = wait_for(browser, lambda d: js(
        d, "const t = document.getElementById('sql-table'); return t && t.textContent"),
        "the EXPLAIN rows")
    assert "Aggregate keys=[user_id]" in text, text
    js(browser, "document.getElementById('sql-text').value = 'DROP FLOW x';"
                "document.getElementById('sql-run').click()")
    state = wait_for(browser, lambda d: js(
        d, "const e = document.querySelector('#sql-result .sql-error'); "
           "return e && e.dataset.sqlstate"), "the refusal")
    assert state == "25006"


class Producing:
    """Feeds the clicks topic with records of one user while a live SELECT
    waits for them (a live query may start at the topic's end), until stopped
    or 60 s have passed."""

    def __init__(self, flows, user):
        self.flows, self.user = flows, user
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        deadline = time.monotonic() + 60
        i = 0
        while not self.done.is_set() and time.monotonic() < deadline:
            self.flows["kafka"].produce(self.flows["topic"],
                                        [{"user_id": self.user, "amount": float(i + k)}
                                         for k in range(5)])
            i += 5
            self.done.wait(0.2)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join(timeout=30)


def wait_until(condition, what, timeout=WAIT_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_live_select_over_http(server, flows):
    auth = (USER, PASSWORD)
    user = unique("live")
    baseline = server.slots_used()
    with Producing(flows, user):
        status, _, body = server.http("/sql", auth=auth, timeout=WAIT_S, json_body={
            "sql": f"SELECT user_id, amount FROM {flows['src']} WHERE user_id = '{user}' LIMIT 3",
            "timeout_ms": WAIT_S * 1000})
    assert status == 200, body
    result = json.loads(body)
    assert [c["name"] for c in result["columns"]] == ["user_id", "amount"]
    assert result["command"] == "SELECT 3" and result["stopped"] is None, result
    assert len(result["rows"]) == 3
    for user_id, amount in result["rows"]:
        assert user_id == user
        assert float(amount) == int(float(amount)) >= 0
    # The live query's temporary flow is gone with its slots.
    wait_until(lambda: server.slots_used() == baseline, "the live query's slots to be freed")

    # No LIMIT: max_rows stops it, and the answer counts the rows it holds
    # (however many records the last poll brought).
    with Producing(flows, user):
        status, _, body = server.http("/sql", auth=auth, timeout=WAIT_S, json_body={
            "sql": f"SELECT user_id FROM {flows['src']} WHERE user_id = '{user}'",
            "timeout_ms": WAIT_S * 1000, "max_rows": 2})
    assert status == 200, body
    result = json.loads(body)
    assert result["stopped"] == "max_rows", result
    assert result["rows"] == [[user], [user]] and result["command"] == "SELECT 2", result

    # No record matches: the statement runs to its timeout and answers no rows.
    status, _, body = server.http("/sql", auth=auth, json_body={
        "sql": f"SELECT user_id FROM {flows['src']} WHERE user_id = '{unique('nobody')}'",
        "timeout_ms": 1000})
    assert status == 200, body
    result = json.loads(body)
    assert result["rows"] == [] and result["stopped"] == "timeout", result
    assert result["command"] == "SELECT 0"

    status, _, body = server.http("/sql", auth=auth, json_body={"sql": "SELECT 1", "timeout_ms": 0})
    assert status == 400 and json.loads(body)["sqlstate"] == "22023", body


def test_live_select_stops_when_its_client_goes(server, flows):
    """A live SELECT that waits for rows holds task slots; the rest of the
    endpoint answers meanwhile, and closing the connection stops it."""
    baseline = server.slots_used()
    token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    body = json.dumps({"sql": f"SELECT user_id FROM {flows['src']} WHERE user_id = "
                              f"'{unique('nobody')}'", "timeout_ms": 60000}).encode()
    sock = socket.create_connection((server.host, server.http_port), timeout=10)
    try:
        sock.sendall(b"POST /sql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Authorization: Basic " + token.encode() +
                     b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        # /metrics answers while the statement runs, and shows its slots.
        wait_until(lambda: server.slots_used() > baseline, "the live query to take its slots")
    finally:
        sock.close()
    wait_until(lambda: server.slots_used() == baseline,
               "the live query to stop when its client went away")


def test_live_select_in_the_page(server, flows, browser):
    browser.get(server.url("/"))
    wait_for(browser, lambda d: js(d, "return document.getElementById('sql-form') !== null"),
             "the SQL box")
    user = unique("page")
    with Producing(flows, user):
        js(browser, "document.getElementById('sql-text').value = arguments[0];"
                    "document.getElementById('sql-run').click()",
           f"SELECT user_id, amount FROM {flows['src']} WHERE user_id = '{user}' LIMIT 2")
        summary = wait_for(browser, lambda d: js(
            d, "const s = document.getElementById('sql-summary'); return s && s.textContent"),
            "the live SELECT's rows")
    assert summary.startswith("SELECT 2 · 2 rows"), summary
    cells = js(browser, "return [...document.querySelectorAll('#sql-table tbody td')]"
                        ".map(td => td.textContent)")
    assert cells[0::2] == [user, user], cells
    browser.save_screenshot(str(ARTIFACTS / "console_live_select.png"))

    # Cancel stops a live SELECT that waits for rows, and frees its slots
    # (well before the 60 s it was given).
    baseline = server.slots_used()
    js(browser, "document.getElementById('sql-timeout').value = '60000';"
                "document.getElementById('sql-text').value = arguments[0];"
                "document.getElementById('sql-run').click()",
       f"SELECT user_id FROM {flows['src']} WHERE user_id = '{unique('nobody')}'")
    wait_until(lambda: server.slots_used() > baseline, "the live query to take its slots")
    js(browser, "document.getElementById('sql-cancel').click()")
    text = wait_for(browser, lambda d: js(
        d, "const s = document.getElementById('sql-stopped'); return s && s.textContent"),
        "the cancel")
    assert text == "cancelled", text
    wait_until(lambda: server.slots_used() == baseline, "the cancelled query's slots to be freed")
