// A bounded read of a Kafka source (SELECT ... FROM s FOR OFFSETS BETWEEN
// 'earliest' AND 'latest', docs/sql.md "Bounded queries"): wraps a source
// task that reads its partitions from their earliest offsets and ends each
// partition at the end offset the broker gave when the task opened. Records
// at or past that offset are dropped; once every partition has reached its
// end (or has been read to the broker's end, which is past it: a
// transaction's marker can be the last offset), the task calls `finished`
// once and returns nothing more.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "executor/connector_provider.h"

namespace rtsql {

// `inner` reads `scan` (one topic) from its earliest offsets; `bootstrap` is
// resolved (never 'embedded'). Throws SqlError 0A000 for a source of several
// topics, 08006 when the end offsets cannot be read.
std::unique_ptr<SourceTask> makeBoundedKafkaSource(std::unique_ptr<SourceTask> inner,
                                                   const ScanSpec& scan,
                                                   const std::string& bootstrap,
                                                   std::function<void()> finished);

}  // namespace rtsql
