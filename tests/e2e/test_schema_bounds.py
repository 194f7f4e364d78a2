"""Schema texts past rtsql's depth bound, from a hostile schema registry written
here (127.0.0.1, the registry's Confluent-compatible API, nothing else): a
.proto and an Avro schema nested 20,000 deep, which would overflow the stack of
the parsers. The latest schema of a subject so nested fails CREATE SOURCE with
22023 and the server goes on answering; a record whose id names such a schema
is a decode error of that record under the source's 'on.error', and the server
neither crashes then nor when it restarts onto the same records."""

import json
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import psycopg
import pytest

from conftest import Server, unique

DEPTH = 20000

PROTO_GOOD = 'syntax = "proto3";\nmessage M { int64 id = 1; }\n'
PROTO_DEEP = ('syntax = "proto3";\n' + "".join(f"message M{i} {{\n" for i in range(DEPTH)) +
              "int64 id = 1;\n" + "}\n" * DEPTH)
AVRO_GOOD = json.dumps({"type": "record", "name": "M", "fields": [{"name": "id", "type": "long"}]})
AVRO_DEEP = ("".join(f'{{"type": "record", "name": "R{i}", "fields": [{{"name": "id", "type": '
                     for i in range(DEPTH)) + '"long"' + "}]}" * DEPTH)

GOOD_ID, DEEP_ID = 1, 2


class FakeRegistry:
    """Answers /schemas/ids/<id> and /subjects/<subject>/versions/latest from
    SCHEMAS ({id: (schemaType, text)}) and LATEST ({subject: id}); 404 else."""

    def __init__(self, schemas, latest):
        registry = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                parts = self.path.strip("/").split("/")
                found = None
                if len(parts) == 3 and parts[:2] == ["schemas", "ids"] and parts[2].isdigit():
                    found = int(parts[2])
                elif len(parts) == 4 and parts[0] == "subjects" and parts[2:] == ["versions", "latest"]:
                    found = registry.latest.get(parts[1])
                if found not in registry.schemas:
                    body, status = b'{"error_code": 40403, "message": "not found"}', 404
                else:
                    kind, text = registry.schemas[found]
                    body = json.dumps({"subject": "s", "version": 1, "id": found,
                                       "schemaType": kind, "schema": text}).encode()
                    status = 200
                self.send_response(status)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.schemas, self.latest = schemas, latest
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def framed(fmt, schema_id, ident):
    """A Confluent-framed record of message M / record M with id IDENT."""
    head = b"\0" + struct.pack(">I", schema_id)
    if fmt == "protobuf":
        return head + b"\0" + b"\x08" + varint(ident)  # message indexes [0], field 1 varint
    return head + varint(ident << 1)  # an Avro long, zigzag (ident >= 0)


@pytest.mark.parametrize("fmt", ["protobuf", "avro"])
def test_a_nested_latest_schema_fails_create_source(server, fmt):
    topic = unique("sb_topic")
    kind = "PROTOBUF" if fmt == "protobuf" else "AVRO"
    registry = FakeRegistry({DEEP_ID: (kind, PROTO_DEEP if fmt == "protobuf" else AVRO_DEEP)},
                            {f"{topic}-value": DEEP_ID})
    try:
        with pytest.raises(psycopg.Error) as e:
            server.query(f"""CREATE SOURCE {unique('sb_s')} WITH (connector = 'kafka',
                'kafka.bootstrap.servers' = 'embedded', subscribe = '{topic}', format = '{fmt}',
                'schema.registry.url' = '{registry.url}')""")
        assert e.value.sqlstate == "22023", e.value
        assert "nests more than 256 levels deep" in str(e.value), e.value
        assert server.query("SELECT 1") == [(1,)]
    finally:
        registry.close()


@pytest.mark.parametrize("fmt", ["protobuf", "avro"])
def test_a_record_naming_a_nested_schema_is_a_decode_error(broker, tmp_path, fmt):
    topic, out = unique("sb_in"), unique("sb_out")
    src, snk, flow = unique("sb_src"), unique("sb_snk"), unique("sb_f")
    good, deep = (PROTO_GOOD, PROTO_DEEP) if fmt == "protobuf" else (AVRO_GOOD, AVRO_DEEP)
    kind = "PROTOBUF" if fmt == "protobuf" else "AVRO"
    registry = FakeRegistry({GOOD_ID: (kind, good), DEEP_ID: (kind, deep)}, {})
    server = Server(tmp_path)
    server.start()
    try:
        broker.create_topic(topic)
        broker.produce(topic, [framed(fmt, GOOD_ID, 1), framed(fmt, DEEP_ID, 2),
                               framed(fmt, GOOD_ID, 3)], partition=0)
        server.run_script(
            f"CREATE SOURCE {src} (id BIGINT) WITH (connector = 'kafka', "
            f"'kafka.bootstrap.servers' = '{broker.sql_bootstrap}', subscribe = '{topic}', "
            f"startingOffsets = 'earliest', format = '{fmt}', "
            f"'schema.registry.url' = '{registry.url}', 'on.error' = 'skip');\n"
            f"CREATE SINK {snk} WITH (connector = 'kafka', "
            f"'kafka.bootstrap.servers' = '{broker.sql_bootstrap}', topic = '{out}', "
            f"format = 'json');\n"
            f"CREATE FLOW {flow} INTO {snk} AS SELECT id FROM {src};\n")
        rows = broker.consume_json(out, n=2, timeout=60, grace=0.5)
        assert sorted(r["id"] for r in rows) == [1, 3], rows
        prog = server.wait_progress(flow, lambda p: p["sources"][0]["numDecodeErrors"] == 1, 30)
        assert prog["sources"][0]["numDecodeErrors"] == 1, prog

        # A restart reads on from the flow's checkpoint: no crash, and a record
        # written since arrives.
        assert server.stop() == 0, server.log_tail()
        server.start()
        broker.produce(topic, [framed(fmt, DEEP_ID, 4), framed(fmt, GOOD_ID, 5)], partition=0)
        ids = set()
        deadline = time.monotonic() + 60
        while 5 not in ids and time.monotonic() < deadline:
            ids = {r["id"] for r in broker.consume_json(out, timeout=5)}
        assert ids == {1, 3, 5}, (ids, server.log_tail())
        state = [r for r in server.query("SHOW FLOWS") if r[0] == flow]
        assert state and state[0][2] == "running", state
    finally:
        server.stop()
        registry.close()
