#include "connectors/restore_position.h"

#include <fmt/format.h>

#include <cstdio>

namespace rtsql {

namespace {

std::string hint(const RestoreSubject& at) {
  return fmt::format(
      "START FLOW {} RESET STATE starts the flow again from empty state; a source created with "
      "'failOnDataLoss' = 'false' goes on from the earliest record there is instead, the gap "
      "counted in offsetsSkipped",
      at.flow.empty() ? std::string("<flow>") : at.flow);
}

// The digits of a sequence number without leading zeros; empty when it is not
// a decimal number.
std::string digits(const std::string& s) {
  size_t start = 0;
  while (start + 1 < s.size() && s[start] == '0') ++start;
  for (size_t i = start; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return {};
  }
  return s.substr(start);
}

}  // namespace

bool failOnDataLoss(const Options& options) { return options.getBool(kFailOnDataLossOption, true); }

RestoredOffset checkRestoredOffset(const RestoreSubject& at, int64_t restored, int64_t low,
                                   int64_t high, bool fail, const std::string& clusterChanged) {
  RestoredOffset out;
  out.offset = restored;
  const bool below = restored < low;
  const bool above = restored > high;
  if (!below && !above && clusterChanged.empty()) return out;

  std::string what;
  if (!clusterChanged.empty()) {
    what = fmt::format(
        "the offset {} of topic \"{}\" partition {} was checkpointed on another Kafka cluster "
        "than the one at the bootstrap servers now ({}), whose log holds offsets [{}, {})",
        restored, at.topic, at.partition, clusterChanged, low, high);
  } else if (below) {
    what = fmt::format(
        "the checkpointed offset {} of topic \"{}\" partition {} is below the log, which holds "
        "offsets [{}, {}): the broker removed {} records (retention, truncation) before the flow "
        "read them",
        restored, at.topic, at.partition, low, high, low - restored);
  } else {
    what = fmt::format(
        "the checkpointed offset {} of topic \"{}\" partition {} is beyond the end of the log, "
        "which holds offsets [{}, {}): the log the offset belongs to is gone (the topic was "
        "deleted and created again, or the broker restarted empty or was replaced)",
        restored, at.topic, at.partition, low, high);
  }
  if (fail) {
    throw SqlError(sqlstate::kDataCorrupted,
                   fmt::format("{}: {}", at.source, what), SqlError::npos, hint(at));
  }
  out.lost = true;
  out.offset = low;
  out.skipped = below ? low - restored : (above ? restored - high : 0);
  fmt::print(stderr,
             "rtsql: {}: {}; going on from offset {} ('failOnDataLoss' = 'false'), {} offsets "
             "counted in offsetsSkipped\n",
             at.source, what, low, out.skipped);
  return out;
}

bool sequenceExpired(const std::string& checkpointed, const std::string& oldestHeld) {
  const std::string a = digits(checkpointed);
  const std::string b = digits(oldestHeld);
  if (a.empty() || b.empty()) return false;  // nothing held, or not numbers: nothing to tell
  if (a.size() != b.size()) return b.size() > a.size();
  return b > a;
}

void restoredSequenceLost(const RestoreSubject& at, const std::string& sequenceNumber,
                          const std::string& why, bool fail) {
  const std::string what =
      fmt::format("the checkpointed sequence number {} of Kinesis stream \"{}\" shard {} {}",
                  sequenceNumber, at.topic, at.partition, why);
  if (fail) {
    throw SqlError(sqlstate::kDataCorrupted,
                   fmt::format("{}: {}", at.source, what), SqlError::npos, hint(at));
  }
  fmt::print(stderr,
             "rtsql: {}: {}; going on from the shard's oldest record ('failOnDataLoss' = "
             "'false'), counted in offsetsSkipped\n",
             at.source, what);
}

}  // namespace rtsql
