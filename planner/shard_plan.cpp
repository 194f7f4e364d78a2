#include "planner/shard_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>

namespace rtsql {

namespace {
// The longest list of slots a flow records: one per copy or per partition,
// and never more than the cluster's slots.
constexpr size_t kMaxClusterSlotList = 4096;
}  // namespace

std::string shardFlowName(const std::string& flow, int shard) {
  return shard == 0 ? flow : fmt::format("{}#{}", flow, shard);
}

std::optional<std::pair<std::string, int>> splitShardFlowName(const std::string& name) {
  const size_t hash = name.rfind('#');
  if (hash == std::string::npos || hash == 0 || hash + 1 == name.size()) return std::nullopt;
  // Digits only, no leading zero, below the largest count.
  if (name[hash + 1] == '0' || name.size() - hash - 1 > 2) return std::nullopt;
  int shard = 0;
  for (size_t i = hash + 1; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return std::nullopt;
    shard = shard * 10 + (name[i] - '0');
  }
  if (shard >= kMaxFlowShards) return std::nullopt;
  return std::make_pair(name.substr(0, hash), shard);
}

std::string formatClusterSlots(const std::vector<int>& slots) {
  return fmt::format("{}", fmt::join(slots, ","));
}

std::vector<int> parseClusterSlots(std::string_view text) {
  std::vector<int> out;
  size_t i = 0;
  while (i < text.size()) {
    int slot = 0;
    size_t digits = 0;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++digits) {
      if (digits == 6) return {};  // no cluster has a million slots
      slot = slot * 10 + (text[i] - '0');
    }
    if (digits == 0 || out.size() == kMaxClusterSlotList) return {};
    out.push_back(slot);
    if (i < text.size() && (text[i] != ',' || ++i == text.size())) return {};
  }
  return out;
}

int checkFlowShards(const Options& flowOptions, const PhysicalPlan& plan) {
  const OptionEntry* entry = flowOptions.find("shards");
  if (!entry) return 1;
  const int shards = static_cast<int>(flowOptions.getInt("shards", 1, 1, kMaxFlowShards));
  if (shards == 1) return 1;
  auto refuse = [&](const char* sqlstate, std::string message, std::string hint) {
    throw SqlError(sqlstate, std::move(message), entry->valuePos).withHint(std::move(hint));
  };
  if (!plan.keepsState()) {
    refuse(sqlstate::kInvalidParameterValue,
           "'shards' divides a flow's state over the nodes of a cluster, and this flow keeps no "
           "state",
           "remove 'shards': a stateless flow over a Kafka source of several partitions is "
           "spread over the nodes by its partitions");
  }
  // One shuffle, into the stage that writes the sink: the key it routes by
  // is the key every stateful operator after it keeps its state by.
  const StageSpec* last = nullptr;
  for (const StageSpec& stage : plan.stages) {
    if (stage.output.kind == StageOutput::Kind::Sink) last = &stage;
  }
  bool shuffled = false;
  for (const StageSpec& stage : plan.stages) {
    if (stage.output.kind != StageOutput::Kind::Shuffle) continue;
    if (!last || stage.output.targetStage != last->id) {
      refuse(sqlstate::kFeatureNotSupported,
             "'shards' divides a flow by the key of its one shuffle, and this flow shuffles its "
             "rows more than once (a stateful operator over another's output)",
             "run it without 'shards', or split it into two flows through a topic");
    }
    if (stage.output.keys.empty()) {
      refuse(sqlstate::kFeatureNotSupported,
             "'shards' divides a flow by the key of its shuffle, and this flow gathers every row "
             "in one place (an aggregate or window without GROUP BY keys, a global ORDER BY)",
             "group by a key, or run it without 'shards'");
    }
    shuffled = true;
  }
  if (!shuffled) {
    refuse(sqlstate::kFeatureNotSupported,
           "'shards' divides a flow by the key of its shuffle, and this flow keeps its state "
           "without one",
           "run it without 'shards'");
  }
  for (const ScanSpec& scan : plan.scans) {
    // Each copy reads its share of the partitions, and a row's origin is
    // its record's partition and offset: a log (Kafka), not a generator. A
    // group of the user's would be shared by the copies' positions.
    if (!scan.traits.partitionedLog) {
      refuse(sqlstate::kFeatureNotSupported,
             fmt::format("'shards' needs every source of the flow to be a Kafka topic, and "
                         "source \"{}\" is {}",
                         scan.name, scan.connector),
             "run it without 'shards'");
    }
    if (scan.parsed && scan.parsed->userGroup) {
      refuse(sqlstate::kFeatureNotSupported,
             fmt::format("'shards' gives each copy of the flow a consumer group of its own, and "
                         "source \"{}\" names one ('kafka.group.id')",
                         scan.name),
             "remove 'kafka.group.id' from the source, or run the flow without 'shards'");
    }
    if (scan.parsed && scan.parsed->topics.size() > 1) {
      // A row's origin names its record by partition number and offset,
      // which the partitions of several topics would share.
      refuse(sqlstate::kFeatureNotSupported,
             fmt::format("'shards' tells each exchanged row's record by its partition and "
                         "offset, and source \"{}\" reads several topics",
                         scan.name),
             "make a source per topic and UNION ALL them, or run the flow without 'shards'");
    }
  }
  return shards;
}

void addExchange(PhysicalPlan& plan, const std::string& topicPrefix, const std::string& bootstrap) {
  if (plan.shards <= 1) return;
  for (const StageSpec& stage : plan.stages) {
    if (stage.output.kind == StageOutput::Kind::Exchange) return;  // added already
  }
  const size_t stages = plan.stages.size();
  int input = 0;
  for (size_t i = 0; i < stages; ++i) {
    if (plan.stages[i].output.kind != StageOutput::Kind::Shuffle) continue;
    StageSpec& front = plan.stages[i];
    const ScanSpec& source = plan.scans.at(static_cast<size_t>(front.scan));
    ExchangeSpec exchange;
    exchange.topic = fmt::format("{}-{}", topicPrefix, input++);
    exchange.bootstrap = bootstrap;
    exchange.partitions = plan.shards;
    // A copy reads 1/N of the partitions: as many tasks as the whole flow's
    // source stage over N suffice (PartitionShare::rank spreads them).
    front.tasks = (front.tasks + plan.shards - 1) / plan.shards;
    exchange.producers = plan.shards * front.tasks;
    exchange.local = plan.exchangeLocal;
    // The back: one task reading the copy's partition of the topic, which
    // shuffles the rows as the front would have.
    ScanSpec scan;
    scan.name = source.name;
    scan.connector = "exchange";
    scan.schema = front.outputSchema;
    scan.idleTimeoutMicros = source.idleTimeoutMicros;
    scan.partitions = plan.shards;
    scan.exchange = exchange;
    StageSpec back;
    back.id = static_cast<int>(plan.stages.size());
    back.tasks = 1;
    back.scan = static_cast<int>(plan.scans.size());
    back.output = front.output;
    back.outputSchema = front.outputSchema;
    plan.scans.push_back(std::move(scan));
    front.output.kind = StageOutput::Kind::Exchange;
    // The copy's own rows go on into the stateful stage, as all did before.
    if (!exchange.local) front.output.targetStage = -1;
    front.output.exchange = exchange;
    plan.stages.push_back(std::move(back));  // `front` is not used after this
  }
}

PhysicalPlan planForShard(const PhysicalPlan& plan, int shard) {
  PhysicalPlan out = plan;
  out.shard = shard;
  out.flowName = shardFlowName(
      splitShardFlowName(plan.flowName).value_or(std::make_pair(plan.flowName, 0)).first, shard);
  // Copy s reads the source partitions i with i % N == s, and partition s
  // of each exchange topic.
  if (plan.shards > 1) {
    for (ScanSpec& scan : out.scans) scan.share = PartitionShare{0, plan.shards, {shard}, {}};
  }
  return out;
}

}  // namespace rtsql
