// Whether a source may go on from the position it restored (a checkpoint's, or
// the offsets its consumer group committed) when the log it reads may no
// longer hold it: the broker restarted empty or was replaced by another, the
// topic was deleted and created again or truncated, retention removed the
// records, a Kinesis shard's records expired. Going on from wherever the
// client lands then would read records the flow's state already counts, or
// wait below the position for ever, with nothing said. As Spark does, the
// flow fails instead, naming what was lost, unless the source's
// 'failOnDataLoss' = 'false' lets it go on from the earliest record there is,
// with the gap counted in the progress (offsetsSkipped) and said in the log.
//
// The failure is SQLSTATE XX001, which the server does not retry: the flow
// stays failed until START FLOW ... RESET STATE (or DROP FLOW).
//
// Only the decisions live here; the Kafka and Kinesis sources ask their
// services for the facts.
#pragma once

#include <cstdint>
#include <string>

#include "common/error.h"
#include "common/options.h"

namespace rtsql {

inline constexpr const char* kFailOnDataLossOption = "failOnDataLoss";

// The source's 'failOnDataLoss' (true when absent). Throws SqlError 22023 for
// a value that is not a boolean.
bool failOnDataLoss(const Options& options);

// Where one partition of a source was and what was restored.
struct RestoreSubject {
  std::string source;  // the task's description: "KafkaV2[Subscribe[clicks]]"
  std::string flow;    // for the hint
  std::string topic;   // a Kafka topic, or a Kinesis stream
  std::string partition;  // a Kafka partition number, or a Kinesis shard id
};

// What a source goes on from after its restored position was checked.
struct RestoredOffset {
  int64_t offset = -1;  // where to read on
  int64_t skipped = 0;  // the gap, for offsetsSkipped
  bool lost = false;    // the restored position was not usable
};

// A Kafka partition whose log holds offsets [low, high) (high is the next
// offset to be written: `restored` == high has read everything). A restored
// offset below low lost the records [restored, low), counted as skipped; one
// above high belongs to a log that is gone (at least restored - high of its
// offsets were never read here), counted so. `clusterChanged` names a broker
// that is not the one the offset was checkpointed on (a replaced cluster):
// the offset then means nothing whatever the range says. With `fail`, a lost
// position throws SqlError XX001 naming the topic, partition, offset and the
// log's range, with a hint; without it, the task goes on from `low` and the
// loss is said once in the server log.
RestoredOffset checkRestoredOffset(const RestoreSubject& at, int64_t restored, int64_t low,
                                   int64_t high, bool fail, const std::string& clusterChanged = "");

// Kinesis: the checkpointed sequence number of a shard against the sequence
// number of the oldest record the shard still holds (empty: the shard holds
// none). Sequence numbers are decimal integers of up to 128 bits, compared as
// such. The checkpointed record is gone when the oldest one held comes after
// it: the records after it may have expired before the flow read them.
bool sequenceExpired(const std::string& checkpointed, const std::string& oldestHeld);

// The same decision for a Kinesis shard whose restored sequence number
// expired, or that the service refused as not of this stream (`why` says
// which): with `fail` throws SqlError XX001 naming stream, shard and sequence
// number, with the hint; otherwise logs and returns (the shard goes on from
// its trim horizon, the gap counted as one in offsetsSkipped, since Kinesis
// records have no offsets to count).
void restoredSequenceLost(const RestoreSubject& at, const std::string& sequenceNumber,
                          const std::string& why, bool fail);

}  // namespace rtsql
