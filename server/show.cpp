// SHOW, DESCRIBE and EXPLAIN: statements that only read.
#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "common/ansi_mode.h"
#include "common/expr.h"
#include "common/functions/spark_differences.h"
#include "common/schema.h"
#include "connectors/kafka/tap.h"
#include "connectors/local/broker.h"
#include "planner/processor.h"
#include "planner/user_function.h"
#include "server/flow_replace.h"
#include "server/set_statement.h"
#include "server/show.h"

#include "parser/parser.h"
#include "parser/string_literals.h"
#include "server/privileges.h"
#include "server/session_text.h"
#include "server/secret_options.h"
#include "server/system_catalog.h"
#include "server/views/view_reads.h"

namespace rtsql {

namespace {

std::optional<std::string> text(std::string s) { return std::optional<std::string>(std::move(s)); }

std::vector<std::optional<std::string>> lines(const std::string& s) {
  std::vector<std::optional<std::string>> out;
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

}  // namespace

std::vector<ResultColumn> ShowStatements::showColumns(const ast::Show& stmt) {
  switch (stmt.what) {
    case ast::ShowKind::Sources:
    case ast::ShowKind::Sinks: return {{"name"}, {"connector"}, {"format"}, {"options"}};
    case ast::ShowKind::Tables: return {{"name"}, {"columns"}, {"rows", pgtype::kInt8}};
    case ast::ShowKind::Flows:
      return {{"name"}, {"sink"}, {"state"}, {"slots", pgtype::kInt4}, {"error"}};
    case ast::ShowKind::Progress: return {{"progress", pgtype::kJson}};
    case ast::ShowKind::Functions:
      // `spark`: where a built-in answers otherwise than Spark (sparkDifference()).
      return {{"function"}, {"kind"},     {"signature"}, {"returns"},
              {"body"},     {"language"}, {"spark"}};
    case ast::ShowKind::UserFunctions:
      return {{"function"}, {"kind"}, {"signature"}, {"returns"}, {"body"}, {"language"}};
    case ast::ShowKind::Processors:
      return {{"processor"}, {"returns"}, {"class"}, {"language"}};
    case ast::ShowKind::MaterializedViews:
      return {{"name"}, {"state"}, {"epoch", pgtype::kInt8}, {"key"}, {"error"}};
    case ast::ShowKind::Variable:
      // Like PostgreSQL's SHOW ALL, one name shows a table rather than a value.
      if (iequals(stmt.name, "rtsql.view_epochs")) return {{"view"}, {"epoch"}};
      if (iequals(stmt.name, "live_taps")) {
        return {{"bootstrap"}, {"topics"}, {"live_queries", pgtype::kInt8},
                {"tasks", pgtype::kInt8}, {"records", pgtype::kInt8}};
      }
      return {{stmt.name}};
  }
  return {};
}

const std::vector<ResultColumn> ShowStatements::kDescribeColumns = {{"name"}, {"type"}, {"kind"}};
const std::vector<ResultColumn> ShowStatements::kExplainColumns = {{"QUERY PLAN"}};

void ShowStatements::show(EngineSession& s, const ast::Show& stmt, ResultWriter& out) {
  EngineContext::Rows rows;
  switch (stmt.what) {
    case ast::ShowKind::Sources: {
      for (const auto& src : ctx_.catalogOf(s).sources()) {
        rows.push_back({src->name, src->connector,
                        src->format.empty() ? std::nullopt : text(src->format),
                        masked(src->options).toString()});
      }
      ctx_.sendRows(out, showColumns(stmt), rows,
                    fmt::format("SHOW {}", rows.size()));
      return;
    }
    case ast::ShowKind::Sinks: {
      for (const auto& sink : ctx_.catalogOf(s).sinks()) {
        rows.push_back(
            {sink->name, sink->connector, sink->format, masked(sink->options).toString()});
      }
      ctx_.sendRows(out, showColumns(stmt), rows,
                    fmt::format("SHOW {}", rows.size()));
      return;
    }
    case ast::ShowKind::Tables: {
      for (const auto& t : ctx_.catalogOf(s).tables()) {
        rows.push_back({t->name, t->schema.toString(), std::to_string(t->rows->size())});
      }
      ctx_.sendRows(out, showColumns(stmt), rows,
                    fmt::format("SHOW {}", rows.size()));
      return;
    }
    case ast::ShowKind::Flows: {
      for (const auto& info : ctx_.flows.flowInfos(false)) {
        std::optional<std::string> reason;
        if (!info.failure.empty()) reason = info.failure;
        rows.push_back({info.name, info.sink, std::string(flowStateName(info.state)),
                        info.slots ? text(std::to_string(*info.slots)) : std::nullopt, reason});
      }
      ctx_.sendRows(out, showColumns(stmt), rows,
                    fmt::format("SHOW {}", rows.size()));
      return;
    }
    case ast::ShowKind::Progress: {
      std::optional<std::string> json = ctx_.flows.progress(stmt.name);
      if (!json) {
        throw SqlError(sqlstate::kUndefinedObject,
                       fmt::format("flow \"{}\" does not exist", stmt.name), stmt.namePos,
                       "SHOW FLOWS lists the flows");
      }
      ctx_.sendRows(out, showColumns(stmt), {{*json}}, "SHOW 1");
      return;
    }
    case ast::ShowKind::Functions:
    case ast::ShowKind::UserFunctions: {
      // User functions never take a built-in's name, so each name is one row.
      // A body is its owner's: other users see NULL (server/privileges.h).
      const bool all = stmt.what == ast::ShowKind::Functions;
      for (const auto& f : ctx_.catalogOf(s).functions()) {
        rows.push_back({f->name, std::string("user"), f->signature(), f->returns->toString(),
                        ctx_.privileges->owns(s.user, f->owner) ? text(f->bodyText) : std::nullopt,
                        toUpper(f->language) + (f->vectorized ? " VECTORIZED" : "")});
        if (all) rows.back().push_back(std::nullopt);
      }
      if (all) {
        for (std::string& f : functionNames()) {
          std::optional<std::string_view> spark = sparkDifference(f);
          rows.push_back({std::move(f), std::string("builtin"), std::nullopt, std::nullopt,
                          std::nullopt, std::nullopt,
                          spark ? text(std::string(*spark)) : std::nullopt});
        }
      }
      std::sort(rows.begin(), rows.end(),
                [](const auto& a, const auto& b) { return toLower(*a[0]) < toLower(*b[0]); });
      ctx_.sendRows(out, showColumns(stmt), rows, fmt::format("SHOW {}", rows.size()));
      return;
    }
    case ast::ShowKind::Processors: {
      for (const auto& p : ctx_.catalogOf(s).processors()) {
        std::string returns;
        for (const Column& c : p->returns.columns) {
          if (!returns.empty()) returns += ", ";
          returns += c.name + " " + c.type->toString();
        }
        rows.push_back({p->name, std::move(returns), p->python->className(), toUpper(p->language)});
      }
      ctx_.sendRows(out, showColumns(stmt), rows, fmt::format("SHOW {}", rows.size()));
      return;
    }
    case ast::ShowKind::MaterializedViews: {
      for (const auto& f : ctx_.catalogOf(s).flows()) {
        if (!f->materializedView) continue;
        ViewStatus st = ctx_.views->status(*f);
        rows.push_back({st.name, st.state,
                        st.epoch ? text(std::to_string(*st.epoch)) : std::nullopt, st.key,
                        st.error.empty() ? std::nullopt : text(st.error)});
      }
      ctx_.sendRows(out, showColumns(stmt), rows, fmt::format("SHOW {}", rows.size()));
      return;
    }
    case ast::ShowKind::Variable: {
      std::string key = toLower(stmt.name);
      if (key == kSparkAnsiSetting) key = kAnsiModeSetting;  // Spark's name for it
      if (key == toLower(kSparkEscapedStringLiteralsSetting)) key = kEscapedStringLiteralsSetting;
      std::string value;
      if (key == "rtsql.view_epoch") {
        // The epoch of the session's last read of a materialized view.
        // A read of its latest state (ViewRead::Latest) is of no one epoch.
        std::optional<std::string> epoch;
        if (s.viewEpoch)
          epoch = *s.viewEpoch == ViewLatest::kLatestEpoch ? kLatestEpochText
                                                            : std::to_string(*s.viewEpoch);
        ctx_.sendRows(out, showColumns(stmt), {{epoch}}, "SHOW");
        return;
      }
      if (key == "rtsql.view_epochs") {
        // Each view the session's last read of views read, with its epoch.
        for (const auto& [view, epoch] : s.viewEpochs) {
          rows.push_back({view, !epoch ? std::nullopt
                                : *epoch == ViewLatest::kLatestEpoch
                                    ? text(kLatestEpochText)
                                    : text(std::to_string(*epoch))});
        }
        ctx_.sendRows(out, showColumns(stmt), rows, fmt::format("SHOW {}", rows.size()));
        return;
      }
      if (key == "rtsql.statements_parsed") {
        // Texts the server has parsed since it started (parser/parser.h).
        ctx_.sendRows(out, showColumns(stmt), {{text(std::to_string(parsedTextCount()))}}, "SHOW");
        return;
      }
      if (key == "live_taps") {
        for (const KafkaTapInfo& t : ctx_.liveTaps->list()) {
          rows.push_back({t.bootstrap, t.topics, std::to_string(t.liveQueries),
                          std::to_string(t.tasks), std::to_string(t.records)});
        }
        std::sort(rows.begin(), rows.end());
        ctx_.sendRows(out, showColumns(stmt), rows, fmt::format("SHOW {}", rows.size()));
        return;
      }
      if (key == "embedded_kafka") {
        if (ctx_.options.embeddedBootstrap.empty()) {
          throw SqlError(sqlstate::kObjectNotInPrerequisiteState, "the embedded Kafka broker is not running",
                         stmt.namePos, "start rtsqld with --embedded-kafka");
        }
        value = ctx_.options.embeddedBootstrap;
        out.notice("the embedded broker is ephemeral: its topics live in memory and are lost at "
                   "shutdown; rtsqld --local-kafka runs one that keeps them (SHOW local_kafka)");
      } else if (key == "local_kafka") {
        value = LocalKafka::runningBootstrap();
        if (value.empty()) {
          throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                         "the local Kafka broker is not running", stmt.namePos,
                         "start rtsqld with --local-kafka");
        }
      } else if (key == "slots") {
        value = fmt::format("{} used of {}", ctx_.slots.used(), ctx_.slots.total());
      } else if (key == "standard_conforming_strings") {
        // Off while string literals read backslash escapes (server/session_text.h).
        value = keepsBackslashes(s.settings) ? "on" : "off";
      } else if (const OptionEntry* e = s.settings.find(key)) {
        value = e->value;
      } else if (const std::string* d = SetStatement::settingDefault(key)) {
        // Not SET in this session: its default, as PostgreSQL's SHOW
        // client_encoding, TimeZone, DateStyle answer before any SET.
        value = *d;
      } else if (auto pg = std::find_if(pgReadOnlySettings().begin(), pgReadOnlySettings().end(),
                                        [&](const auto& kv) { return kv.first == key; });
                 pg != pgReadOnlySettings().end()) {
        // PostgreSQL's settings drivers read (server_version_num, ...).
        value = pg->second;
      } else {
        throw SqlError(sqlstate::kUndefinedObject,
                       fmt::format("unrecognized configuration parameter \"{}\"", stmt.name),
                       stmt.namePos, "known: embedded_kafka, local_kafka, slots, shuffle.partitions, live_taps, "
                       "and PostgreSQL's server_version, server_version_num, standard_conforming_strings, ...");
      }
      ctx_.sendRows(out, showColumns(stmt), {{value}}, "SHOW");
      return;
    }
  }
}

void ShowStatements::describeFunction(const EngineSession& s, const ast::Describe& stmt,
                                      ResultWriter& out) {
  Catalog::FunctionPtr f = ctx_.catalog.findFunction(stmt.name);
  if (!f) {
    // A built-in: its name and where it differs from Spark (NULL: nowhere).
    const std::string name = toLower(stmt.name);
    const std::vector<std::string> builtins = functionNames();
    if (std::binary_search(builtins.begin(), builtins.end(), name)) {
      std::optional<std::string_view> spark = sparkDifference(name);
      EngineContext::Rows rows{{std::string("function"), name, std::string("builtin")},
                {std::string("spark"), spark ? text(std::string(*spark)) : std::nullopt,
                 std::string("builtin")}};
      ctx_.sendRows(out, kDescribeColumns, rows, "DESCRIBE 2");
      return;
    }
    throw SqlError(sqlstate::kUndefinedFunction,
                   fmt::format("function {} does not exist", stmt.name), stmt.namePos,
                   "SHOW USER FUNCTIONS lists the functions made by CREATE FUNCTION");
  }
  EngineContext::Rows rows;
  for (const auto& p : f->params)
    rows.push_back({p.name, p.type->toString(), std::string("parameter")});
  rows.push_back({std::string("returns"), f->returns->toString(), std::string("function")});
  rows.push_back({std::string("language"),
                  toUpper(f->language) + (f->vectorized ? " VECTORIZED" : ""),
                  std::string("function")});
  // The owner (NULL: the superusers', made before owners were recorded); the
  // body only for the owner and the superusers.
  rows.push_back({std::string("owner"), f->owner.empty() ? std::nullopt : text(f->owner),
                  std::string("function")});
  rows.push_back({std::string("body"),
                  ctx_.privileges->owns(s.user, f->owner) ? text(f->bodyText) : std::nullopt,
                  std::string("function")});
  ctx_.sendRows(out, kDescribeColumns, rows, fmt::format("DESCRIBE {}", rows.size()));
}

void ShowStatements::describe(const EngineSession& s, const ast::Describe& stmt,
                              ResultWriter& out) {
  if (stmt.function) return describeFunction(s, stmt, out);
  EngineContext::Rows rows;
  auto addOptions = [&](const Options& o) {
    const Options shown = masked(o);
    for (const auto& e : shown.entries()) rows.push_back({e.key, e.value, std::string("option")});
  };
  if (auto src = ctx_.catalog.findSource(stmt.name)) {
    for (size_t i = 0; i < src->schema.size(); ++i) {
      const Column& c = src->schema.columns[i];
      std::string kind = c.hidden ? "metadata" : "column";
      if (src->watermark && src->watermark->column == static_cast<int>(i)) {
        kind += fmt::format(", watermark delay {} ms", src->watermark->delayMicros / 1000);
      }
      rows.push_back({c.name, c.type->toString(), kind});
    }
    addOptions(src->options);
  } else if (auto t = ctx_.catalog.findTable(stmt.name)) {
    for (const auto& c : t->schema.columns) rows.push_back({c.name, c.type->toString(), std::string("column")});
    addOptions(t->options);
  } else if (auto sink = ctx_.catalog.findSink(stmt.name)) {
    addOptions(sink->options);
  } else if (auto v = ctx_.catalog.findFlow(stmt.name); v && v->materializedView) {
    // A view: its columns, those of its key said so, then the flow's lines.
    if (std::optional<ViewLayout> l = ctx_.views->layout(v->name)) {
      for (size_t i = 0; i < l->schema.size(); ++i) {
        const bool key =
            std::find(l->key.begin(), l->key.end(), static_cast<int>(i)) != l->key.end();
        rows.push_back({l->schema.columns[i].name, l->schema.columns[i].type->toString(),
                        std::string(key ? "column, key" : "column")});
      }
    }
    rows.push_back({std::string("query"), v->queryText, std::string("materialized view")});
    rows.push_back({std::string("owner"), v->owner.empty() ? std::nullopt : text(v->owner),
                    std::string("materialized view")});
    addOptions(v->options);
  } else if (auto f = ctx_.catalog.findFlow(stmt.name)) {
    FlowRuntime* rt = ctx_.flows.findRuntime(f->name);
    if (rt) {
      for (const auto& c : rt->plan().sink.input.columns) {
        rows.push_back({c.name, c.type->toString(), std::string("output column")});
      }
    }
    rows.push_back({std::string("sink"), f->sink, std::string("flow")});
    rows.push_back({std::string("query"), f->queryText, std::string("flow")});
    rows.push_back({std::string("owner"), f->owner.empty() ? std::nullopt : text(f->owner),
                    std::string("flow")});
    addOptions(f->options);
  } else {
    throw SqlError(sqlstate::kUndefinedTable, fmt::format("relation \"{}\" does not exist", stmt.name),
                   stmt.namePos, "SHOW SOURCES, SHOW SINKS, SHOW TABLES and SHOW FLOWS list what exists");
  }
  ctx_.sendRows(out, kDescribeColumns, rows, fmt::format("DESCRIBE {}", rows.size()));
}

void ShowStatements::explain(EngineSession& s, const ast::Explain& stmt, ResultWriter& out) {
  std::string plan;
  if (!stmt.inner && stmt.materializedView) {
    // EXPLAIN MATERIALIZED VIEW v: the plan its flow runs.
    Catalog::FlowPtr v = ctx_.catalog.findFlow(stmt.flowName);
    if (!v || !v->materializedView) {
      throw SqlError(sqlstate::kUndefinedTable,
                     fmt::format("materialized view \"{}\" does not exist", stmt.flowName),
                     stmt.flowNamePos, "SHOW MATERIALIZED VIEWS lists them");
    }
    plan = ctx_.flows.flowPlan(stmt.flowName, stmt.flowNamePos);
  } else if (!stmt.inner) {
    plan = ctx_.flows.flowPlan(stmt.flowName, stmt.flowNamePos);
  } else if (stmt.inner->kind == ast::StatementKind::CreateFlow &&
             static_cast<const ast::CreateFlow&>(*stmt.inner).orReplace) {
    // The state plan (server/flow_replace.h).
    EngineContext::Rows rows;
    for (auto& l : replace_.explainReplace(s, static_cast<const ast::CreateFlow&>(*stmt.inner))) rows.push_back({l});
    ctx_.sendRows(out, kExplainColumns, rows, "EXPLAIN");
    return;
  } else if (stmt.inner->kind == ast::StatementKind::CreateFlow) {
    plan = planFlow(static_cast<const ast::CreateFlow&>(*stmt.inner), ctx_.planContext(s)).explain();
  } else if (stmt.inner->kind == ast::StatementKind::Select) {
    plan = planQuery(*static_cast<const ast::SelectStatement&>(*stmt.inner).query, ctx_.planContext(s)).explain();
  } else {
    throw SqlError(sqlstate::kFeatureNotSupported, "EXPLAIN takes CREATE FLOW or SELECT", stmt.pos);
  }
  EngineContext::Rows rows;
  for (auto& l : lines(plan)) rows.push_back({l});
  ctx_.sendRows(out, kExplainColumns, rows, "EXPLAIN");
}

}  // namespace rtsql
