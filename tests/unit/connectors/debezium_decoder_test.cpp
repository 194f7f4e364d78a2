// The debezium-json decoder: each op's rows and kinds, the schema wrapper,
// metadata columns, tombstones, the errors of events it cannot read, and a
// Kafka source's records of an update.
#include <doctest/doctest.h>

#include <string>

#include "common/schema.h"
#include "connector_test_util.h"
#include "connectors/format/codec.h"
#include "connectors/kafka/decode.h"

using namespace rtsql;

namespace {

using testing::opts;
using testing::t;

Schema accounts() {
  Schema s;
  s.columns.push_back({"id", t(TypeId::BigInt), false});
  s.columns.push_back({"owner", t(TypeId::String), false});
  s.columns.push_back({kMetaOffset, t(TypeId::BigInt), true});
  return s;
}

struct Change {
  RowKind kind;
  int64_t id;
  std::string owner;
  int64_t offset;
};

// Decodes `value` (null: a tombstone) at offset 7; false and `error` on failure.
bool decode(RecordDecoder& d, const char* value, std::vector<Change>& out, std::string& error) {
  std::string text = value ? value : "";
  RecordView v;
  v.value = value ? text.data() : nullptr;
  v.valueLen = text.size();
  v.offset = 7;
  Row row;
  out.clear();
  if (!d.decode(v, row, error)) return false;
  auto add = [&](const Row& r, RowKind kind) {
    out.push_back({kind, r[0].asInt(), std::string(r[1].asString()), r[2].asInt()});
  };
  if (d.changeRows() >= 1) add(row, d.changeKind(0));
  if (d.changeRows() == 2) {
    Row second;
    d.secondRow(second);
    add(second, d.changeKind(1));
  }
  return true;
}

}  // namespace

TEST_CASE("debezium-json: each op gives its rows and kinds") {
  auto d = makeDecoder("debezium-json", accounts(), opts({}));
  std::vector<Change> out;
  std::string error;

  REQUIRE(decode(*d, R"({"before":null,"after":{"id":1,"owner":"a"},"op":"c"})", out, error));
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == RowKind::Insert);
  CHECK(out[0].id == 1);
  CHECK(out[0].owner == "a");
  CHECK(out[0].offset == 7);

  REQUIRE(decode(*d, R"({"after":{"id":2,"owner":"b"},"op":"r"})", out, error));
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == RowKind::Insert);
  CHECK(out[0].id == 2);

  REQUIRE(decode(*d, R"({"op":"u","before":{"id":1,"owner":"a"},"after":{"id":1,"owner":"z"}})",
                 out, error));
  REQUIRE(out.size() == 2);
  CHECK(out[0].kind == RowKind::UpdateBefore);
  CHECK(out[0].owner == "a");
  CHECK(out[1].kind == RowKind::UpdateAfter);
  CHECK(out[1].owner == "z");
  CHECK(out[1].offset == 7);

  REQUIRE(decode(*d, R"({"before":{"id":1,"owner":"z"},"after":null,"op":"d","ts_ms":5})", out,
                 error));
  REQUIRE(out.size() == 1);
  CHECK(out[0].kind == RowKind::Delete);
  CHECK(out[0].owner == "z");

  // The tombstone after a delete: no row, no error.
  REQUIRE(decode(*d, nullptr, out, error));
  CHECK(out.empty());
  CHECK(d->changeRows() == 0);
}

TEST_CASE("debezium-json: the schema wrapper is read through its payload") {
  auto d = makeDecoder("debezium-json", accounts(), opts({}));
  std::vector<Change> out;
  std::string error;
  REQUIRE(decode(*d,
                 R"({"schema":{"type":"struct","fields":[]},"payload":{"before":null,)"
                 R"("after":{"owner":"q","id":9},"op":"c","source":{"db":"x"}}})",
                 out, error));
  REQUIRE(out.size() == 1);
  CHECK(out[0].id == 9);
  CHECK(out[0].owner == "q");
}

TEST_CASE("debezium-json: events it cannot read are errors naming why") {
  auto d = makeDecoder("debezium-json", accounts(), opts({}));
  std::vector<Change> out;
  auto fails = [&](const char* value) {
    std::string error;
    CHECK_FALSE(decode(*d, value, out, error));
    return error;
  };
  CHECK(fails(R"({"after":{"id":1},"op":"u"})").find("REPLICA IDENTITY FULL") != std::string::npos);
  CHECK(fails(R"({"before":null,"after":null,"op":"d"})") ==
        "op 'd' has no 'before' row: the captured table must log its old rows (PostgreSQL: "
        "REPLICA IDENTITY FULL)");
  CHECK(fails(R"({"after":null,"op":"c"})") == "op 'c' has no 'after' row");
  CHECK(fails(R"({"op":"t"})").find("truncate") != std::string::npos);
  CHECK(fails(R"({"after":{"id":1},"op":"x"})") == "unknown op 'x' (expected c, r, u or d)");
  CHECK(fails(R"({"after":{"id":1}})") == "not a Debezium change event: no 'op' field");
  CHECK(fails(R"([1,2])") == "not a Debezium change event: expected a JSON object");
  CHECK(fails(R"({"after":[1],"op":"c"})") == "field 'after' is not an object or null");
  CHECK(fails(R"({"after":{"id":"abc"},"op":"c"})") ==
        "'after': field 'id': expected BIGINT, got \"abc\"");
  CHECK(fails(R"({"op":7})") == "field 'op' is not a string");
}

TEST_CASE("debezium-json through a Kafka source's decoder: an update is two records") {
  ScanSpec scan;
  scan.format = "debezium-json";
  scan.schema = accounts();
  scan.options = opts({});
  kafka::SourceDecoder d(scan);
  std::vector<SourceRecord> out;
  // Two updates in a row: the second reuses what the first left in the decoder.
  const std::string updates[] = {
      R"({"before":{"id":1,"owner":"a"},"after":{"id":1,"owner":"b"},"op":"u"})",
      R"({"before":{"id":2,"owner":"c"},"after":{"id":2,"owner":"d"},"op":"u"})"};
  for (int i = 0; i < 2; ++i) {
    RecordView v;
    v.value = updates[i].data();
    v.valueLen = updates[i].size();
    v.partition = 3;
    v.offset = 40 + i;
    v.timestampMicros = 1000 + i;
    REQUIRE(d.decode(v, 2000 + i, out));
  }
  REQUIRE(out.size() == 4);
  const RowKind kinds[] = {RowKind::UpdateBefore, RowKind::UpdateAfter, RowKind::UpdateBefore,
                           RowKind::UpdateAfter};
  const char* owners[] = {"a", "b", "c", "d"};
  for (size_t i = 0; i < out.size(); ++i) {
    const SourceRecord& r = out[i];
    const int64_t n = static_cast<int64_t>(i / 2);  // which update
    CHECK(r.kind == kinds[i]);
    REQUIRE(r.row.size() == 3);
    CHECK(r.row[0].asInt() == n + 1);
    CHECK(r.row[1].asString() == owners[i]);
    CHECK(r.row[2].asInt() == 40 + n);  // the offset column of each row
    CHECK(r.partition == 3);
    CHECK(r.offset == 40 + n);
    CHECK(r.timestampMicros == 1000 + n);
    CHECK(r.readMicros == 2000 + n);
  }
}
