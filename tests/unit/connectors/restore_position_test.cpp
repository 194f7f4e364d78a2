// The decisions on a restored source position the log no longer holds
// (connectors/restore_position.h): Kafka offsets against the log's range and
// cluster, Kinesis sequence numbers against the oldest record held, and the
// 'failOnDataLoss' option.
#include <doctest/doctest.h>

#include "common/error.h"
#include "connector_test_util.h"
#include "connectors/restore_position.h"
#include "tests/unit/sql_error_of.h"

using namespace rtsql;
using testing::sqlErrorOf;

namespace {

RestoreSubject clicks() { return {"KafkaV2[Subscribe[clicks]]", "f", "clicks", "3"}; }

}  // namespace

TEST_CASE("a restored offset inside the log, its end included, goes on where it was") {
  for (int64_t restored : {0, 5, 10}) {
    RestoredOffset r = checkRestoredOffset(clicks(), restored, 0, 10, true);
    CHECK(r.offset == restored);
    CHECK(r.skipped == 0);
    CHECK_FALSE(r.lost);
  }
  // An empty log that never held anything: offset 0 is its end.
  CHECK(checkRestoredOffset(clicks(), 0, 0, 0, true).offset == 0);
}

TEST_CASE("a restored offset beyond the log's end fails naming topic, partition, offset, range") {
  SqlError e = sqlErrorOf([] { checkRestoredOffset(clicks(), 8000, 0, 120, true); });
  CHECK(e.sqlstate() == sqlstate::kDataCorrupted);
  const std::string m = e.what();
  CHECK(m.find("KafkaV2[Subscribe[clicks]]") != std::string::npos);
  CHECK(m.find("offset 8000") != std::string::npos);
  CHECK(m.find("topic \"clicks\" partition 3") != std::string::npos);
  CHECK(m.find("[0, 120)") != std::string::npos);
  CHECK(e.hint().find("'failOnDataLoss' = 'false'") != std::string::npos);
  CHECK(e.hint().find("START FLOW f RESET STATE") != std::string::npos);
}

TEST_CASE("a restored offset below the log's start fails: retention removed the records") {
  SqlError e = sqlErrorOf([] { checkRestoredOffset(clicks(), 3, 50, 120, true); });
  CHECK(e.sqlstate() == sqlstate::kDataCorrupted);
  CHECK(std::string(e.what()).find("removed 47 records") != std::string::npos);
}

TEST_CASE("with failOnDataLoss false a lost offset goes on from the log's start, the gap counted") {
  RestoredOffset above = checkRestoredOffset(clicks(), 8000, 0, 120, false);
  CHECK(above.lost);
  CHECK(above.offset == 0);
  CHECK(above.skipped == 8000 - 120);
  RestoredOffset below = checkRestoredOffset(clicks(), 3, 50, 120, false);
  CHECK(below.lost);
  CHECK(below.offset == 50);
  CHECK(below.skipped == 47);
}

TEST_CASE("an offset checkpointed on another cluster is lost even inside the log's range") {
  SqlError e = sqlErrorOf([] {
    checkRestoredOffset(clicks(), 5, 0, 120, true, "cluster id B, where the checkpoint's is A");
  });
  CHECK(e.sqlstate() == sqlstate::kDataCorrupted);
  CHECK(std::string(e.what()).find("another Kafka cluster") != std::string::npos);
  CHECK(std::string(e.what()).find("checkpoint's is A") != std::string::npos);
  RestoredOffset r = checkRestoredOffset(clicks(), 5, 2, 120, false, "cluster id B");
  CHECK(r.lost);
  CHECK(r.offset == 2);
  CHECK(r.skipped == 0);
}

TEST_CASE("'failOnDataLoss' is true unless set false, and must be a boolean") {
  CHECK(failOnDataLoss(testing::opts({})));
  CHECK_FALSE(failOnDataLoss(testing::opts({{"failOnDataLoss", "false"}})));
  CHECK(failOnDataLoss(testing::opts({{"failOnDataLoss", "true"}})));
  CHECK(sqlErrorOf([] { failOnDataLoss(testing::opts({{"failOnDataLoss", "sometimes"}})); })
            .sqlstate() == sqlstate::kInvalidParameterValue);
}

TEST_CASE("a Kinesis sequence number expired when the oldest record held comes after it") {
  // 128-bit decimal numbers: compared as numbers, not as text.
  const std::string a = "49680894121684270604126331314373509625503557066011181058";
  const std::string b = "49680894121684270604126331314374718551323171695185887234";
  CHECK(sequenceExpired(a, b));
  CHECK_FALSE(sequenceExpired(b, a));
  CHECK_FALSE(sequenceExpired(a, a));  // the checkpointed record itself is still held
  CHECK(sequenceExpired("99", "100"));
  CHECK_FALSE(sequenceExpired("100", "99"));
  CHECK(sequenceExpired("0099", "100"));  // leading zeros say nothing
  CHECK_FALSE(sequenceExpired(a, ""));       // the shard holds nothing: nothing to tell
  CHECK_FALSE(sequenceExpired("x1", "100"));  // not a number: nothing to tell
}

TEST_CASE("a lost Kinesis position fails naming stream, shard and sequence number, or is said") {
  RestoreSubject at{"KinesisSource[s]", "f", "s", "shardId-000000000001"};
  SqlError e = sqlErrorOf([&] { restoredSequenceLost(at, "4968", "has expired", true); });
  CHECK(e.sqlstate() == sqlstate::kDataCorrupted);
  CHECK(std::string(e.what()).find("sequence number 4968 of Kinesis stream \"s\" shard "
                                   "shardId-000000000001 has expired") != std::string::npos);
  CHECK(e.hint().find("'failOnDataLoss' = 'false'") != std::string::npos);
  restoredSequenceLost(at, "4968", "has expired", false);  // said in the log, no throw
}
