// EncodingSinkWriter (connectors/format/encoding_sink_writer.h): which records
// a sink is handed for rows and changes in each mode, and that the changes an
// encoder holds are delivered before the sink flushes.
#include "connectors/format/encoding_sink_writer.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "common/error.h"
#include "connector_test_util.h"
#include "connectors/format/decoders.h"

using namespace rtsql;
using testing::countsSink;

namespace {

Row row(const std::string& user, int64_t n) {
  return {Value::string(user), Value::bigint(n)};
}

int rowEncodersMade = 0;

std::unique_ptr<RecordEncoder> countingJsonEncoder(const SinkSpec& sink) {
  ++rowEncodersMade;
  return format::makeJsonEncoder(sink);
}

// Records what it is handed, and when it is flushed, in one log.
class Recorder final : public EncodingSinkWriter {
 public:
  explicit Recorder(const SinkSpec& sink) : EncodingSinkWriter(sink, &countingJsonEncoder) {}

  std::vector<std::string> log;

  int64_t deliveryErrors() const override { return 0; }
  std::string description() const override { return "Recorder"; }

 private:
  void deliver(const EncodedRecord& record) override {
    std::string entry = record.hasKey ? record.key + " " : "- ";
    entry += record.hasValue ? record.value : "<tombstone>";
    log.push_back(entry);
  }
  void flushRecords(int timeoutMs) override { log.push_back("flush " + std::to_string(timeoutMs)); }
};

}  // namespace

TEST_CASE("an append-only sink: a row is one record of its row encoder") {
  rowEncodersMade = 0;
  Recorder w(countsSink("json"));
  CHECK(rowEncodersMade == 1);
  w.write(row("a", 1), 0);
  // Not a change sink: the latest row of a key, as SinkWriter's default does.
  w.writeChange(row("a", 1), 0, RowKind::UpdateBefore);
  w.writeChange(row("a", 2), 0, RowKind::UpdateAfter);
  w.endOfChanges();
  w.flush(7);
  CHECK(w.log ==
        std::vector<std::string>{R"(a {"user":"a","n":1})", R"(a {"user":"a","n":2})", "flush 7"});
  CHECK_THROWS_AS(w.writeChange(row("a", 2), 0, RowKind::Delete), InternalError);
}

TEST_CASE("a debezium-json sink: every row and change through the change encoder") {
  rowEncodersMade = 0;
  Recorder w(countsSink("debezium-json"));
  CHECK(rowEncodersMade == 0);  // no row encoder knows debezium-json
  w.write(row("a", 1), 0);
  w.writeChange(row("a", 1), 0, RowKind::UpdateBefore);
  w.writeChange(row("a", 2), 0, RowKind::UpdateAfter);
  w.writeChange(row("b", 3), 0, RowKind::UpdateBefore);
  CHECK(w.log.size() == 2);  // b's old row waits for its new one
  w.endOfChanges();          // the batch ends: b's old row is a delete
  w.writeChange(row("a", 2), 0, RowKind::Delete);
  CHECK(w.log == std::vector<std::string>{
                     R"(a {"before":null,"after":{"user":"a","n":1},"op":"c"})",
                     R"(a {"before":{"user":"a","n":1},"after":{"user":"a","n":2},"op":"u"})",
                     R"(b {"before":{"user":"b","n":3},"after":null,"op":"d"})",
                     R"(a {"before":{"user":"a","n":2},"after":null,"op":"d"})"});
}

TEST_CASE("a held change is delivered before the sink flushes") {
  Recorder w(countsSink("debezium-json"));
  w.writeChange(row("b", 3), 0, RowKind::UpdateBefore);
  w.flush(5);
  CHECK(w.log == std::vector<std::string>{
                     R"(b {"before":{"user":"b","n":3},"after":null,"op":"d"})", "flush 5"});
}

TEST_CASE("an upsert sink: the new row under its key, a delete a tombstone") {
  rowEncodersMade = 0;
  Recorder w(countsSink("json", {{"mode", "upsert"}}));
  CHECK(rowEncodersMade == 0);
  w.write(row("a", 1), 0);
  w.writeChange(row("a", 1), 0, RowKind::UpdateBefore);
  w.writeChange(row("a", 2), 0, RowKind::UpdateAfter);
  w.writeChange(row("a", 2), 0, RowKind::Delete);
  w.flush(1);
  CHECK(w.log == std::vector<std::string>{R"(a {"user":"a","n":1})", R"(a {"user":"a","n":2})",
                                          "a <tombstone>", "flush 1"});
}
