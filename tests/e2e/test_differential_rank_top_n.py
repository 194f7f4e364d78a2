"""Differential test of the RANK() and DENSE_RANK() top-N per key: seeded bids
with many tied prices through rtsql flows that keep
`rank() / dense_rank() OVER (PARTITION BY auction ORDER BY price DESC) <= N`,
and the same query in DuckDB over the same rows.

The flows write their changelog in the debezium-json format (before / after /
op): a tie entering the top adds rows, a higher price pushes every tied row
out at once, and with the rank selected every row whose rank changed is
updated. Applying the changelog (a record's `before` row leaves the table, its
`after` row enters) gives the final rows ranked within N, which must equal
DuckDB's. Ties share a rank whatever order the rows arrive in, so the result
does not depend on how rows of different auctions interleave.

One more flow ranks the groups of an aggregation (bids per bidder and
auction), whose counts retract as they grow: the operator keeps every group
and brings rows back into the top when others leave it.
"""

import json
import random
import time
from collections import Counter

import duckdb
import pytest

from changelog import debezium_net_rows
from conftest import unique

SEED = 20261207
N_BIDS = 800
N_AUCTIONS = 10
WAIT_S = 60


def make_bids(rng):
    # Prices from a small range: every auction has many ties.
    return [{"id": i, "auction": rng.randrange(N_AUCTIONS), "bidder": f"b{rng.randrange(15)}",
             "price": rng.randrange(1, 25)} for i in range(N_BIDS)]


def duckdb_rows(bids, sql):
    db = duckdb.connect()
    db.execute("CREATE TABLE bids (id BIGINT, auction BIGINT, bidder VARCHAR, price BIGINT)")
    db.executemany("INSERT INTO bids VALUES (?, ?, ?, ?)",
                   [(b["id"], b["auction"], b["bidder"], b["price"]) for b in bids])
    return Counter(tuple(r) for r in db.execute(sql).fetchall())


def read_changelog(kafka, topic, quiet_s=None):
    msgs = (kafka.consume(topic, timeout=quiet_s) if quiet_s
            else kafka.consume_to_end(topic, timeout=10))
    return [json.loads(m.value()) for m in msgs if m.value() is not None]


@pytest.fixture(scope="module")
def setup(server, kafka):
    topic = unique("rank_in")
    src = unique("rank_src")
    kafka.create_topic(topic)
    with server.connect() as conn:
        conn.execute(f"""CREATE SOURCE {src} (id BIGINT, auction BIGINT, bidder STRING, price BIGINT)
                         WITH ({kafka.options()}, subscribe = '{topic}',
                               startingOffsets = 'earliest', format = 'json')""")
    bids = make_bids(random.Random(SEED))
    kafka.produce(topic, bids)
    yield {"src": src, "bids": bids}


def run_flow(server, kafka, select_sql, cols, want):
    flow, out = unique("rank_flow"), unique("rank_out")
    with server.connect() as conn:
        conn.execute(f"CREATE SINK {out}_s WITH ({kafka.options()}, topic = '{out}', "
                     f"format = 'debezium-json')")
        conn.execute(f"CREATE FLOW {flow} INTO {out}_s WITH ('shuffle.partitions' = '3') AS "
                     f"{select_sql}")
    try:
        last = server.wait_progress(flow, lambda p: p.get("numInputRows", 0) >= N_BIDS,
                                    timeout=WAIT_S)
        assert last and last.get("numInputRows") == N_BIDS, json.dumps(last)
        deadline = time.monotonic() + WAIT_S
        got = None
        while time.monotonic() < deadline:
            got = debezium_net_rows(read_changelog(kafka, out), cols)
            if got == want:
                break
            time.sleep(0.2)
        assert got == want
        assert debezium_net_rows(read_changelog(kafka, out, quiet_s=3), cols) == want
    finally:
        with server.connect() as conn:
            conn.execute(f"DROP FLOW IF EXISTS {flow}")


@pytest.mark.parametrize("function,n,with_rank", [
    ("rank", 3, True), ("rank", 1, False), ("dense_rank", 2, True), ("dense_rank", 4, False)])
def test_rank_top_n_matches_duckdb(server, kafka, setup, function, n, with_rank):
    src, bids = setup["src"], setup["bids"]
    cols = ["id", "auction", "bidder", "price"] + (["r"] if with_rank else [])
    inner = (f"SELECT *, {function}() OVER (PARTITION BY auction ORDER BY price DESC) AS r "
             f"FROM {{}}")
    outer = f"SELECT {', '.join(cols)} FROM ({inner}) WHERE r <= {n}"
    want = duckdb_rows(bids, outer.format("bids"))
    # Ties: the top holds more rows than N for some auction.
    per_auction = Counter(row[1] for row in want.elements())
    assert max(per_auction.values()) > n
    run_flow(server, kafka, outer.format(src), cols, want)


def test_rank_over_retracting_groups_matches_duckdb(server, kafka, setup):
    src, bids = setup["src"], setup["bids"]
    cols = ["auction", "bidder", "n", "r"]
    query = """SELECT auction, bidder, n, r FROM (
        SELECT auction, bidder, count(*) AS n,
               rank() OVER (PARTITION BY auction ORDER BY count(*) DESC) AS r
        FROM {} GROUP BY auction, bidder) WHERE r <= 2"""
    want = duckdb_rows(bids, query.format("bids"))
    run_flow(server, kafka, query.format(src), cols, want)
