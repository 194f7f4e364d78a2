"""Differential test of top-N per key: random seeded bids through rtsql flows
ranking them with ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC)
filtered to rn <= N, and the same query in DuckDB over the same rows.

The flows write their changelog in the debezium-json format (before / after /
op), since a displacing top-N deletes rows and updates ranks. Applying the
changelog (a record's `before` row leaves the table, its `after` row enters)
gives the final top N per auction, which must equal DuckDB's
`SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (...) AS rn FROM bids) WHERE rn <= N`.
Prices are distinct, so the ranking has no ties and does not depend on the
order in which rows of different partitions arrive.
"""

import json
import random
import time
from collections import Counter

import duckdb
import pytest

from changelog import debezium_net_rows
from conftest import unique

SEED = 20241201
N_BIDS = 600
N_AUCTIONS = 12
WAIT_S = 60


def make_bids(rng):
    prices = rng.sample(range(1, 1_000_000), N_BIDS)  # distinct: no ties
    return [{"id": i, "auction": rng.randrange(N_AUCTIONS), "bidder": f"b{rng.randrange(40)}",
             "price": prices[i]} for i in range(N_BIDS)]


def duckdb_top_n(bids, n, with_rank):
    db = duckdb.connect()
    db.execute("CREATE TABLE bids (id BIGINT, auction BIGINT, bidder VARCHAR, price BIGINT)")
    db.executemany("INSERT INTO bids VALUES (?, ?, ?, ?)",
                   [(b["id"], b["auction"], b["bidder"], b["price"]) for b in bids])
    cols = "id, auction, bidder, price" + (", rn" if with_rank else "")
    rows = db.execute(f"""SELECT {cols} FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rn FROM bids)
        WHERE rn <= {n}""").fetchall()
    return Counter(tuple(r) for r in rows)


def read_changelog(kafka, topic, quiet_s=None):
    """The topic's debezium-json records, tombstones (no value) left out: up
    to its end now or, with QUIET_S, all that arrives in that time."""
    msgs = (kafka.consume(topic, timeout=quiet_s) if quiet_s
            else kafka.consume_to_end(topic, timeout=10))
    return [json.loads(m.value()) for m in msgs if m.value() is not None]


def apply_changelog(records, with_rank):
    """The table the debezium-json records leave behind."""
    cols = ["id", "auction", "bidder", "price"] + (["rn"] if with_rank else [])
    return debezium_net_rows(records, cols)


@pytest.fixture(scope="module")
def setup(server, kafka):
    topic = unique("topn_in")
    src = unique("topn_src")
    kafka.create_topic(topic)
    with server.connect() as conn:
        conn.execute(f"""CREATE SOURCE {src} (id BIGINT, auction BIGINT, bidder STRING, price BIGINT)
                         WITH ({kafka.options()}, subscribe = '{topic}',
                               startingOffsets = 'earliest', format = 'json')""")
    bids = make_bids(random.Random(SEED))
    kafka.produce(topic, bids)
    yield {"src": src, "bids": bids}


@pytest.mark.parametrize("n,with_rank", [(3, True), (1, False), (5, False)])
def test_top_n_changelog_matches_duckdb(server, kafka, setup, n, with_rank):
    src, bids = setup["src"], setup["bids"]
    flow, out = unique("topn_flow"), unique("topn_out")
    select = "id, auction, bidder, price" + (", rn" if with_rank else "")
    with server.connect() as conn:
        conn.execute(f"CREATE SINK {out}_s WITH ({kafka.options()}, topic = '{out}', "
                     f"format = 'debezium-json')")
        conn.execute(f"""CREATE FLOW {flow} INTO {out}_s WITH ('shuffle.partitions' = '3') AS
            SELECT {select} FROM (
              SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rn
              FROM {src}) WHERE rn <= {n}""")
    want = duckdb_top_n(bids, n, with_rank)
    try:
        # Every bid read, then the changelog applied equals DuckDB's top N.
        last = server.wait_progress(flow, lambda p: p.get("numInputRows", 0) >= N_BIDS,
                                    timeout=WAIT_S)
        assert last and last.get("numInputRows") == N_BIDS, json.dumps(last)
        deadline = time.monotonic() + WAIT_S
        got = None
        while time.monotonic() < deadline:
            got = apply_changelog(read_changelog(kafka, out), with_rank)
            if got == want:
                break
            time.sleep(0.2)
        assert got == want
        # Nothing more arrives that would change it.
        assert apply_changelog(read_changelog(kafka, out, quiet_s=3), with_rank) == want
    finally:
        with server.connect() as conn:
            conn.execute(f"DROP FLOW IF EXISTS {flow}")
