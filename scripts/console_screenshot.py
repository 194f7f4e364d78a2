#!/usr/bin/env python3
"""Retakes docs/images/console.png, the web console picture README.md shows:
the quick start deployed on an embedded broker, a windowed aggregation over
its clicks (selected: its plan and charts), a flow that failed on a record it
could not decode, and a live SELECT run in the SQL box.

    python3 scripts/console_screenshot.py [--build build] [--out docs/images/console.png]

Needs what the console test needs (chromium, chromium-driver, python3-selenium,
psycopg: scripts/setup.sh --tests). Everything runs on 127.0.0.1 in a scratch
directory; every wait is bounded."""

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
from confluent_kafka import Producer
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

ROOT = Path(__file__).resolve().parents[1]
WAIT_S = 60


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait(what, check, timeout=WAIT_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.5)
    sys.exit(f"console_screenshot: no {what} within {timeout} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--out", default=str(ROOT / "docs/images/console.png"))
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rtsql-screenshot-"))
    port, http_port = free_port(), free_port()
    log = open(tmp / "rtsqld.log", "wb")
    server = subprocess.Popen(
        [str(Path(args.build) / "server/rtsqld"), "--port", str(port), "--http-port",
         str(http_port), "--data-dir", str(tmp / "data"), "--embedded-kafka"],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    driver = None
    try:
        dsn = f"host=127.0.0.1 port={port} user=rtsql dbname=rtsql connect_timeout=5"

        def connect():
            try:
                return psycopg.connect(dsn, autocommit=True)
            except psycopg.Error:
                return None
        conn = wait("connection", connect)
        bootstrap = conn.execute("SHOW embedded_kafka").fetchone()[0]
        p = Producer({"bootstrap.servers": bootstrap})
        p.produce("orders_raw", json.dumps({"order_id": "o1", "amount": "twelve"}))
        p.flush(10)
        quick = (ROOT / "examples/quickstart.sql").read_text()
        kafka = "connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded'"
        script = quick + f"""
CREATE SINK minute_totals WITH ({kafka}, topic = 'minute_totals', format = 'json');
CREATE FLOW spend_per_window INTO minute_totals TRIGGER REALTIME
    CHECKPOINT INTERVAL '10 seconds' AS
SELECT window.start AS window_start, user_id, count(*) AS clicks, sum(amount) AS spent
FROM clicks GROUP BY window(ts, '10 seconds'), user_id;
CREATE SOURCE orders (order_id STRING, amount DOUBLE)
    WITH ({kafka}, subscribe = 'orders_raw', startingOffsets = 'earliest', format = 'json');
CREATE SINK orders_out WITH ({kafka}, topic = 'orders_out', format = 'json');
CREATE FLOW strict_orders INTO orders_out AS SELECT order_id, amount FROM orders;
"""
        subprocess.run([str(Path(args.build) / "client/rtsql"), "-h", "127.0.0.1", "-p",
                        str(port), "-q", "-f", "-"], input=script, text=True, check=True,
                       timeout=WAIT_S)
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--disable-dev-shm-usage", "--window-size=1400,1400",
                     f"--user-data-dir={tmp / 'chromium'}"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        driver.set_page_load_timeout(WAIT_S)
        driver.get(f"http://127.0.0.1:{http_port}/")
        row = 'tr.flow[data-flow="spend_per_window"]'
        wait("flow list", lambda: driver.execute_script(
            f"return document.querySelector('{row}') !== null"))
        driver.execute_script(f"document.querySelector('{row}').click()")
        # A minute of charts: a rate point a second, twelve 5-second latency
        # intervals, checkpoints every 10 seconds.
        wait("a minute of chart points", lambda: driver.execute_script(
            "const c = document.querySelector('[data-chart=\"input-rate\"]');"
            "const k = document.querySelector('[data-chart=\"checkpoint-duration\"]');"
            "return c && Number(c.dataset.points) >= 60 && k && Number(k.dataset.points) >= 3"),
            timeout=240)
        driver.execute_script(
            "document.getElementById('sql-text').value = "
            "'SELECT user_id, url, amount FROM clicks WHERE amount > 90 LIMIT 4';"
            "document.getElementById('sql-form').requestSubmit();")
        wait("SQL result", lambda: driver.execute_script(
            "return document.getElementById('sql-summary') !== null"))
        driver.save_screenshot(args.out)
        print(f"console_screenshot: wrote {args.out}")
    finally:
        if driver is not None:
            driver.quit()
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    main()
