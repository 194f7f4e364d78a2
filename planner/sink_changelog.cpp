#include "planner/sink_changelog.h"

#include <fmt/format.h>

namespace rtsql {

SinkMode sinkMode(const Options& options) {
  std::string mode = toLower(options.getString("mode", "update"));
  if (mode == "append") return SinkMode::Append;
  if (mode == "upsert") return SinkMode::Upsert;
  return SinkMode::Update;
}

SinkMode modeOf(const SinkSpec& sink) { return sink.parsed ? sink.parsed->mode : SinkMode::Update; }

bool sinkWritesRetractions(const SinkSpec& sink) {
  // A live query's client is shown each change with its kind; a blackhole
  // counts rows whatever they mean.
  if (sink.traits.writesEveryChange) return true;
  return sink.format == "debezium-json" || modeOf(sink) == SinkMode::Upsert;
}

void checkSinkChangelog(const PhysicalPlan& plan, size_t pos) {
  const SinkSpec& sink = plan.sink;
  const ChangelogMode mode = plan.output.mode;
  if (sink.traits.writesEveryChange) return;
  const SinkMode sinkWrites = modeOf(sink);
  if (sinkWrites == SinkMode::Append && mode != ChangelogMode::Append) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("sink \"{}\" has 'mode' = 'append', but the flow's query updates "
                               "the rows it wrote (its changelog is {})",
                               sink.name, changelogModeName(mode)),
                   pos, "write it into a sink with 'mode' = 'upsert' or format = 'debezium-json'");
  }
  if (mode == ChangelogMode::Retract && !sinkWritesRetractions(sink)) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("sink \"{}\" (connector '{}', format '{}') writes each key's latest "
                               "row, but the flow's query retracts rows it wrote: it would "
                               "leave rows that no longer exist",
                               sink.name, sink.connector, sink.format),
                   pos,
                   "write it into a sink with 'mode' = 'upsert' (each key's latest row, a delete "
                   "as a tombstone) or format = 'debezium-json' (every change, old row and new)");
  }
  if (sinkWrites == SinkMode::Upsert && !plan.output.uniqueKey) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("sink \"{}\" has 'mode' = 'upsert', but the flow's rows have no "
                               "unique key to write them under",
                               sink.name),
                   pos,
                   "select every GROUP BY column as it is, or write into a sink with "
                   "format = 'debezium-json', which needs no key");
  }
}

}  // namespace rtsql
