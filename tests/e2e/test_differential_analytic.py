"""Differential test of analytic functions in bounded queries against DuckDB:
seeded random rows in a static table (NULL partition keys, order keys with
ties and NULLs, NULL arguments), then rank, dense_rank, percent_rank,
cume_dist, ntile, row_number, lag and lead (offsets, defaults, IGNORE NULLS),
first_value, last_value and nth_value, and aggregates over ROWS and RANGE
frames and the default frames, each compared row for row with DuckDB's answer
to the same query on the same rows (doubles within a relative 1e-9).

Functions whose value depends on the order of rows with equal order keys
(row_number, ntile, lag, first_value over ROWS) order by a key that ends on
the unique id; the others order by x alone, so that ties and NULL keys are
peers. Every window spells its NULL placement out, since DuckDB's default
(NULLS LAST) is not Spark's (NULL first ascending), which rtsql keeps; the
result is ordered by id."""

import random
import re

import duckdb
import pytest

from conftest import unique
from test_differential_bounded import same_rows

SEED = 4343
ROWS = 1200

W_TIES = "(PARTITION BY k ORDER BY x NULLS FIRST)"
W_TIES_DESC = "(PARTITION BY k ORDER BY x DESC NULLS LAST)"
W_TOTAL = "(PARTITION BY k ORDER BY x NULLS FIRST, id)"

QUERIES = [
    f"SELECT id, rank() OVER {W_TIES} AS r, dense_rank() OVER {W_TIES} AS d, "
    f"percent_rank() OVER {W_TIES} AS p, cume_dist() OVER {W_TIES} AS c FROM {{t}} ORDER BY id",
    f"SELECT id, rank() OVER {W_TIES_DESC} AS r, cume_dist() OVER {W_TIES_DESC} AS c "
    f"FROM {{t}} ORDER BY id",
    f"SELECT id, row_number() OVER {W_TOTAL} AS rn, ntile(3) OVER {W_TOTAL} AS t3, "
    f"ntile(50) OVER {W_TOTAL} AS t50 FROM {{t}} ORDER BY id",
    f"SELECT id, lag(y) OVER {W_TOTAL} AS a, lag(y, 3, -1.5) OVER {W_TOTAL} AS b, "
    f"lead(x, 2) OVER {W_TOTAL} AS c, lead(x, 1, 0) OVER {W_TOTAL} AS d FROM {{t}} ORDER BY id",
    f"SELECT id, lag(y) IGNORE NULLS OVER {W_TOTAL} AS a, "
    f"lead(y, 2) IGNORE NULLS OVER {W_TOTAL} AS b FROM {{t}} ORDER BY id",
    f"SELECT id, first_value(y) OVER {W_TOTAL} AS f, last_value(y) OVER {W_TOTAL} AS l, "
    f"nth_value(y, 3) OVER {W_TOTAL} AS n3 FROM {{t}} ORDER BY id",
    "SELECT id, first_value(y) IGNORE NULLS OVER (PARTITION BY k ORDER BY x NULLS FIRST, id "
    "ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING) AS f, last_value(y) IGNORE NULLS OVER "
    "(PARTITION BY k ORDER BY x NULLS FIRST, id ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING) AS l "
    "FROM {t} ORDER BY id",
    # Aggregates: the default frames (RANGE to the current row's peers, the
    # whole partition without ORDER BY), ROWS and RANGE with offsets.
    f"SELECT id, sum(x) OVER {W_TIES} AS s, count(*) OVER {W_TIES} AS n, "
    "max(y) OVER (PARTITION BY k) AS m, avg(x) OVER (PARTITION BY k) AS a FROM {t} ORDER BY id",
    "SELECT id, sum(x) OVER (PARTITION BY k ORDER BY x NULLS FIRST, id ROWS BETWEEN 3 PRECEDING "
    "AND 1 FOLLOWING) AS s, min(y) OVER (PARTITION BY k ORDER BY x NULLS FIRST, id ROWS BETWEEN "
    "1 FOLLOWING AND UNBOUNDED FOLLOWING) AS m FROM {t} ORDER BY id",
    "SELECT id, count(*) OVER (PARTITION BY k ORDER BY x NULLS FIRST RANGE BETWEEN 20 PRECEDING "
    "AND 10 FOLLOWING) AS n, sum(y) OVER (PARTITION BY k ORDER BY x DESC NULLS LAST RANGE "
    "BETWEEN 15 PRECEDING AND CURRENT ROW) AS s FROM {t} ORDER BY id",
    # Without PARTITION BY: one partition of every row.
    "SELECT id, dense_rank() OVER (ORDER BY x NULLS FIRST) AS d, sum(x) OVER (ORDER BY x NULLS "
    "FIRST RANGE BETWEEN CURRENT ROW AND 5 FOLLOWING) AS s FROM {t} ORDER BY id",
]


def seeded_rows():
    rng = random.Random(SEED)
    rows = []
    for i in range(ROWS):
        k = None if rng.random() < 0.05 else rng.randrange(12)
        x = None if rng.random() < 0.1 else rng.randrange(-60, 60)  # many ties
        y = None if rng.random() < 0.2 else round(rng.uniform(-100, 100), 3)
        rows.append((i, k, x, y))
    return rows


@pytest.fixture(scope="module")
def table(server):
    name = unique("an_facts")
    rows = seeded_rows()

    def lit(v):
        return "NULL" if v is None else repr(v)

    server.query(f"CREATE TABLE {name} (id BIGINT, k BIGINT, x BIGINT, y DOUBLE)")
    for start in range(0, ROWS, 400):
        values = ", ".join("(" + ", ".join(lit(v) for v in r) + ")" for r in rows[start:start + 400])
        server.query(f"INSERT INTO {name} VALUES {values}")
    db = duckdb.connect()
    db.execute(f"CREATE TABLE {name} (id BIGINT, k BIGINT, x BIGINT, y DOUBLE)")
    db.executemany(f"INSERT INTO {name} VALUES (?, ?, ?, ?)", rows)
    yield name, db
    db.close()


def duckdb_spelling(sql):
    """DuckDB writes IGNORE NULLS inside the call: lag(y IGNORE NULLS)."""
    return re.sub(r"(\w+\([^()]*)\) IGNORE NULLS", r"\1 IGNORE NULLS)", sql)


@pytest.mark.parametrize("query", QUERIES)
def test_analytic_function_matches_duckdb(server, table, query):
    name, db = table
    sql = query.format(t=name)
    want = db.execute(duckdb_spelling(sql)).fetchall()
    got = server.query(sql)
    assert len(want) == ROWS
    assert same_rows(got, want), f"{sql}\nrtsql:  {got[:10]}\nduckdb: {want[:10]}"
