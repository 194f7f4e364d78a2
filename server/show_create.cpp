// SHOW CREATE SOURCE | SINK | TABLE | FLOW | FUNCTION | PROCESSOR name: the
// one statement that makes the object as it is now (server/create_text.h),
// which ALTER keeps up to date. Credentials in options are shown to a
// superuser (and a flow's to its owner); others read them masked as SHOW
// SOURCES shows them, told so by a NOTICE, and the statement then recreates
// the object only once the masked values are filled in. A function's or
// processor's code is its owner's, as SHOW USER FUNCTIONS has it.
#include <fmt/format.h>

#include "planner/processor.h"
#include "planner/user_function.h"
#include "server/create_text.h"
#include "server/privileges.h"
#include "server/secret_options.h"
#include "server/show_create.h"

namespace rtsql {

namespace {

const char* kindNoun(ast::ObjectKind kind) {
  switch (kind) {
    case ast::ObjectKind::Source: return "source";
    case ast::ObjectKind::Sink: return "sink";
    case ast::ObjectKind::Table: return "table";
    case ast::ObjectKind::Flow: return "flow";
    case ast::ObjectKind::Function: return "function";
    case ast::ObjectKind::Processor: return "processor";
  }
  return "object";
}

}  // namespace

const std::vector<ResultColumn> ShowCreate::kShowCreateColumns = {{"statement"}};

std::string ShowCreate::currentCreateText(const ast::ObjectKind kind, const std::string& name,
                                          const Catalog& catalog, bool reveal,
                                          bool* maskedAny) const {
  // The options as a list, masked unless `reveal`.
  auto listOf = [&](const Options& options) {
    OptionList out;
    for (const auto& e : options.entries()) {
      const bool secret = isSecretOption(e.key);
      if (secret && !reveal && maskedAny) *maskedAny = true;
      out.emplace_back(e.key, secret && !reveal ? std::string(kMasked) : e.value);
    }
    return out;
  };
  switch (kind) {
    case ast::ObjectKind::Source:
      if (auto def = catalog.findSource(name)) {
        auto stmt = parseDefinition(def->sql, ast::StatementKind::CreateSource);
        return createSourceText(static_cast<const ast::CreateSource&>(*stmt), listOf(def->options));
      }
      break;
    case ast::ObjectKind::Sink:
      if (auto def = catalog.findSink(name)) {
        auto stmt = parseDefinition(def->sql, ast::StatementKind::CreateSink);
        return createSinkText(static_cast<const ast::CreateSink&>(*stmt), listOf(def->options));
      }
      break;
    case ast::ObjectKind::Table:
      if (auto def = catalog.findTable(name)) {
        auto stmt = parseDefinition(def->sql, ast::StatementKind::CreateTable);
        return createTableText(static_cast<const ast::CreateTable&>(*stmt), listOf(def->options));
      }
      break;
    case ast::ObjectKind::Flow:
      if (auto def = catalog.findFlow(name)) {
        auto stmt = parseDefinition(def->sql, ast::StatementKind::CreateFlow);
        const auto& flow = static_cast<const ast::CreateFlow&>(*stmt);
        Options options = bindOptions(flow.options);
        // The shuffle partitions a session SET when it created the flow are
        // part of what runs: written out, a fresh server makes the same plan.
        if (!options.has("shuffle.partitions")) {
          for (const auto& [k, v] : ctx_.flows.control(def->name).settings) {
            if (iequals(k, "shuffle.partitions")) options.set("shuffle.partitions", v);
          }
        }
        return createFlowText(flow, flow.checkpointInterval, listOf(options));
      }
      break;
    case ast::ObjectKind::Function:
      if (auto def = catalog.findFunction(name)) return def->sql;
      break;
    case ast::ObjectKind::Processor:
      if (auto def = catalog.findProcessor(name)) return def->sql;
      break;
  }
  const bool relation = kind == ast::ObjectKind::Source || kind == ast::ObjectKind::Table;
  throw SqlError(relation ? sqlstate::kUndefinedTable : sqlstate::kUndefinedObject,
                 relation ? fmt::format("relation \"{}\" does not exist", name)
                          : fmt::format("{} \"{}\" does not exist", kindNoun(kind), name),
                 SqlError::npos);
}

void ShowCreate::showCreate(EngineSession& s, const ast::ShowCreate& stmt, ResultWriter& out) {
  StatementLock::Guard lock = ctx_.guardFor(s);
  lock.lock();
  const Catalog& catalog = ctx_.catalogOf(s);
  bool reveal = ctx_.privileges->isSuperuser(s.user);
  if (stmt.object == ast::ObjectKind::Flow) {
    Catalog::FlowPtr def = catalog.findFlow(stmt.name);
    if (def) reveal = reveal || ctx_.privileges->owns(s.user, def->owner);
    // SHOW CREATE MATERIALIZED VIEW names a view; SHOW CREATE FLOW any flow,
    // a view's printed as its CREATE MATERIALIZED VIEW.
    if (stmt.materializedView && (!def || !def->materializedView)) {
      if (!def) {
        throw SqlError(sqlstate::kUndefinedTable,
                       fmt::format("materialized view \"{}\" does not exist", stmt.name),
                       stmt.namePos, "SHOW MATERIALIZED VIEWS lists them");
      }
      throw SqlError(sqlstate::kWrongObjectType,
                     fmt::format("\"{}\" is a flow, not a materialized view", def->name),
                     stmt.namePos, "SHOW CREATE FLOW prints it");
    }
  }
  // A function's or processor's code is its owner's to read.
  if (stmt.object == ast::ObjectKind::Function || stmt.object == ast::ObjectKind::Processor) {
    ctx_.requireOwnerOf(s, stmt.object, stmt.name, "show the code of", stmt.namePos);
  }
  bool maskedAny = false;
  std::string text;
  try {
    text = currentCreateText(stmt.object, stmt.name, catalog, reveal, &maskedAny);
  } catch (SqlError& e) {
    if (e.position() == SqlError::npos) e.setPosition(stmt.namePos);
    throw;
  }
  if (maskedAny) {
    out.notice(fmt::format("credentials of {} \"{}\" are shown as {}: only a superuser{} sees them",
                           kindNoun(stmt.object), stmt.name, kMasked,
                           stmt.object == ast::ObjectKind::Flow ? " or the flow's owner" : ""));
  }
  ctx_.sendRows(out, kShowCreateColumns, {{text}}, "SHOW 1");
}

}  // namespace rtsql
