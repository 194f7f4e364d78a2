#!/usr/bin/env python3
"""Batch reference of the Nexmark queries of bench/nexmark/*.sql, in DuckDB.

Each query runs in DuckDB over the events the generator wrote
(rtsql_nexmark_gen --files DIR: person.jsonl, auction.jsonl, bid.jsonl), with
its text adapted to DuckDB's dialect (REFERENCE_SQL below: windows as
arithmetic on epoch milliseconds, DATE_FORMAT as strftime, ...), and its
result is compared with what the flow wrote to its sink. How depends on the
flow's output (OUTPUT below):

- append: the sink's rows as a multiset, so a lost, duplicated or wrong row
  fails;
- update (Spark's update mode: one row per change of a group, no old rows):
  the last row written for each group key must be the group's final row, and
  every group must be there;
- debezium (format 'debezium-json': {"before", "after", "op"} with op c, u, d
  or r): the changes applied to a multiset (c and r add `after`, u removes
  `before` and adds `after`, d removes `before`) must give the final table.

Rows compare column by column in select-list order: timestamps as epoch
milliseconds (rtsql's json sink writes ISO-8601 text), doubles with a
relative tolerance (REL_TOL), everything else exactly.

Windows emitted when they close (EMIT ON WINDOW CLOSE, as Flink's window
table functions do) depend on how far the watermark went: those queries
(WATERMARK_FLOW) take the flow's final watermark (SHOW PROGRESS
eventTime.watermark) and keep the windows and sessions whose end is at or
before it. Without a watermark every window counts as closed (the end of the
input).

Usage as a program:
  reference.py expected --files DIR --query q5 [--watermark ISO]   (JSON lines out)
  reference.py compare --files DIR --query q5 --output OUT.jsonl [--watermark ISO]
"""

import argparse
import collections
import datetime
import json
import math
import sys
from pathlib import Path

GAP_MS = 10_000  # q11's session gap
SIDE_INPUT_ROWS = 10_000  # q13's static table
REL_TOL = 1e-9

QUERIES = [f"q{n}" for n in range(23)]
# The input streams each query reads (its throughput counts their records).
INPUTS = {"q3": ["auction", "person"], "q4": ["auction", "bid"], "q6": ["auction", "bid"],
          "q8": ["person", "auction"], "q9": ["auction", "bid"], "q20": ["bid", "auction"]}
# How each flow writes its output: "append", "debezium", or ("update", key
# column positions in the select list).
OUTPUT = {q: "append" for q in QUERIES}
OUTPUT.update({q: "debezium" for q in ("q4", "q5", "q6", "q7", "q8", "q9", "q18", "q19")})
OUTPUT.update({"q15": ("update", (0,)), "q16": ("update", (0, 1)), "q17": ("update", (0, 1))})
# The flow whose final watermark decides which windows are closed.
WATERMARK_FLOW = {q: q for q in ("q5", "q7", "q8", "q11", "q12")}
# Queries whose sink is a file (the others write to Kafka).
FILE_OUTPUT = {"q10": "q10.jsonl"}

# The events as tables; ${WM} is the watermark as epoch milliseconds.
_TABLES = {
    "person": "id BIGINT, name VARCHAR, email_address VARCHAR, credit_card VARCHAR, "
              "city VARCHAR, state VARCHAR, date_time TIMESTAMP, extra VARCHAR",
    "auction": "id BIGINT, item_name VARCHAR, description VARCHAR, initial_bid BIGINT, "
               "reserve BIGINT, date_time TIMESTAMP, expires TIMESTAMP, seller BIGINT, "
               "category BIGINT, extra VARCHAR",
    "bid": "auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, "
           "date_time TIMESTAMP, extra VARCHAR",
}

# Tumbling and sliding windows as rows: the window starts (epoch ms) of each
# row, aligned on the epoch as rtsql's window() aligns them.
_TUMBLE10 = """(SELECT *, epoch_ms((epoch_ms(date_time) // 10000) * 10000) AS window_start,
                   epoch_ms((epoch_ms(date_time) // 10000) * 10000 + 10000) AS window_end
            FROM {t})"""
_HOP10_2 = """(SELECT bid.*, epoch_ms((epoch_ms(date_time) // 2000 - k) * 2000) AS window_start,
                  epoch_ms((epoch_ms(date_time) // 2000 - k) * 2000 + 10000) AS window_end
           FROM bid, range(0, 5) AS r(k))"""
_CLOSED = "epoch_ms(window_end) <= ${WM}"

_FILTERED_COUNTS = """
     count(*) AS total_bids,
     count(*) filter (where price < 10000) AS rank1_bids,
     count(*) filter (where price >= 10000 and price < 1000000) AS rank2_bids,
     count(*) filter (where price >= 1000000) AS rank3_bids,
     count(distinct bidder) AS total_bidders,
     count(distinct bidder) filter (where price < 10000) AS rank1_bidders,
     count(distinct bidder) filter (where price >= 10000 and price < 1000000) AS rank2_bidders,
     count(distinct bidder) filter (where price >= 1000000) AS rank3_bidders,
     count(distinct auction) AS total_auctions,
     count(distinct auction) filter (where price < 10000) AS rank1_auctions,
     count(distinct auction) filter (where price >= 10000 and price < 1000000) AS rank2_auctions,
     count(distinct auction) filter (where price >= 1000000) AS rank3_auctions"""

REFERENCE_SQL = {
    "q0": "SELECT auction, bidder, price, date_time, extra FROM bid",
    "q1": "SELECT auction, bidder, CAST(0.908 * price AS DOUBLE) AS price, date_time, extra "
          "FROM bid",
    "q2": "SELECT auction, price FROM bid WHERE auction % 123 = 0",
    "q3": """SELECT P.name, P.city, P.state, A.id
             FROM auction AS A INNER JOIN person AS P on A.seller = P.id
             WHERE A.category = 10 and (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA')""",
    "q4": """SELECT Q.category, AVG(Q.final)
             FROM (
                 SELECT MAX(B.price) AS final, A.category
                 FROM auction A, bid B
                 WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires
                 GROUP BY A.id, A.category
             ) Q
             GROUP BY Q.category""",
    "q5": f"""SELECT AuctionBids.auction, AuctionBids.num
              FROM (
                SELECT auction, count(*) AS num, window_start AS starttime,
                       window_end AS endtime
                FROM {_HOP10_2} WHERE {_CLOSED}
                GROUP BY auction, window_start, window_end
              ) AS AuctionBids
              JOIN (
                SELECT max(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
                FROM (
                  SELECT count(*) AS num, window_start AS starttime, window_end AS endtime
                  FROM {_HOP10_2} WHERE {_CLOSED}
                  GROUP BY auction, window_start, window_end
                ) AS CountBids
                GROUP BY CountBids.starttime, CountBids.endtime
              ) AS MaxBids
              ON AuctionBids.starttime = MaxBids.starttime AND
                 AuctionBids.endtime = MaxBids.endtime AND
                 AuctionBids.num >= MaxBids.maxn""",
    "q6": """SELECT Q.seller,
                    AVG(Q.price) OVER (PARTITION BY Q.seller ORDER BY Q.date_time, Q.id
                                       ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS avg_price
             FROM (
               SELECT * FROM (
                 SELECT *, ROW_NUMBER() OVER (PARTITION BY J.id, J.seller ORDER BY J.price DESC)
                     AS rownum
                 FROM (SELECT A.id, A.seller, B.price, B.date_time
                       FROM auction AS A, bid AS B
                       WHERE A.id = B.auction
                         AND B.date_time BETWEEN A.date_time AND A.expires) J
               ) R
               WHERE rownum <= 1
             ) AS Q""",
    "q7": f"""SELECT B.auction, B.price, B.bidder, B.date_time, B.extra
              FROM bid B
              JOIN (
                SELECT MAX(price) AS maxprice, window_end AS date_time
                FROM {_TUMBLE10.format(t="bid")} WHERE {_CLOSED}
                GROUP BY window_start, window_end
              ) B1
              ON B.price = B1.maxprice
              WHERE B.date_time BETWEEN B1.date_time - INTERVAL 10 SECOND AND B1.date_time""",
    "q8": f"""SELECT P.id, P.name, P.starttime
              FROM (
                SELECT id, name, window_start AS starttime, window_end AS endtime
                FROM {_TUMBLE10.format(t="person")} WHERE {_CLOSED}
                GROUP BY id, name, window_start, window_end
              ) P
              JOIN (
                SELECT seller, window_start AS starttime, window_end AS endtime
                FROM {_TUMBLE10.format(t="auction")} WHERE {_CLOSED}
                GROUP BY seller, window_start, window_end
              ) A
              ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime""",
    "q9": """SELECT id, item_name, description, initial_bid, reserve, date_time, expires, seller,
                    category, extra, auction, bidder, price, bid_dateTime, bid_extra
             FROM (
               SELECT A.*, B.auction, B.bidder, B.price, B.date_time AS bid_dateTime,
                      B.extra AS bid_extra,
                      ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC,
                                         B.date_time ASC) AS rownum
               FROM auction A, bid B
               WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires
             ) W
             WHERE rownum <= 1""",
    "q10": """SELECT auction, bidder, price, date_time, extra, strftime(date_time, '%Y-%m-%d') AS dt,
                     strftime(date_time, '%H:%M') AS hm
              FROM bid""",
    # Sessions: a bid at or after the previous one plus the gap starts a new
    # session, which ends at its last bid plus the gap.
    "q11": f"""WITH s AS (
                 SELECT bidder, date_time,
                        CASE WHEN lag(date_time) OVER w IS NULL
                               OR epoch_ms(date_time) - epoch_ms(lag(date_time) OVER w) >= {GAP_MS}
                             THEN 1 ELSE 0 END AS new_session
                 FROM bid WINDOW w AS (PARTITION BY bidder ORDER BY date_time)),
               g AS (
                 SELECT *, sum(new_session) OVER (PARTITION BY bidder ORDER BY date_time
                                                  ROWS UNBOUNDED PRECEDING) AS session
                 FROM s)
               SELECT * FROM (
                 SELECT bidder, count(*) AS bid_count, min(date_time) AS starttime,
                        epoch_ms(epoch_ms(max(date_time)) + {GAP_MS}) AS endtime
                 FROM g GROUP BY bidder, session)
               WHERE epoch_ms(endtime) <= ${{WM}}""",
    "q12": f"""SELECT bidder, count(*) AS bid_count, window_start AS starttime,
                      window_end AS endtime
               FROM {_TUMBLE10.format(t="bid")} WHERE {_CLOSED}
               GROUP BY bidder, window_start, window_end""",
    "q13": """SELECT B.auction, B.bidder, B.price, B.date_time, S.value
              FROM bid B JOIN side_input S ON B.auction % 10000 = S.key""",
    "q14": """SELECT auction, bidder, CAST(0.908 * price AS DOUBLE) AS price,
                     CASE
                         WHEN hour(date_time) >= 8 AND hour(date_time) <= 18 THEN 'dayTime'
                         WHEN hour(date_time) <= 6 OR hour(date_time) >= 20 THEN 'nightTime'
                         ELSE 'otherTime'
                     END AS bidTimeType,
                     date_time, extra,
                     length(extra) - length(replace(extra, 'c', '')) AS c_counts
              FROM bid
              WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000""",
    "q15": f"""SELECT strftime(date_time, '%Y-%m-%d') AS day, {_FILTERED_COUNTS}
               FROM bid GROUP BY strftime(date_time, '%Y-%m-%d')""",
    "q16": f"""SELECT channel, strftime(date_time, '%Y-%m-%d') AS day,
                      max(strftime(date_time, '%H:%M')) AS minute, {_FILTERED_COUNTS}
               FROM bid GROUP BY channel, strftime(date_time, '%Y-%m-%d')""",
    "q17": """SELECT auction, strftime(date_time, '%Y-%m-%d') AS day,
                     count(*) AS total_bids,
                     count(*) filter (where price < 10000) AS rank1_bids,
                     count(*) filter (where price >= 10000 and price < 1000000) AS rank2_bids,
                     count(*) filter (where price >= 1000000) AS rank3_bids,
                     min(price) AS min_price, max(price) AS max_price,
                     avg(price) AS avg_price, sum(price) AS sum_price
              FROM bid GROUP BY auction, strftime(date_time, '%Y-%m-%d')""",
    "q18": """SELECT auction, bidder, price, channel, url, date_time, extra
              FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction
                                                 ORDER BY date_time DESC) AS rank_number
                    FROM bid) R
              WHERE rank_number <= 1""",
    "q19": """SELECT * FROM
              (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC)
                   AS rank_number FROM bid) R
              WHERE rank_number <= 10""",
    "q20": """SELECT auction, bidder, price, channel, url, B.date_time AS bid_dateTime,
                     B.extra AS bid_extra, item_name, description, initial_bid, reserve,
                     A.date_time AS auction_dateTime, expires, seller, category,
                     A.extra AS auction_extra
              FROM bid AS B INNER JOIN auction AS A on B.auction = A.id
              WHERE A.category = 10""",
    # DuckDB's regexp_extract, like Spark's, gives '' when nothing matches.
    "q21": """SELECT auction, bidder, price, channel,
                     CASE
                         WHEN lower(channel) = 'apple' THEN '0'
                         WHEN lower(channel) = 'google' THEN '1'
                         WHEN lower(channel) = 'facebook' THEN '2'
                         WHEN lower(channel) = 'baidu' THEN '3'
                         ELSE regexp_extract(url, '(&|^)channel_id=([^&]*)', 2)
                     END AS channel_id
              FROM bid
              WHERE regexp_extract(url, '(&|^)channel_id=([^&]*)', 2) IS NOT NULL
                 OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')""",
    # SPLIT_INDEX(url, '/', i) is 0-based; DuckDB's lists are 1-based.
    "q22": """SELECT auction, bidder, price, channel,
                     string_split(url, '/')[4] AS dir1,
                     string_split(url, '/')[5] AS dir2,
                     string_split(url, '/')[6] AS dir3
              FROM bid""",
}


def ts_ms(v):
    """Epoch milliseconds of a timestamp as the generator ('2024-05-01
    10:00:00.123') or rtsql's json sink ('2024-05-01T10:00:00.123Z') writes it."""
    if isinstance(v, (int, float)):
        return int(v)
    if isinstance(v, datetime.datetime):
        d = v if v.tzinfo else v.replace(tzinfo=datetime.timezone.utc)
        return round(d.timestamp() * 1000)
    s = v.strip().replace(" ", "T")
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    d = datetime.datetime.fromisoformat(s)
    if d.tzinfo is None:
        d = d.replace(tzinfo=datetime.timezone.utc)
    return round(d.timestamp() * 1000)


def side_value(key):
    return f"value-{key}"


def write_side_input(path):
    """The static table of q13: key 0..9999 and a value naming it."""
    with open(path, "w") as f:
        f.write("key,value\n")
        for k in range(SIDE_INPUT_ROWS):
            f.write(f"{k},{side_value(k)}\n")


class Events:
    """The generator's files, opened once in an in-memory DuckDB."""

    def __init__(self, files):
        import duckdb
        self.files = Path(files)
        self.db = duckdb.connect(":memory:")
        self.db.execute("SET TimeZone = 'UTC'")
        for kind, cols in _TABLES.items():
            spec = ", ".join(f"'{c.split()[0]}': '{c.split()[1]}'" for c in cols.split(", "))
            path = str(self.files / f"{kind}.jsonl").replace("'", "''")
            self.db.execute(f"CREATE TABLE {kind} AS SELECT * FROM read_json('{path}', "
                            f"format = 'newline_delimited', columns = {{{spec}}}, "
                            f"timestampformat = '%Y-%m-%d %H:%M:%S.%g')")
        self.db.execute(f"CREATE TABLE side_input AS SELECT range AS key, 'value-' || range AS value "
                        f"FROM range({SIDE_INPUT_ROWS})")

    def __getitem__(self, kind):
        """The events of one kind as the generator wrote them (dicts), with
        date_time as epoch milliseconds."""
        rows = []
        with open(self.files / f"{kind}.jsonl") as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    r["date_time"] = ts_ms(r["date_time"])
                    rows.append(r)
        return rows

    def run(self, query, watermark_ms=None):
        """(column kinds, rows) of the query's reference text; kinds are
        'ts', 'double' or 'value'."""
        wm = watermark_ms if watermark_ms is not None else 2 ** 62
        sql = REFERENCE_SQL[query].replace("${WM}", str(int(wm)))
        cur = self.db.execute(sql)
        kinds = []
        for _name, typ, *_ in cur.description:
            t = str(typ).upper()
            kinds.append("ts" if t.startswith("TIMESTAMP") else
                         "double" if t in ("DOUBLE", "FLOAT") or t.startswith("DECIMAL") else
                         "value")
        rows = [tuple(_norm(k, v) for k, v in zip(kinds, r)) for r in cur.fetchall()]
        return kinds, rows


def load_events(files):
    return Events(files)


def _norm(kind, v):
    if v is None:
        return None
    if kind == "ts":
        return ts_ms(v)
    if kind == "double":
        return float(v)
    return v


def expected(query, ev, watermark_ms=None):
    """The expected rows: a list of tuples in select-list order (for update
    flows: a dict group key -> row)."""
    _kinds, rows = ev.run(query, watermark_ms)
    out = OUTPUT[query]
    if isinstance(out, tuple):
        return {tuple(r[i] for i in out[1]): r for r in rows}
    return rows


def actual_row(kinds, r):
    """One sink record (a JSON object, columns in select-list order) as the
    tuple the reference makes."""
    vals = list(r.values())
    if len(vals) != len(kinds):
        raise ValueError(f"{len(vals)} columns, expected {len(kinds)}: {r}")
    return tuple(_norm(k, v) for k, v in zip(kinds, vals))


def _split(kinds, row):
    """A row as (exact part, doubles): the exact part is a multiset key."""
    exact = tuple(v for k, v in zip(kinds, row) if k != "double")
    dbl = tuple(v for k, v in zip(kinds, row) if k == "double")
    return exact, dbl


def _close(a, b):
    return all((x is None and y is None) or
               (x is not None and y is not None and
                math.isclose(x, y, rel_tol=REL_TOL, abs_tol=1e-12)) for x, y in zip(a, b))


def _sort_key(d):
    return tuple((x is None, x or 0.0) for x in d)


def multiset_diff(kinds, want, got):
    """(missing, unexpected) rows of two multisets of rows, doubles matched
    with a relative tolerance."""
    groups = collections.defaultdict(lambda: ([], []))
    for r in want:
        e, d = _split(kinds, r)
        groups[e][0].append((d, r))
    for r in got:
        e, d = _split(kinds, r)
        groups[e][1].append((d, r))
    missing, extra = [], []
    for w, g in groups.values():
        w.sort(key=lambda x: _sort_key(x[0]))
        g.sort(key=lambda x: _sort_key(x[0]))
        i = j = 0
        while i < len(w) and j < len(g):
            if _close(w[i][0], g[j][0]):
                i += 1
                j += 1
            elif _sort_key(w[i][0]) < _sort_key(g[j][0]):
                missing.append(w[i][1])
                i += 1
            else:
                extra.append(g[j][1])
                j += 1
        missing += [x[1] for x in w[i:]]
        extra += [x[1] for x in g[j:]]
    return missing, extra


def _debezium(kinds, records):
    """The table a debezium-json changelog leaves: rows with a positive count."""
    table = collections.Counter()
    for rec in records:
        rec = rec.get("payload", rec) if isinstance(rec, dict) else rec
        op = rec.get("op")
        before, after = rec.get("before"), rec.get("after")
        if op in ("c", "r"):
            table[actual_row(kinds, after)] += 1
        elif op == "u":
            if before is not None:
                table[actual_row(kinds, before)] -= 1
            table[actual_row(kinds, after)] += 1
        elif op == "d":
            table[actual_row(kinds, before)] -= 1
        else:
            raise ValueError(f"unknown debezium op {op!r}: {rec}")
    negative = [r for r, n in table.items() if n < 0]
    if negative:
        raise ValueError(f"{len(negative)} rows deleted more often than inserted, "
                         f"e.g. {negative[0]}")
    return [r for r, n in table.items() for _ in range(n)]


def compare(query, ev, records, watermark_ms=None):
    """Compares the sink records (dicts, in the order read; for update flows
    the order within a key must be the write order) with the reference.
    Returns (ok, message)."""
    kinds, exp = ev.run(query, watermark_ms)
    out = OUTPUT[query]
    try:
        if out == "debezium":
            rows = _debezium(kinds, records)
            what = f"{len(records)} changes leave {len(rows)} rows"
        else:
            rows = [actual_row(kinds, r) for r in records]
            what = f"{len(rows)} received"
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        return False, f"unreadable output: {e}"
    if isinstance(out, tuple):
        keys = out[1]
        latest = {}
        for row in rows:
            latest[tuple(row[i] for i in keys)] = row
        want = {tuple(r[i] for i in keys): r for r in exp}
        missing = [k for k in want if k not in latest]
        extra = [k for k in latest if k not in want]
        wrong = [k for k in want if k in latest and (multiset_diff(kinds, [want[k]],
                                                                   [latest[k]]) != ([], []))]
        ok = not (missing or extra or wrong)
        msg = (f"{len(want)} keys expected, {len(latest)} keys in {len(rows)} updates; "
               f"missing {len(missing)}, unexpected {len(extra)}, wrong final value {len(wrong)}")
        if wrong:
            k = wrong[0]
            msg += f"; e.g. {k}: got {latest[k]}, expected {want[k]}"
        elif missing:
            msg += f"; e.g. missing {want[missing[0]]}"
        elif extra:
            msg += f"; e.g. unexpected {latest[extra[0]]}"
        return ok, msg
    missing, extra = multiset_diff(kinds, exp, rows)
    ok = not missing and not extra
    msg = (f"{len(exp)} rows expected, {what}; "
           f"missing {len(missing)}, unexpected {len(extra)}")
    if missing:
        msg += f"; e.g. missing {missing[0]}"
    if extra:
        msg += f"; e.g. unexpected {extra[0]}"
    return ok, msg


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("command", choices=["expected", "compare"])
    ap.add_argument("--files", required=True)
    ap.add_argument("--query", required=True, choices=QUERIES)
    ap.add_argument("--output", help="the sink's records, JSON lines, in the order read")
    ap.add_argument("--watermark", help="the final watermark (ISO text or epoch ms)")
    a = ap.parse_args()
    ev = load_events(a.files)
    wm = None
    if a.watermark:
        wm = int(a.watermark) if a.watermark.isdigit() else ts_ms(a.watermark)
    if a.command == "expected":
        exp = expected(a.query, ev, wm)
        for row in (exp.values() if isinstance(exp, dict) else exp):
            print(json.dumps(row))
        return 0
    if not a.output:
        ap.error("compare needs --output")
    with open(a.output) as f:
        records = [json.loads(line) for line in f if line.strip()]
    ok, msg = compare(a.query, ev, records, wm)
    print(f"{a.query}: {'PASS' if ok else 'FAIL'}: {msg}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
