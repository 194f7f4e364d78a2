// ALTER SOURCE | SINK | FLOW name SET ('k' = 'v', ...) | RESET ('k', ...): the
// options that may change while flows run. The object's CREATE statement is
// rendered again with the new options (server/create_text.h) and checked
// exactly as CREATE checks it, its errors pointing into the ALTER; every flow
// that uses the object is planned with it before anything changes; the new
// statement then takes the old one's place in the catalog store (a restart,
// and the other nodes of a cluster, run it as any CREATE), and each of those
// flows that runs here ends its epoch with a checkpoint, is planned again
// and goes on from that checkpoint with its state, as STOP FLOW and START
// FLOW would do it. Options that shape the rows or the state (a topic, a
// format, the brokers, the columns, the shuffle) are refused: they need a
// new object.
#include <fmt/format.h>

#include <algorithm>

#include "common/clock.h"
#include "common/schema.h"
#include "connectors/kafka/dead_letter.h"
#include "connectors/registry.h"
#include "connectors/restore_position.h"
#include "planner/late_rows.h"
#include "planner/row_errors.h"
#include "server/alter.h"
#include "server/create_text.h"
#include "server/ddl.h"
#include "server/privileges.h"

namespace rtsql {

namespace {

// ALTER FLOW's name for the CHECKPOINT INTERVAL clause, ALTER SOURCE's for
// the delay of its WATERMARK (the clause becomes `col - INTERVAL 'n' unit`).
constexpr const char* kCheckpointIntervalKey = "checkpoint.interval";
constexpr const char* kWatermarkDelayKey = "watermark.delay";

// `ts - INTERVAL 'n' UNIT` for a delay of `micros`, in the largest unit that
// holds it whole.
std::string watermarkExpr(const std::string& column, int64_t micros) {
  const char* unit = "MICROSECOND";
  int64_t n = micros;
  if (micros % 1000000 == 0) {
    unit = "SECOND";
    n = micros / 1000000;
  } else if (micros % 1000 == 0) {
    unit = "MILLISECOND";
    n = micros / 1000;
  }
  return fmt::format("{} - INTERVAL '{}' {}", sqlName(column), n, unit);
}

// The options ALTER may change, per kind of object: what a source does with
// a record it cannot decode and where it starts a partition it has not read
// yet, a sink's batching, a flow's checkpoint interval and its policies for
// failing and late rows. None of them changes the rows a flow keeps in state
// or the layout of that state.
const std::vector<std::string>& changeableOptions(ast::ObjectKind kind) {
  static const std::vector<std::string> source = {
      kOnErrorOption, kafka::kDeadLetterTopicOption, kafka::kDeadLetterBootstrapOption,
      "startingOffsets", kFailOnDataLossOption, kIdleTimeoutOption, kWatermarkDelayKey};
  static const std::vector<std::string> sink = {"kafka.linger.ms", "kafka.batch.num.messages",
                                                "kafka.batch.size", "kafka.compression.type",
                                                "kafka.compression.codec"};
  static const std::vector<std::string> flow = {
      kCheckpointIntervalKey, kOnErrorOption,   kRowErrorsTopicOption, kRowErrorsBootstrapOption,
      kLateRowsOption,        kLateRowsTopicOption, kLateRowsBootstrapOption};
  static const std::vector<std::string> none;
  switch (kind) {
    case ast::ObjectKind::Source: return source;
    case ast::ObjectKind::Sink: return sink;
    case ast::ObjectKind::Flow: return flow;
    default: return none;
  }
}

bool changeable(ast::ObjectKind kind, const std::string& key) {
  const auto& keys = changeableOptions(kind);
  return std::any_of(keys.begin(), keys.end(),
                     [&](const std::string& k) { return iequals(k, key); });
}

std::string listed(const std::vector<std::string>& keys) {
  std::string out;
  for (size_t i = 0; i < keys.size(); ++i) out += (i > 0 ? ", '" : "'") + keys[i] + "'";
  return out;
}

const char* kindKeyword(ast::ObjectKind kind) {
  switch (kind) {
    case ast::ObjectKind::Source: return "SOURCE";
    case ast::ObjectKind::Sink: return "SINK";
    case ast::ObjectKind::Table: return "TABLE";
    case ast::ObjectKind::Flow: return "FLOW";
    case ast::ObjectKind::Function: return "FUNCTION";
    case ast::ObjectKind::Processor: return "PROCESSOR";
  }
  return "";
}

std::string lowerWord(ast::ObjectKind kind) { return toLower(kindKeyword(kind)); }

[[noreturn]] void refuseOption(ast::ObjectKind kind, const std::string& name,
                               const ast::Option& o) {
  std::string hint =
      kind == ast::ObjectKind::Flow
          ? fmt::format("CREATE OR REPLACE FLOW {} changes the rest of a flow; ALTER FLOW "
                        "changes {}",
                        name, listed(changeableOptions(kind)))
          : fmt::format("DROP {0} and CREATE {0} again (after dropping the flows that use it) "
                        "to change it; ALTER {0} changes {1}",
                        kindKeyword(kind), listed(changeableOptions(kind)));
  throw SqlError(sqlstate::kFeatureNotSupported,
                 fmt::format("option '{}' of {} \"{}\" cannot be changed while it exists", o.key,
                             lowerWord(kind), name),
                 o.keyPos, hint);
}

ast::Option optionOf(const OptionEntry& e, size_t pos) {
  ast::Option o;
  o.key = e.key;
  o.value = e.value;
  o.keyPos = pos;
  o.valuePos = pos;
  return o;
}

}  // namespace

void AlterStatements::alter(EngineSession& s, const ast::Alter& stmt, ResultWriter& out) {
  const ast::ObjectKind kind = stmt.object;
  if (kind != ast::ObjectKind::Source && kind != ast::ObjectKind::Sink &&
      kind != ast::ObjectKind::Flow) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("ALTER {} is not supported", kindKeyword(kind)), stmt.objectPos,
                   kind == ast::ObjectKind::Table
                       ? "DROP TABLE and CREATE TABLE to change a table"
                       : fmt::format("CREATE OR REPLACE {} replaces it", kindKeyword(kind)));
  }
  StatementLock::Guard lock = ctx_.guardFor(s);
  lock.lock();
  Catalog& catalog = ctx_.catalogOf(s);
  // The object as it is: its statement, options and declared name.
  std::string sql, declared;
  Options current;
  Catalog::FlowPtr flowDef;
  auto have = [&](const auto& def) {
    if (!def) return;
    sql = def->sql;
    declared = def->name;
    current = def->options;
  };
  if (kind == ast::ObjectKind::Source) {
    have(catalog.findSource(stmt.name));
  } else if (kind == ast::ObjectKind::Sink) {
    have(catalog.findSink(stmt.name));
  } else if ((flowDef = catalog.findFlow(stmt.name))) {
    // A view's flow options are ALTER MATERIALIZED VIEW's, a flow's ALTER FLOW's.
    if (flowDef->materializedView != stmt.materializedView) {
      throw SqlError(sqlstate::kWrongObjectType,
                     fmt::format("\"{}\" is a {}", flowDef->name,
                                 flowDef->materializedView ? "materialized view"
                                                           : "flow, not a materialized view"),
                     stmt.namePos,
                     flowDef->materializedView ? "ALTER MATERIALIZED VIEW changes its options"
                                               : "ALTER FLOW changes its options");
    }
    sql = flowDef->sql;
    declared = flowDef->name;
  }
  if (declared.empty()) {
    if (stmt.materializedView) {
      throw SqlError(sqlstate::kUndefinedTable,
                     fmt::format("materialized view \"{}\" does not exist", stmt.name),
                     stmt.namePos, "SHOW MATERIALIZED VIEWS lists them");
    }
    if (kind == ast::ObjectKind::Source) {
      throw SqlError(sqlstate::kUndefinedTable,
                     fmt::format("relation \"{}\" does not exist", stmt.name), stmt.namePos);
    }
    throw SqlError(sqlstate::kUndefinedObject,
                   fmt::format("{} \"{}\" does not exist", lowerWord(kind), stmt.name),
                   stmt.namePos, fmt::format("SHOW {}S lists them", kindKeyword(kind)));
  }
  const ast::StatementKind createKind =
      kind == ast::ObjectKind::Source ? ast::StatementKind::CreateSource
      : kind == ast::ObjectKind::Sink ? ast::StatementKind::CreateSink
                                      : ast::StatementKind::CreateFlow;
  ast::StatementPtr before = parseDefinition(sql, createKind);
  const std::vector<std::string> flows =
      kind == ast::ObjectKind::Flow ? std::vector<std::string>{declared}
                                    : catalog.flowsUsing(declared);

  // Who may: a flow's owner; for a source or sink, which have no owner, a
  // superuser, or the owner of every flow that uses it (the change reaches
  // no one else's flow).
  if (!s.replay) {
    if (kind == ast::ObjectKind::Flow) {
      ctx_.requireOwnerOf(s, kind, declared, "alter", stmt.namePos);
    } else if (!ctx_.privileges->isSuperuser(s.user)) {
      for (const std::string& f : flows) {
        if (auto fd = catalog.findFlow(f); fd && !ctx_.privileges->owns(s.user, fd->owner)) {
          throw SqlError(sqlstate::kInsufficientPrivilege,
                         fmt::format("permission denied to alter {} {}: flow \"{}\" of another "
                                     "user uses it",
                                     lowerWord(kind), declared, f),
                         stmt.namePos,
                         "a superuser, or the owner of every flow that uses it, may alter it");
        }
      }
    }
  }

  // The options as they will be: the current ones (errors about them point
  // at the object's name), then the ALTER's, each at its place.
  std::vector<ast::Option> merged;
  std::optional<std::string> interval;
  size_t intervalPos = stmt.namePos;
  std::optional<std::string> watermark;
  if (kind == ast::ObjectKind::Flow) {
    const auto& flow = static_cast<const ast::CreateFlow&>(*before);
    for (const auto& o : flow.options) merged.push_back(optionOf({o.key, o.value}, stmt.namePos));
    interval = flow.checkpointInterval;
  } else {
    for (const auto& e : current.entries()) merged.push_back(optionOf(e, stmt.namePos));
  }
  auto findMerged = [&](const std::string& key) {
    return std::find_if(merged.begin(), merged.end(),
                        [&](const ast::Option& m) { return iequals(m.key, key); });
  };
  for (const ast::Option& o : stmt.options) {
    if (!changeable(kind, o.key)) {
      // An unknown key gets CREATE's error (with the closest known key); a
      // known one is refused as unchangeable.
      if (!stmt.reset && kind != ast::ObjectKind::Flow) {
        Options probe = bindOptions(merged);
        probe.set(o.key, o.value);
        std::vector<OptionEntry> entries = probe.entries();
        for (auto& e : entries) {
          if (iequals(e.key, o.key)) e.keyPos = o.keyPos, e.valuePos = o.valuePos;
        }
        const std::string connector = toLower(current.getString("connector"));
        if (kind == ast::ObjectKind::Source) {
          validateSourceOptions(connector, Options(entries), stmt.pos);
        } else {
          validateSinkOptions(connector, Options(entries), stmt.pos);
        }
      }
      if (kind == ast::ObjectKind::Flow && !stmt.reset) {
        const std::vector<std::string> known = {"shuffle.partitions", "delivery", "state.ttl",
                                                "standby.replicas", "shards"};
        if (std::none_of(known.begin(), known.end(),
                         [&](const std::string& k) { return iequals(k, o.key); })) {
          throw SqlError(sqlstate::kInvalidParameterValue,
                         fmt::format("unknown flow option '{}'", o.key), o.keyPos,
                         fmt::format("ALTER FLOW changes {}", listed(changeableOptions(kind))));
        }
      }
      refuseOption(kind, declared, o);
    }
    if (kind == ast::ObjectKind::Flow && iequals(o.key, kCheckpointIntervalKey)) {
      if (stmt.reset) interval.reset();
      else interval = o.value;
      intervalPos = o.valuePos;
      continue;
    }
    if (kind == ast::ObjectKind::Source && iequals(o.key, kWatermarkDelayKey)) {
      const auto& src = static_cast<const ast::CreateSource&>(*before);
      if (!src.watermark) {
        throw SqlError(sqlstate::kInvalidParameterValue,
                       fmt::format("source \"{}\" has no WATERMARK to delay", declared), o.keyPos,
                       "a source's WATERMARK is declared at CREATE SOURCE");
      }
      // As a CREATE SOURCE's interval is read: at least 0, at the value.
      const int64_t micros =
          stmt.reset ? 0
                     : Options({OptionEntry{o.key, o.value, o.keyPos, o.valuePos}})
                           .getInterval(o.key, 0, 0, INT64_MAX / 2);
      watermark = watermarkExpr(src.watermark->column, micros);
      continue;
    }
    auto it = findMerged(o.key);
    if (stmt.reset) {
      if (it == merged.end()) {
        out.notice(fmt::format("option '{}' is not set, skipping", o.key));
      } else {
        merged.erase(it);
      }
      continue;
    }
    if (it == merged.end()) merged.push_back(o);
    else *it = o;
  }

  // The statement as it will be, parsed, with the ALTER's positions.
  std::string nextSql;
  if (kind == ast::ObjectKind::Source)
    nextSql = createSourceText(static_cast<const ast::CreateSource&>(*before), optionList(merged),
                               watermark);
  else if (kind == ast::ObjectKind::Sink)
    nextSql = createSinkText(static_cast<const ast::CreateSink&>(*before), optionList(merged));
  else
    nextSql = createFlowText(static_cast<const ast::CreateFlow&>(*before), interval,
                             optionList(merged));
  ast::StatementPtr next = parseDefinition(nextSql, createKind);
  auto placeOptions = [&](std::vector<ast::Option>& options) {
    if (options.size() != merged.size()) throw InternalError("ALTER: options lost in rendering");
    for (size_t i = 0; i < options.size(); ++i) {
      options[i].keyPos = merged[i].keyPos;
      options[i].valuePos = merged[i].valuePos;
    }
  };
  next->pos = stmt.pos;

  // Checked as CREATE checks it, and every flow that uses it planned with it.
  Catalog changed(catalog);
  std::optional<SourceDef> source;
  std::optional<SinkDef> sink;
  std::optional<FlowDef> flow;
  if (kind == ast::ObjectKind::Source) {
    auto& cs = static_cast<ast::CreateSource&>(*next);
    placeOptions(cs.options);
    cs.namePos = stmt.namePos;
    source = ddl_.defineSource(s, cs);
    changed.replaceSource(*source);
  } else if (kind == ast::ObjectKind::Sink) {
    auto& cs = static_cast<ast::CreateSink&>(*next);
    placeOptions(cs.options);
    cs.namePos = stmt.namePos;
    sink = ddl_.defineSink(s, cs);
    changed.replaceSink(*sink);
  } else {
    auto& cf = static_cast<ast::CreateFlow&>(*next);
    placeOptions(cf.options);
    cf.namePos = stmt.namePos;
    cf.checkpointIntervalPos = intervalPos;
    flow = *flowDef;
    flow->sql = nextSql;
  }
  for (const std::string& f : flows) {
    Catalog::FlowPtr fd = changed.findFlow(f);
    if (!fd) continue;
    ast::StatementPtr planned = kind == ast::ObjectKind::Flow
                                    ? std::move(next)
                                    : parseDefinition(fd->sql, ast::StatementKind::CreateFlow);
    EngineSession planning;
    for (const auto& [k, v] : ctx_.flows.control(f).settings) planning.settings.set(k, v);
    PlanContext ctx = ctx_.planContext(planning);
    ctx.catalog = &changed;
    PhysicalPlan plan = planFlow(static_cast<const ast::CreateFlow&>(*planned), ctx);
    // A sharded flow's copies run apart, each from its own entry: they are
    // not planned again here.
    if (plan.shards > 1) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     fmt::format("flow \"{}\" is sharded: ALTER does not reach its copies", f),
                     stmt.namePos, "drop the flow and create it again with the change");
    }
    if (flow) {
      flow->checkpointIntervalMicros = plan.checkpointIntervalMicros;
      flow->options = plan.flowOptions;
    }
  }
  const std::string tag =
      stmt.materializedView ? "ALTER MATERIALIZED VIEW" : fmt::format("ALTER {}", kindKeyword(kind));
  ctx_.changeCatalog(s, catalog, [&](Catalog& c) {
    if (source) c.replaceSource(*source);
    if (sink) c.replaceSink(*sink);
    if (flow) c.replaceFlow(*flow);
    return true;
  });
  // A dry run only plans; a replay's flows are restarted by its caller.
  if (s.shadow || s.replay) {
    out.complete(tag);
    return;
  }
  restartAltered(lock, flows, &out);
  out.complete(tag);
}

void AlterStatements::restartAltered(StatementLock::Guard& lock,
                                     const std::vector<std::string>& flows, ResultWriter* out) {
  for (const std::string& name : flows) {
    FlowRuntime* rt = ctx_.flows.findRuntime(name);
    // Not planned yet: the supervisor plans it from the new definition. Run
    // by another node: that node restarts it when it reads the change.
    if (!rt || !ctx_.flows.runsHere(name, rt)) continue;
    // Being stopped by a STOP or DROP: planned again at its next START.
    try {
      ctx_.flows.requireNotStopping(name, SqlError::npos, "ALTER");
    } catch (const SqlError&) {
      ctx_.flows.setRuntime(name, nullptr);
      continue;
    }
    const bool run = ctx_.flows.control(name).wantRunning;
    {
      // The epoch in progress ends with a checkpoint; waited for without
      // the statement lock, as STOP FLOW waits.
      FlowRegistry::Stopping stopping(ctx_.flows, name);
      lock.unlock();
      rt->stop();
      lock.lock();
    }
    try {
      // The new runtime reads the new definitions and restores the newest
      // checkpoint, state and offsets, when it starts.
      FlowRuntime* fresh = ctx_.planRestoredFlow(name);
      if (run && fresh && ctx_.flows.runsHere(name, fresh)) {
        ctx_.flows.startRuntime(name, *fresh);
        ctx_.flows.updateControl(name, [](FlowControl& c) {
          c.runningSinceMicros = monotonicMicros();
          c.attempts = 0;
          c.lastError.clear();
        });
        if (out) {
          out->notice(
              fmt::format("flow \"{}\" goes on from its last checkpoint with the change", name));
        }
      }
    } catch (const SqlError& e) {
      // Planned again by the supervisor (a broker away), or failed with the
      // reason SHOW FLOWS gives.
      ctx_.flows.setRuntime(name, nullptr);
      ctx_.flows.updateControl(name, [&](FlowControl& c) { c.lastError = e.message(); });
      if (out) {
        out->notice(fmt::format("flow \"{}\" did not start again yet: {}", name, e.message()));
      }
    }
  }
}

}  // namespace rtsql

namespace rtsql {

bool AlterStatements::adoptAltered(EngineSession& replay, const std::string& kind,
                                   const std::string& name, const std::string& sql) {
  std::vector<std::string> flows;
  if (kind == "source") {
    auto stmt = parseDefinition(sql, ast::StatementKind::CreateSource);
    ctx_.catalog.replaceSource(ddl_.defineSource(replay, static_cast<const ast::CreateSource&>(*stmt)));
    flows = ctx_.catalog.flowsUsing(name);
  } else if (kind == "sink") {
    auto stmt = parseDefinition(sql, ast::StatementKind::CreateSink);
    ctx_.catalog.replaceSink(ddl_.defineSink(replay, static_cast<const ast::CreateSink&>(*stmt)));
    flows = ctx_.catalog.flowsUsing(name);
  } else if (kind == "flow") {
    // Only what ALTER FLOW changes (its options and checkpoint interval): a
    // new query or sink is another flow.
    Catalog::FlowPtr old = ctx_.catalog.findFlow(name);
    if (!old) return false;
    auto before = parseDefinition(old->sql, ast::StatementKind::CreateFlow);
    auto after = parseDefinition(sql, ast::StatementKind::CreateFlow);
    const auto& b = static_cast<const ast::CreateFlow&>(*before);
    const auto& a = static_cast<const ast::CreateFlow&>(*after);
    if (!iequals(a.name, b.name) || !iequals(a.sink, b.sink) || a.queryText != b.queryText) {
      return false;
    }
    FlowDef def = *old;
    def.sql = sql;
    ctx_.catalog.replaceFlow(std::move(def));
    flows = {old->name};
  } else {
    return false;
  }
  StatementLock::Guard held = StatementLock::Guard::held();
  restartAltered(held, flows, nullptr);
  return true;
}

}  // namespace rtsql
