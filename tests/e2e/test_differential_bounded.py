"""Differential test of bounded queries against DuckDB: seeded random rows in
two static tables, and the same rows as records of a Kafka topic read FOR
OFFSETS BETWEEN 'earliest' AND 'latest'; then bounded GROUP BY, ORDER BY with
LIMIT, a join and a LEFT JOIN under an aggregate, each compared row for row
with DuckDB's answer to the same query on the same rows (doubles within a
relative 1e-9).

The rows (id, k, g, x, y) have 40 keys k in 5 classes g, NULLs among k, x and
y; the second table names some of the keys. Every ORDER BY is total (it ends
on a unique column), so the order is compared too."""

import math
import random

import duckdb
import pytest

from conftest import unique

SEED = 4517
ROWS = 1500


def close(a, b):
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def same_rows(got, want):
    if len(got) != len(want):
        return False
    return all(len(r) == len(w) and all(close(a, b) for a, b in zip(r, w))
               for r, w in zip(got, want))


def seeded_rows():
    rng = random.Random(SEED)
    rows = []
    for i in range(ROWS):
        k = None if rng.random() < 0.05 else rng.randrange(40)
        x = None if rng.random() < 0.1 else rng.randrange(-500, 500)
        y = None if rng.random() < 0.1 else round(rng.uniform(-100, 100), 3)
        rows.append((i, k, None if k is None else k % 5, x, y))
    labels = [(k, f"name{k}") for k in range(0, 60, 3)]
    return rows, labels


@pytest.fixture(scope="module")
def tables(server):
    facts, names = unique("bq_facts"), unique("bq_names")
    rows, labels = seeded_rows()

    def lit(v):
        return "NULL" if v is None else repr(v)

    server.query(f"CREATE TABLE {facts} (id BIGINT, k BIGINT, g BIGINT, x BIGINT, y DOUBLE)")
    for start in range(0, ROWS, 500):
        values = ", ".join("(" + ", ".join(lit(v) for v in r) + ")" for r in rows[start:start + 500])
        server.query(f"INSERT INTO {facts} VALUES {values}")
    server.query(f"CREATE TABLE {names} (k BIGINT, label STRING)")
    server.query(f"INSERT INTO {names} VALUES " +
                 ", ".join(f"({k}, '{label}')" for k, label in labels))

    db = duckdb.connect()
    db.execute(f"CREATE TABLE {facts} (id BIGINT, k BIGINT, g BIGINT, x BIGINT, y DOUBLE)")
    db.executemany(f"INSERT INTO {facts} VALUES (?, ?, ?, ?, ?)", rows)
    db.execute(f"CREATE TABLE {names} (k BIGINT, label VARCHAR)")
    db.executemany(f"INSERT INTO {names} VALUES (?, ?)", labels)
    yield facts, names, db
    db.close()


QUERIES = [
    # GROUP BY with the aggregates both have; NULL keys form their own group.
    "SELECT k, count(*) AS n, count(x) AS nx, sum(x) AS sx, min(y) AS lo, max(y) AS hi "
    "FROM {facts} GROUP BY k ORDER BY k NULLS LAST",
    "SELECT g, avg(y) AS a, sum(x) AS s FROM {facts} WHERE x > 0 GROUP BY g "
    "HAVING count(*) > 10 ORDER BY g NULLS LAST",
    # ORDER BY and LIMIT over the rows themselves.
    "SELECT id, x, y FROM {facts} WHERE y IS NOT NULL ORDER BY y DESC, id LIMIT 25",
    "SELECT id, k FROM {facts} ORDER BY k DESC NULLS FIRST, id LIMIT 40",
    # Joins of the two tables.
    "SELECT f.id, f.x, n.label FROM {facts} f JOIN {names} n ON f.k = n.k "
    "ORDER BY f.id",
    "SELECT n.label, count(f.id) AS c, sum(f.x) AS s FROM {names} n LEFT JOIN {facts} f "
    "ON f.k = n.k GROUP BY n.label ORDER BY n.label",
]


@pytest.mark.parametrize("query", QUERIES)
def test_bounded_query_matches_duckdb(server, tables, query):
    facts, names, db = tables
    sql = query.format(facts=facts, names=names)
    want = db.execute(sql).fetchall()
    # rtsql orders NULL as PostgreSQL does (last ascending, first descending),
    # which its own spelling of the query leaves implicit.
    ours = sql.replace(" NULLS LAST", "").replace(" NULLS FIRST", "")
    got = server.query(ours)
    assert same_rows(got, want), f"{ours}\nrtsql:  {got[:10]}\nduckdb: {want[:10]}"


@pytest.fixture(scope="module")
def topic(server, kafka, tables):
    """The facts as records of a topic, read by a source; the names table and
    DuckDB's copy of the facts are the tables fixture's."""
    _, names, db = tables
    rows, _ = seeded_rows()
    topic, src = unique("bq_topic"), unique("bq_src")
    kafka.create_topic(topic)
    columns = ["id", "k", "g", "x", "y"]
    kafka.produce(topic, [dict(zip(columns, r)) for r in rows])
    server.query(f"CREATE SOURCE {src} (id BIGINT, k BIGINT, g BIGINT, x BIGINT, y DOUBLE) "
                 f"WITH ({kafka.options()}, subscribe = '{topic}', format = 'json')")
    db.execute(f"CREATE TABLE {src} AS SELECT * FROM {tables[0]}")
    return src, names, db


@pytest.mark.parametrize("query", QUERIES)
def test_bounded_read_of_a_topic_matches_duckdb(server, topic, query):
    src, names, db = topic
    want = db.execute(query.format(facts=src, names=names)).fetchall()
    ranged = f"{src} FOR OFFSETS BETWEEN 'earliest' AND 'latest'"
    ours = query.format(facts=ranged, names=names)
    ours = ours.replace(" NULLS LAST", "").replace(" NULLS FIRST", "")
    got = server.query(ours)
    assert same_rows(got, want), f"{ours}\nrtsql:  {got[:10]}\nduckdb: {want[:10]}"
