"""Bounded queries through the wire protocol: over static tables, a prepared
statement with a parameter (Describe gives its columns); over a table and
over a topic read FOR OFFSETS BETWEEN 'earliest' AND 'latest', a long one
ended by statement_timeout and by a cancel request with 57014, the server's
slots given back (docs/sql.md, "Bounded queries")."""

import time

import psycopg
import pytest

from conftest import cancel_until_ended, unique

# Generous: CI machines are loaded.
BOUND_S = 30

# Each row's value makes a search that takes minutes: each search for
# 'a(.*z)?' looks to the end of the text, once for each of its 300,000 matches.
LONG_TEXT = "a" * 300000


ITEMS = [(1, "apple", 10), (2, "pear", 3), (3, "plum", 7), (4, "kiwi", 3)]


def make_table(server):
    table = unique("bq_items")
    server.query(f"CREATE TABLE {table} (id BIGINT, name STRING, qty BIGINT)")
    server.query(f"INSERT INTO {table} VALUES " +
                 ", ".join(f"({i}, '{name}', {qty})" for i, name, qty in ITEMS))
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


def make_topic(server, kafka):
    topic, src = unique("bq_topic"), unique("bq_src")
    kafka.create_topic(topic)
    kafka.produce(topic, [{"id": i, "name": name, "qty": qty} for i, name, qty in ITEMS])
    server.query(f"CREATE SOURCE {src} (id BIGINT, name STRING, qty BIGINT) WITH "
                 f"({kafka.options()}, subscribe = '{topic}', format = 'json')")
    return f"{src} FOR OFFSETS BETWEEN 'earliest' AND 'latest'"


@pytest.fixture(params=["table", "topic"])
def relation(request, server, kafka):
    """What a long bounded query reads: a static table or a topic's range."""
    if request.param == "table":
        return make_table(server)
    return make_topic(server, kafka)


def test_statement_timeout_ends_a_long_bounded_query(server, relation):
    table = relation
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


def test_cancel_request_ends_a_long_bounded_query(server, relation):
    table = relation
    conn = server.connect()
    errors = cancel_until_ended(conn, long_query(table), BOUND_S, "the bounded query")
    assert errors and errors[0].diag.sqlstate == "57014", errors
    assert conn.execute(f"SELECT max(qty) FROM {table}").fetchone() == (10,)
    conn.close()
