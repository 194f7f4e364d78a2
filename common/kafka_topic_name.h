// Kafka's rule for topic names, checked where a user names a topic that rtsql
// writes (a source's dead-letter topic, a flow's late-row and failed-row
// topics) so that a bad name fails its CREATE, not the first record.
#pragma once

#include <string_view>

namespace rtsql {

// 1 to 249 of a-z, A-Z, 0-9, '.', '_' and '-', and neither "." nor "..".
inline bool validKafkaTopicName(std::string_view name) {
  if (name.empty() || name.size() > 249 || name == "." || name == "..") return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// The hint of a refused name.
inline constexpr const char* kKafkaTopicNameHint =
    "a topic name has 1 to 249 of the characters a-z, A-Z, 0-9, '.', '_' and '-'";

}  // namespace rtsql
