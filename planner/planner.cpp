// Planning a flow or a live query: the query is bound into a logical plan
// (logical_plan.h: query_binder.cpp, aggregate_binder.cpp, join_binder.cpp),
// cut into stages (stages.cpp) and given its sink, which is checked against
// what the sink's format needs.
#include "planner/planner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <functional>

#include "common/ansi_mode.h"
#include "common/time_zone.h"
#include "planner/shard_plan.h"
#include "planner/bounded_relation.h"
#include "planner/decimal_literals.h"
#include "planner/timestamp_literals.h"
#include "planner/late_rows.h"
#include "planner/logical_plan.h"
#include "planner/row_errors.h"
#include "planner/sink_changelog.h"
#include "planner/user_function.h"

namespace rtsql {

using planner_detail::BoundQuery;
using planner_detail::Mode;
using planner_detail::OutputColumn;
using planner_detail::QueryBinder;

namespace {

// The offset of the last LIMIT keyword in `text` (which starts at `base`), for
// pointing at it: the AST keeps the limit's value but not its place.
size_t findLimitPos(const std::string& text, size_t base) {
  std::string lower = toLower(text);
  size_t found = std::string::npos;
  for (size_t at = lower.find("limit"); at != std::string::npos; at = lower.find("limit", at + 1)) {
    bool startOk = at == 0 || !(std::isalnum(static_cast<unsigned char>(lower[at - 1])) ||
                                lower[at - 1] == '_');
    size_t end = at + 5;
    bool endOk = end >= lower.size() ||
                 !(std::isalnum(static_cast<unsigned char>(lower[end])) || lower[end] == '_');
    if (startOk && endOk) found = at;
  }
  return found == std::string::npos ? SqlError::npos : base + found;
}

bool isText(const DataType& t) { return t.id == TypeId::String || t.id == TypeId::Binary; }

bool isHeadersType(const DataType& t) {
  if (t.id != TypeId::Array || !t.element || t.element->id != TypeId::Struct) return false;
  const DataType& s = *t.element;
  int k = s.fieldIndex("key"), v = s.fieldIndex("value");
  return s.fields.size() == 2 && k >= 0 && v >= 0 &&
         s.fields[static_cast<size_t>(k)].type->id == TypeId::String &&
         isText(*s.fields[static_cast<size_t>(v)].type);
}

int findOutput(const std::vector<OutputColumn>& outputs, std::string_view name) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (iequals(outputs[i].name, name)) return static_cast<int>(i);
  }
  return -1;
}

// An aggregation's rows are keyed by their group (window included) so that
// each update of a group replaces the last one under Kafka log compaction. The
// key is only meaningful when every group key is a selected column.
void defaultKey(SinkSpec& spec, const BoundQuery& bound) {
  std::vector<int> columns;
  for (const ExprPtr& key : bound.keyRefs) {
    int found = -1;
    for (size_t i = 0; i < bound.outputs.size() && found < 0; ++i) {
      if (bound.outputs[i].expr == key) found = static_cast<int>(i);
    }
    if (found < 0) return;
    columns.push_back(found);
  }
  spec.keyColumns = columns;
  if (columns.size() == 1) spec.keyColumn = columns[0];
}

// A sink that writes updates by key (upsert, debezium-json) keys each row by
// the flow's unique key (Changelog::uniqueKey), so that every change of a row
// lands under the key of the row it changes.
void uniqueKeyOf(SinkSpec& spec, const Changelog& output) {
  if (!output.uniqueKey) return;
  spec.keyColumns = *output.uniqueKey;
  if (spec.keyColumns.size() == 1) spec.keyColumn = spec.keyColumns[0];
}

// Fills the sink spec and checks that the query's columns suit the sink's format.
// `output` is the flow's changelog.
void bindSink(SinkSpec& spec, const SinkDef& sink, const BoundQuery& bound, size_t queryPos,
              const Changelog& output) {
  const std::vector<OutputColumn>& outputs = bound.outputs;
  spec.name = sink.name;
  spec.connector = sink.connector;
  spec.format = sink.format;
  spec.options = sink.options;
  spec.parsed = sink.parsed;
  spec.traits = sink.traits;
  auto typed = [&](const char* column, bool (*ok)(const DataType&), const char* wanted) {
    int i = findOutput(outputs, column);
    if (i < 0) return -1;
    const OutputColumn& o = outputs[static_cast<size_t>(i)];
    if (!ok(*o.expr->type())) {
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("column \"{}\" of a raw sink must be {}, not {}", column, wanted,
                                 o.expr->type()->toString()),
                     o.pos, fmt::format("write CAST(... AS STRING) AS {}", column));
    }
    return i;
  };
  if (iequals(sink.format, "raw")) {
    spec.valueColumn = typed("value", isText, "STRING or BINARY");
    if (spec.valueColumn < 0) {
      throw SqlError(sqlstate::kUndefinedColumn,
                     fmt::format("sink \"{}\" has format 'raw': the query must give a column "
                                 "named \"value\"",
                                 sink.name),
                     queryPos, "name the payload: SELECT to_json(struct(*)) AS value ...");
    }
    spec.keyColumn = typed("key", isText, "STRING or BINARY");
    spec.headersColumn =
        typed("headers", isHeadersType, "ARRAY<STRUCT<key: STRING, value: BINARY>>");
    spec.topicColumn = typed("topic", [](const DataType& t) { return t.id == TypeId::String; },
                             "STRING");
    return;
  }
  if (iequals(sink.format, "csv")) {
    // A csv field is a scalar; the csv decoder reads no nested values either.
    for (const OutputColumn& o : outputs) {
      const DataType& type = *o.expr->type();
      if (type.id != TypeId::Array && type.id != TypeId::Struct && type.id != TypeId::Map) continue;
      throw SqlError(
          sqlstate::kFeatureNotSupported,
          fmt::format("column \"{}\" is {}: a csv sink writes scalar columns only", o.name,
                      type.toString()),
          o.pos, fmt::format("write it as text: to_json(...) AS {}, or use format 'json'", o.name));
    }
  }
  if (iequals(sink.format, "avro")) {
    // Each column is a field of the record the sink writes; a struct's fields
    // are fields of a nested record.
    std::function<std::string(const DataType&)> badField = [&](const DataType& t) -> std::string {
      if (t.id == TypeId::Array) return badField(*t.element);
      for (const StructField& f : t.fields) {
        if (!isAvroName(f.name)) return f.name;
        std::string inner = badField(*f.type);
        if (!inner.empty()) return inner;
      }
      return {};
    };
    for (const OutputColumn& o : outputs) {
      const std::string bad = isAvroName(o.name) ? badField(*o.expr->type()) : o.name;
      if (bad.empty()) continue;
      throw SqlError(
          sqlstate::kInvalidParameterValue,
          fmt::format("column \"{}\" {}is not a valid Avro name: an avro sink writes "
                      "each column as a record field",
                      o.name, bad == o.name ? "" : fmt::format("has field \"{}\", which ", bad)),
          o.pos,
          "Avro names are letters, digits and _ not starting with a digit: give the "
          "column an alias");
    }
  }
  // The sink's 'key', as CREATE SINK read it.
  const std::optional<std::string> key = sink.parsed ? sink.parsed->key : std::nullopt;
  if (key) {
    spec.keyColumn = findOutput(outputs, *key);
    if (spec.keyColumn < 0) {
      std::vector<std::string> names;
      for (const auto& o : outputs) names.push_back(o.name);
      std::string close = planner_detail::closestName(*key, names);
      throw SqlError(sqlstate::kUndefinedColumn,
                     fmt::format("sink \"{}\" uses key = '{}', but the query has no column \"{}\"",
                                 sink.name, *key, *key),
                     queryPos,
                     close.empty() ? fmt::format("the query's columns: {}", fmt::join(names, ", "))
                                   : fmt::format("perhaps you meant \"{}\"", close));
    }
  }
  if (key) return;
  if (sink.format == "debezium-json" || modeOf(spec) == SinkMode::Upsert) {
    uniqueKeyOf(spec, output);
  } else {
    defaultKey(spec, bound);
  }
}

// 'state.ttl': at least a second; a year at most keeps time + TTL far from overflow.
constexpr int64_t kMinStateTtlMicros = 1000LL * 1000;
constexpr int64_t kMaxStateTtlMicros = 366LL * 86'400 * 1000 * 1000;

// 'timezone': the zone a flow reads and shows its TIMESTAMPs in.
constexpr const char* kTimeZoneOption = "timezone";
// 'ansi_mode': whether the flow's expressions follow ANSI mode
// (common/ansi_mode.h); the session's setting at CREATE without it.
constexpr const char* kAnsiModeOption = "ansi_mode";

void checkFlowOptions(const Options& options) {
  options.checkKnown({"shuffle.partitions", "delivery", "state.ttl", "standby.replicas", "shards",
                      kLateRowsOption,
                      kLateRowsTopicOption, kLateRowsBootstrapOption, kOnErrorOption,
                      kRowErrorsTopicOption, kRowErrorsBootstrapOption, kTimeZoneOption,
                      kAnsiModeOption});
  if (const OptionEntry* zone = options.find(kTimeZoneOption))
    findTimeZone(zone->value, zone->valuePos);
  if (const OptionEntry* ansi = options.find(kAnsiModeOption))
    parseAnsiMode(ansi->value, kAnsiModeOption, ansi->valuePos);
  if (options.has("shuffle.partitions")) options.getInt("shuffle.partitions", 1, 1, 100000);
  options.getEnum("delivery", "at-least-once", {"at-least-once", "exactly-once"});
  if (options.has("state.ttl"))
    options.getInterval("state.ttl", 0, kMinStateTtlMicros, kMaxStateTtlMicros);
}

// 'standby.replicas': how many nodes of a cluster keep a warm copy of the
// flow's state (server/cluster/standbys.h); a flow must keep state to have one.
constexpr int kMaxStandbyReplicas = 15;

int standbyReplicas(const Options& options, const PhysicalPlan& plan) {
  const OptionEntry* entry = options.find("standby.replicas");
  if (!entry) return 0;
  const int replicas =
      static_cast<int>(options.getInt("standby.replicas", 0, 0, kMaxStandbyReplicas));
  if (replicas > 0 && !plan.keepsState()) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   "'standby.replicas' keeps a warm copy of a flow's state on other nodes, and "
                   "this flow keeps no state",
                   entry->valuePos)
        .withHint("remove 'standby.replicas': a node takes a stateless flow over at once");
  }
  return replicas;
}

// 'state.ttl' bounds the state of the flow's joins without a time bound: a
// row is dropped once the watermark passes its event time plus the TTL, so
// both sides of such a join need a watermark. Re-derives the changelog, whose
// state line names the TTL.
void applyStateTtl(PhysicalPlan& plan, const Options& options) {
  const OptionEntry* ttl = options.find("state.ttl");
  if (!ttl) return;
  int64_t micros = options.getInterval("state.ttl", 0, kMinStateTtlMicros, kMaxStateTtlMicros);
  bool applied = false;
  for (StageSpec& stage : plan.stages) {
    for (OperatorSpec& op : stage.operators) {
      if (!op.is<StreamJoinSpec>()) continue;
      auto& join = op.as<StreamJoinSpec>();
      if (!join.unbounded) continue;
      if (!join.leftTime || !join.rightTime) {
        throw SqlError(sqlstate::kInvalidColumnReference,
                       "'state.ttl' drops a joined row when the watermark passes its event "
                       "time: both sides of the join need a WATERMARK",
                       ttl->valuePos)
            .withHint(
                "declare one on each source: CREATE SOURCE s (..., WATERMARK FOR ts AS "
                "ts - INTERVAL '10' SECOND) ...; or remove 'state.ttl' to keep every row");
      }
      join.stateTtlMicros = micros;
      applied = true;
    }
  }
  if (!applied) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   "'state.ttl' applies to a join of two streams without a time bound, and this "
                   "flow has none",
                   ttl->valuePos)
        .withHint(
            "remove 'state.ttl'; a time bound or a window already lets the watermark drop "
            "old state");
  }
  deriveChangelog(plan);
}

// 'delivery' = 'exactly-once' writes each epoch's rows in one Kafka
// transaction, committed with the epoch's checkpoint: it needs a Kafka sink
// with a fixed topic (the transaction also records the epoch there).
bool exactlyOnce(const Options& flowOptions, const SinkDef& sink) {
  if (!iequals(flowOptions.getString("delivery", "at-least-once"), "exactly-once")) return false;
  size_t pos = flowOptions.find("delivery")->valuePos;
  if (!sink.exactlyOnce) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("'delivery' = 'exactly-once' needs a Kafka sink; sink \"{}\" is '{}'",
                               sink.name, sink.connector),
                   pos, "file sinks are at-least-once: rows since the last checkpoint are written again after a failure");
  }
  if (!sink.parsed || sink.parsed->topic.empty()) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("'delivery' = 'exactly-once' needs the 'topic' option on sink \"{}\"",
                               sink.name),
                   pos);
  }
  return true;
}

void requireCatalog(const PlanContext& ctx) {
  if (!ctx.catalog) throw InternalError("PlanContext without a catalog");
}

// `shuffle.partitions`: the flow's option, else the session's SET, else 8.
int shufflePartitions(const Options& flowOptions, const PlanContext& ctx) {
  if (flowOptions.has("shuffle.partitions")) {
    return static_cast<int>(flowOptions.getInt("shuffle.partitions", 8, 1, 100000));
  }
  if (ctx.session.has("shuffle.partitions")) {
    try {
      return static_cast<int>(ctx.session.getInt("shuffle.partitions", 8, 1, 100000));
    } catch (SqlError& e) {
      // The value was given by an earlier SET, not in this statement.
      e.setPosition(SqlError::npos);
      e.withDetail("in the session setting 'shuffle.partitions'");
      throw;
    }
  }
  return 8;
}

// `sink`: a flow's sink, whose format decides whether aggregations emit
// retractions (sinkTakesRetractions()); null for a live query.
PhysicalPlan buildPlan(const BoundQuery& bound, const PlanContext& ctx, int partitions,
                       const SinkDef* sink = nullptr) {
  PhysicalPlan plan;
  plan.shufflePartitions = partitions;
  if (sink) {
    plan.sink.connector = sink->connector;
    plan.sink.format = sink->format;
    plan.sink.options = sink->options;
    plan.sink.parsed = sink->parsed;
    plan.sink.traits = sink->traits;
  }
  planner_detail::NodePtr root =
      bound.shaped ? bound.node : planner_detail::projectNode(bound.node, bound.outputs);
  planner_detail::cutStages(root, ctx, plan);
  // A bounded query's ORDER BY keys it does not select are result columns
  // the client is not sent.
  std::vector<Column>& result = plan.sink.input.columns;
  for (size_t i = result.size() - std::min(bound.hiddenOutputs, result.size()); i < result.size(); ++i)
    result[i].hidden = true;
  placeVectorizedBatches(plan);
  deriveChangelog(plan);
  return plan;
}

// A materialized view's sink: its own keyed table, written like an upsert
// sink (each key's latest row; a delete takes the key out).
Catalog::SinkPtr viewSink(const ast::CreateFlow& stmt) {
  auto def = std::make_shared<SinkDef>();
  def->name = stmt.name;
  def->connector = kViewSinkConnector;
  def->format = "table";
  def->options = Options({OptionEntry{"mode", "upsert", stmt.namePos, stmt.namePos}});
  // As a sink's connector would read them at CREATE SINK.
  auto parsed = std::make_shared<SinkOptions>();
  parsed->mode = SinkMode::Upsert;
  def->parsed = std::move(parsed);
  return def;
}

}  // namespace

PhysicalPlan planFlow(const ast::CreateFlow& stmt, const PlanContext& ctx) {
  requireCatalog(ctx);
  Catalog::SinkPtr sink =
      stmt.materializedView ? viewSink(stmt) : ctx.catalog->findSink(stmt.sink);
  if (!sink) {
    SqlError err(sqlstate::kUndefinedObject, fmt::format("sink \"{}\" does not exist", stmt.sink),
                 stmt.sinkPos);
    if (ctx.catalog->findSource(stmt.sink) || ctx.catalog->findTable(stmt.sink)) {
      err.withHint(fmt::format("\"{}\" is a relation; a flow writes INTO a sink", stmt.sink));
    } else {
      err.withHint(fmt::format("CREATE SINK {} WITH (connector = ..., format = ...) first",
                               stmt.sink));
    }
    throw err;
  }
  if (!stmt.query) throw InternalError("CREATE FLOW without a query");

  Options flowOptions = bindOptions(stmt.options);
  checkFlowOptions(flowOptions);
  // A view's rows are read as of its last checkpoint: it checkpoints often.
  int64_t checkpoint = stmt.materializedView ? kViewCheckpointMicros : 5LL * 60 * 1000 * 1000;
  if (stmt.checkpointInterval) {
    checkpoint = parseInterval(*stmt.checkpointInterval, "", stmt.checkpointIntervalPos);
    if (checkpoint < 1000 * 1000) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "the checkpoint interval must be at least 1 second",
                     stmt.checkpointIntervalPos, "CHECKPOINT INTERVAL '30 seconds'");
    }
  }
  int partitions = shufflePartitions(flowOptions, ctx);
  // A flow reads and prints TIMESTAMPs in its own zone, its option 'timezone'
  // (UTC without it), fixed when it is planned: a session's SET TIME ZONE
  // never changes what a flow computes, at CREATE or after a restart.
  const OptionEntry* zoneOption = flowOptions.find(kTimeZoneOption);
  TimeZoneScope zone(zoneOption ? findTimeZone(zoneOption->value, zoneOption->valuePos)
                                : utcTimeZone());
  // Its ANSI mode likewise: its option 'ansi_mode', else the mode the session
  // had when it was created, which the flow recorded with its settings (a
  // flow recorded before ANSI mode existed is replayed with it off).
  const OptionEntry* ansiOption = flowOptions.find(kAnsiModeOption);
  const OptionEntry* ansiSetting = ctx.session.find(kAnsiModeSetting);
  AnsiModeScope ansi(ansiOption ? parseAnsiMode(ansiOption->value, kAnsiModeOption,
                                                ansiOption->valuePos)
                     : ansiSetting ? parseAnsiMode(ansiSetting->value, kAnsiModeSetting)
                                   : true);
  // How it reads 1.5 likewise: a DECIMAL, unless it was recorded before that.
  const OptionEntry* literals = ctx.session.find(kDecimalLiteralsSetting);
  DecimalLiteralScope decimalLiterals(!literals || literals->value != "off");
  // A TIMESTAMP literal likewise: in the flow's zone, unless recorded before.
  const OptionEntry* timestamps = ctx.session.find(kTimestampLiteralsSetting);
  TimestampLiteralScope timestampLiterals(!timestamps || timestamps->value != "off");

  QueryBinder binder(ctx, Mode::Flow);
  BoundQuery bound =
      binder.bindQuery(*stmt.query, true, findLimitPos(stmt.queryText, stmt.query->pos));
  PhysicalPlan plan = buildPlan(bound, ctx, partitions, sink.get());
  applyStateTtl(plan, flowOptions);
  plan.shards = checkFlowShards(flowOptions, plan);
  if (plan.shards > 1) {
    plan.exchangeId = ctx.session.getString(kExchangeIdSetting);
    plan.exchangeLocal = ctx.session.getString(kExchangeLocalSetting) == "1";
  }
  plan.clusterSlots = parseClusterSlots(ctx.session.getString(kClusterSlotsSetting));
  plan.flowName = stmt.name;
  bindSink(plan.sink, *sink, bound, stmt.query->pos, plan.output);
  if (ctx.checkSinkColumns) {
    std::vector<std::pair<std::string, size_t>> columns;
    for (const OutputColumn& o : bound.outputs) columns.emplace_back(o.name, o.pos);
    ctx.checkSinkColumns(plan.sink, columns);
  }
  if (stmt.materializedView && plan.shards > 1) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("materialized view \"{}\" cannot be sharded", stmt.name),
                   flowOptions.find("shards") ? flowOptions.find("shards")->valuePos : stmt.namePos,
                   "leave 'shards' out; 'shuffle.partitions' spreads its work over tasks");
  }
  if (stmt.materializedView && !plan.output.uniqueKey) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("materialized view \"{}\": its query's rows have no unique key "
                               "(its changelog is {}), so a row cannot be looked up or replaced",
                               stmt.name, plan.output.describe(plan.sink.input)),
                   stmt.query->pos,
                   "GROUP BY the columns that identify a row and select each as it is (a "
                   "window's start or end stands for the window)");
  }
  checkSinkChangelog(plan, stmt.query->pos);
  checkLateRows(plan, *sink, flowOptions);
  checkRowErrors(*sink, flowOptions);
  plan.onError = parseRowErrorPolicy(flowOptions);
  plan.lateRowsDeadLettered = deadLettersLateRows(flowOptions);
  plan.lateRowsTopic =
      readFlowDeadLetterTopic(kLateRowsDeadLetters, plan.lateRowsDeadLettered, flowOptions);
  plan.rowErrorsTopic = readFlowDeadLetterTopic(
      kRowErrorsDeadLetters, plan.onError == RowErrorPolicy::DeadLetter, flowOptions);
  plan.checkpointIntervalMicros = checkpoint;
  plan.exactlyOnce = exactlyOnce(flowOptions, *sink);
  plan.standbyReplicas = standbyReplicas(flowOptions, plan);
  plan.flowOptions = std::move(flowOptions);
  return plan;
}

PhysicalPlan planQuery(const ast::Query& query, const PlanContext& ctx) {
  requireCatalog(ctx);
  int partitions = shufflePartitions(Options(), ctx);
  QueryBinder binder(ctx, Mode::Query);
  BoundQuery bound = binder.bindQuery(query, true, SqlError::npos);
  PhysicalPlan plan = buildPlan(bound, ctx, partitions);
  plan.sink.name = "client";
  plan.sink.connector = "client";
  plan.sink.traits.toClient = true;
  plan.sink.traits.writesEveryChange = true;
  return plan;
}

namespace {

// SQL answers an aggregate without GROUP BY over no rows with one row: the
// bounded query's global aggregates start with their group (the stage of a
// global aggregate has one task, which checks that only one seeds it).
void seedGlobalAggregates(PhysicalPlan& plan) {
  for (StageSpec& stage : plan.stages) {
    if (stage.tasks != 1) continue;
    for (OperatorSpec& op : stage.operators) {
      if (!op.is<AggregateSpec>()) continue;
      auto& agg = op.as<AggregateSpec>();
      if (agg.groupKeys.empty() && agg.window.kind == WindowKind::None) agg.seedGlobalGroup = true;
    }
  }
}

}  // namespace

PhysicalPlan planBoundedQuery(const ast::Query& query, const PlanContext& ctx) {
  if (!ctx.boundedRelation) throw InternalError("a bounded query planned without its relations");
  PhysicalPlan plan = planQuery(query, ctx);
  // Its result is applied change by change, and an update without the row it
  // replaces needs a key the select list may have dropped (a count per
  // customer without the customer): every aggregation spells out its
  // retractions, as for a sink that writes every change.
  plan.sink.format = "debezium-json";
  deriveChangelog(plan);
  plan.sink.format.clear();
  seedGlobalAggregates(plan);
  return plan;
}

Options bindOptions(const std::vector<ast::Option>& options) {
  std::vector<OptionEntry> entries;
  entries.reserve(options.size());
  for (const auto& o : options) entries.push_back(OptionEntry{o.key, o.value, o.keyPos, o.valuePos});
  return Options(std::move(entries));
}

}  // namespace rtsql
