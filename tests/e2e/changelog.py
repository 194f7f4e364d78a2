"""Applying the changes a flow wrote to a table, for tests that compare a
flow's final result with a batch reference (DuckDB).

A flow whose query updates or retracts rows writes a changelog rather than
rows (docs/connectors.md, "Sink modes"). These functions replay one, in the
order a consumer reads it, and return what it leaves:

- apply_debezium(values) -> collections.Counter of rows: the multiset a
  format = 'debezium-json' sink's records leave. op "c" adds `after`, "u" takes
  `before` out (when it is not null) and adds `after`, "d" takes `before` out.
- apply_debezium_by_key(values, key) -> {key tuple: row dict}: the same as a
  table keyed by the flow's unique key, stricter: "c" of a key already there,
  or "u"/"d" whose `before` is not the row held under its key, raise.
- apply_upsert(records) -> {key: row dict}: a 'mode' = 'upsert' topic as a
  table: each record's value replaces its key's row, a tombstone (value None)
  removes it.
- rows_multiset(rows, columns) -> Counter of tuples over COLUMNS, the form
  to compare with (e.g. DuckDB's fetchall()); row_tuple(row, columns) for one.

Every function takes values as dicts, JSON text or bytes; apply_upsert takes
(key, value) pairs or confluent_kafka Messages. Any inconsistency (a row
removed that is not there, an unknown op) raises ChangelogError, so that a
wrong changelog fails the test instead of yielding a plausible table.
Records of one key must come in the order the sink wrote them: read each
partition in order (rtsql writes a key's changes to one partition).
"""

import json
import time
from collections import Counter


class ChangelogError(AssertionError):
    """A changelog that does not apply: the flow wrote something inconsistent."""


def _json(value):
    if value is None or isinstance(value, dict):
        return value
    if isinstance(value, (bytes, bytearray)):
        value = value.decode()
    return json.loads(value)


def _freeze(v):
    """A JSON value as something hashable (lists and objects inside rows)."""
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    return v


def row_tuple(row, columns):
    """ROW (a dict) as a tuple of its COLUMNS' values."""
    return tuple(_freeze(row.get(c)) for c in columns)


def rows_multiset(rows, columns):
    """A Counter of ROWS (dicts or tuples already in COLUMNS order)."""
    return Counter(r if isinstance(r, tuple) else row_tuple(r, columns) for r in rows)


def _row_key(row):
    return tuple(sorted((k, _freeze(v)) for k, v in row.items()))


def apply_debezium(values):
    """The multiset of rows debezium-json VALUES leave, as a Counter of rows,
    each row a tuple of (column, value) pairs sorted by column: turn it into
    dicts with dict(row). Tombstones (None) are skipped."""
    rows = Counter()

    def remove(before, i):
        k = _row_key(before)
        if rows[k] <= 0:
            raise ChangelogError(f"change {i} removes a row that is not there: {before}")
        rows[k] -= 1
        if rows[k] == 0:
            del rows[k]

    for i, value in enumerate(values):
        change = _json(value)
        if change is None:
            continue
        op, before, after = change.get("op"), change.get("before"), change.get("after")
        if op == "c":
            if after is None or before is not None:
                raise ChangelogError(f"change {i}: op c needs an after and no before: {change}")
            rows[_row_key(after)] += 1
        elif op == "u":
            if after is None:
                raise ChangelogError(f"change {i}: op u without an after: {change}")
            if before is not None:
                remove(before, i)
            rows[_row_key(after)] += 1
        elif op == "d":
            if before is None or after is not None:
                raise ChangelogError(f"change {i}: op d needs a before and no after: {change}")
            remove(before, i)
        else:
            raise ChangelogError(f"change {i}: unknown op {op!r}: {change}")
    return rows


def apply_debezium_by_key(values, key):
    """debezium-json VALUES applied to a table keyed by the columns KEY (a
    list of names): {key tuple: row dict}."""
    table = {}
    for i, value in enumerate(values):
        change = _json(value)
        if change is None:
            continue
        op, before, after = change.get("op"), change.get("before"), change.get("after")
        if op not in ("c", "u", "d"):
            raise ChangelogError(f"change {i}: unknown op {op!r}: {change}")
        if before is not None:
            k = row_tuple(before, key)
            if table.get(k) != before:
                raise ChangelogError(
                    f"change {i}: before {before} is not the row held under {k}: {table.get(k)}")
            del table[k]
        elif op == "d":
            raise ChangelogError(f"change {i}: op d without a before: {change}")
        if after is not None:
            k = row_tuple(after, key)
            if op == "c" and k in table:
                raise ChangelogError(f"change {i}: op c of key {k}, which is already there")
            if op == "d":
                raise ChangelogError(f"change {i}: op d with an after: {change}")
            table[k] = after
        elif op != "d":
            raise ChangelogError(f"change {i}: op {op} without an after: {change}")
    return table


def _key_value(record):
    if hasattr(record, "value") and callable(record.value):
        return record.key(), record.value()
    return record


def apply_upsert(records):
    """An upsert topic's RECORDS applied to a table: {key (str, or None for a
    keyless record): row dict}."""
    table = {}
    for record in records:
        key, value = _key_value(record)
        if isinstance(key, (bytes, bytearray)):
            key = key.decode()
        if value is None:
            table.pop(key, None)  # a tombstone; deleting twice is harmless
        else:
            table[key] = _json(value)
    return table


def wait_for_debezium(server, kafka, flow, topic, want, convert, timeout):
    """Reads the debezium-json TOPIC that FLOW writes, from the start, until
    CONVERT(apply_debezium(records)) equals WANT or TIMEOUT seconds pass (the
    flow's sink count says how many records to wait for). Returns (got,
    records, error, progress): error is the ChangelogError of the last read
    when its records did not apply, progress the flow's last SHOW PROGRESS."""
    deadline = time.monotonic() + timeout
    got, records, error, progress = None, [], None, None
    while time.monotonic() < deadline:
        progress = server.progress(flow)
        n_out = progress.get("sink", {}).get("numOutputRows")
        left = max(1.0, deadline - time.monotonic())
        if n_out:
            records = kafka.consume_json(topic, n=n_out, timeout=min(10.0, left), grace=0.3)
        else:
            records = [json.loads(m.value()) for m in kafka.consume_to_end(topic, timeout=min(2.0, left))]
        try:
            got = convert(apply_debezium(records))
            error = None
        except ChangelogError as e:
            error = e
            got = None
        if got == want:
            break
        time.sleep(0.5)
    return got, records, error, progress


def debezium_net_rows(records, columns):
    """The rows decoded debezium-json records leave behind, as a Counter of
    tuples of `columns`: each `after` adds its row, each `before` takes one
    away, in any order (records of several output partitions, read one
    partition after another, may interleave a delete before its insert)."""
    table = Counter()
    for rec in records:
        rec = rec.get("payload", rec)
        if rec.get("before") is not None:
            table[tuple(rec["before"][c] for c in columns)] -= 1
        if rec.get("after") is not None:
            table[tuple(rec["after"][c] for c in columns)] += 1
    return Counter({k: v for k, v in table.items() if v != 0})
