"""Bounded queries over static tables through the wire protocol: a prepared
statement with a parameter (Describe gives its columns), and a long one ended
by statement_timeout and by a cancel request with 57014 (docs/sql.md,
"Bounded queries")."""

import threading
import time

import psycopg
import pytest

from conftest import unique

# Generous: CI machines are loaded.
BOUND_S = 30

# Each row's value makes a search that takes minutes: each search for
# 'a(.*z)?' looks to the end of the text, once for each of its 300,000 matches.
LONG_TEXT = "a" * 300000


def make_table(server):
    table = unique("bq_items")
    server.query(f"CREATE TABLE {table} (id BIGINT, name STRING, qty BIGINT)")
    server.query(f"INSERT INTO {table} VALUES (1, 'apple', 10), (2, 'pear', 3), "
                 f"(3, 'plum', 7), (4, 'kiwi', 3)")
    return table


def long_query(table):
    return (f"SELECT id, length(regexp_replace('{LONG_TEXT}' || name, 'a(.*z)?', 'x')) AS n "
            f"FROM {table} ORDER BY id")


def test_prepared_bounded_query_takes_parameters(server):
    table = make_table(server)
    with server.connect() as conn:
        cur = conn.cursor()
        sql = f"SELECT qty, count(*) AS n FROM {table} WHERE id >= %s GROUP BY qty ORDER BY qty"
        cur.execute(sql, (2,), prepare=True)
        assert [(d.name, d.type_code) for d in cur.description] == [("qty", 20), ("n", 20)]
        assert cur.fetchall() == [(3, 2), (7, 1)]
        cur.execute(sql, (4,), prepare=True)
        assert cur.fetchall() == [(3, 1)]
        cur.execute(f"SELECT name FROM {table} WHERE qty = %s ORDER BY name DESC LIMIT 1",
                    (3,), prepare=True)
        assert cur.fetchall() == [("pear",)]


def test_statement_timeout_ends_a_long_bounded_query(server):
    table = make_table(server)
    with server.connect() as conn:
        conn.execute("SET statement_timeout = '1s'")
        start = time.monotonic()
        with pytest.raises(psycopg.Error) as err:
            conn.execute(long_query(table)).fetchall()
        assert time.monotonic() - start < BOUND_S
        assert err.value.diag.sqlstate == "57014"
        assert err.value.diag.message_primary == "canceling statement due to statement timeout"
        conn.execute("SET statement_timeout = 0")
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (4,)


def test_cancel_request_ends_a_long_bounded_query(server):
    table = make_table(server)
    conn = server.connect()
    done = threading.Event()
    errors = []

    def run():
        try:
            with conn.cursor() as cur:
                cur.execute(long_query(table))
                cur.fetchall()
        except psycopg.Error as e:
            errors.append(e)
        done.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    # Cancel until the statement has ended: a cancel that arrives before the
    # statement starts applies to nothing, as in PostgreSQL.
    deadline = time.monotonic() + BOUND_S
    while not done.is_set() and time.monotonic() < deadline:
        conn.cancel()
        done.wait(0.5)
    assert done.is_set(), "the cancel request did not end the bounded query"
    t.join(BOUND_S)
    assert errors and errors[0].diag.sqlstate == "57014", errors
    assert conn.execute(f"SELECT max(qty) FROM {table}").fetchone() == (10,)
    conn.close()
