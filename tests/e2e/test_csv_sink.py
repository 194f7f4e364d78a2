"""csv sinks end to end: rows with awkward strings (delimiters, quotes, line
breaks, the empty string, NULL) written by a Kafka csv sink and by a file csv
sink with a header, each parsed by Python's csv module and compared with the
rows produced; and the Kafka sink's lines read back by a csv source into the
same rows, NULL and the empty string kept apart."""

import csv
import io
import time

from conftest import unique

NOTES = ["plain", "a, b", 'say "hi"', "two\nlines", "semi;colon", "", None, " padded ",
         "cr\rhere", "tab\there"]


def rows():
    out = []
    for i in range(40):
        out.append({"id": i, "note": NOTES[i % len(NOTES)],
                    "amount": None if i % 7 == 3 else i * 0.25 - 3,
                    "ok": None if i % 11 == 5 else i % 2 == 0})
    return out


def as_text(r):
    """The row as csv text fields, as Python's csv module reads them back
    (NULL and the empty string both read as '')."""
    def text(v):
        if v is None:
            return ""
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v)
    return [text(r["id"]), text(r["note"]), r["amount"], text(r["ok"])]


def parsed(fields):
    amount = float(fields[2]) if fields[2] != "" else None
    return [fields[0], fields[1], amount, fields[3]]


def test_csv_sinks_write_what_python_csv_reads(server, kafka, tmp_path):
    topic, out, back = unique("csvs_in"), unique("csvs_out"), unique("csvs_back")
    path = tmp_path / "out.csv"
    src, ksnk, fsnk = unique("csvs_src"), unique("csvs_k"), unique("csvs_f")
    kflow, fflow = unique("csvs_kf"), unique("csvs_ff")
    csv_src, json_snk, back_flow = unique("csvs_csrc"), unique("csvs_j"), unique("csvs_bf")
    kafka.create_topic(topic)
    want = rows()
    kafka.produce(topic, want)
    columns = "id BIGINT, note STRING, amount DOUBLE, ok BOOLEAN"
    server.run_script(f"""
CREATE SOURCE {src} ({columns}) WITH ({kafka.options()}, subscribe = '{topic}',
    startingOffsets = 'earliest', format = 'json');
CREATE SINK {ksnk} WITH ({kafka.options()}, topic = '{out}', format = 'csv');
CREATE SINK {fsnk} WITH (connector = 'file', path = '{path}', format = 'csv', 'csv.header' = 'true');
CREATE FLOW {kflow} INTO {ksnk} TRIGGER REALTIME AS SELECT id, note, amount, ok FROM {src};
CREATE FLOW {fflow} INTO {fsnk} TRIGGER REALTIME AS SELECT id, note, amount, ok FROM {src};
""")
    expected = sorted(map(as_text, want), key=lambda r: int(r[0]))

    # Kafka: one csv line per record.
    got = kafka.consume(out, n=len(want), timeout=30, grace=1.0)
    lines = [m.value().decode() for m in got]
    assert len(lines) == len(want)
    records = [next(csv.reader(io.StringIO(line, newline=""))) for line in lines]
    assert all(len(r) == 4 for r in records), records
    assert sorted(map(parsed, records), key=lambda r: int(r[0])) == expected
    # The empty string is "", NULL an empty field.
    assert any(line.split(",")[1] == '""' for line in lines)
    assert any(line.split(",")[1] == "" for line in lines)

    # File: the header, then the rows (a quoted field may span lines).
    deadline = time.monotonic() + 30
    records = []
    while time.monotonic() < deadline:
        if path.exists():
            with open(path, newline="") as f:
                records = list(csv.reader(f))
            if len(records) >= len(want) + 1:
                break
        time.sleep(0.2)
    assert records[0] == ["id", "note", "amount", "ok"]
    assert sorted(map(parsed, records[1:]), key=lambda r: int(r[0])) == expected

    # A csv source reads the Kafka lines back into the same rows.
    server.run_script(f"""
CREATE SOURCE {csv_src} ({columns}) WITH ({kafka.options()}, subscribe = '{out}',
    startingOffsets = 'earliest', format = 'csv');
CREATE SINK {json_snk} WITH ({kafka.options()}, topic = '{back}', format = 'json');
CREATE FLOW {back_flow} INTO {json_snk} TRIGGER REALTIME AS SELECT * FROM {csv_src};
""")
    again = kafka.consume_json(back, n=len(want), timeout=30, grace=1.0)
    assert sorted(again, key=lambda r: r["id"]) == want
