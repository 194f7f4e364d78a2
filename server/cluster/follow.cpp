// How a node of a cluster applies what other nodes write to the cluster's
// catalog topic (server/cluster/catalog.h): each entry makes the object it
// names here what the entry says, through the same statement handlers a
// restart replays the catalog with, so an object is created, dropped and
// checked on every node as on the node whose statement made it.
#include <fmt/format.h>

#include <iostream>

#include "common/clock.h"
#include "common/json.h"
#include "parser/parser.h"
#include "planner/shard_plan.h"
#include "planner/processor.h"
#include "planner/user_function.h"
#include "server/engine.h"

namespace rtsql {

namespace {

std::string quoteIdentifier(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

// The kinds of object an entry may name (server/cluster/catalog.h); each is
// also the keyword of its DROP statement.
bool knownKind(const std::string& kind) {
  for (const char* k : {"function", "processor", "source", "sink", "table", "flow"}) {
    if (kind == k) return true;
  }
  return false;
}

}  // namespace

void Engine::applyClusterEntry(const ClusterEntry& entry) {
  // Not a structured binding: the lambdas below capture these (clang 14,
  // the sanitizer builds' compiler, refuses to capture a binding).
  const std::pair<std::string, std::string> split = splitClusterKey(entry.key);
  const std::string& kind = split.first;
  const std::string& lowerName = split.second;
  if (!knownKind(kind)) {
    throw SqlError(sqlstate::kIoError,
                   fmt::format("unknown kind of catalog entry '{}'", entry.key));
  }
  std::lock_guard lock(ddlMu_);
  RestoringScope replaying(*this);
  ReplayWriter discard;
  EngineSession session;
  auto run = [&](const std::string& sql) {
    std::vector<ast::StatementPtr> stmts = parseStatements(sql);
    if (stmts.size() != 1)
      throw SqlError(sqlstate::kIoError, "a catalog entry holds not one statement");
    executeStatement(session, *stmts.front(), discard);
  };
  // The object as this node has it: its declared name and statement.
  std::string name, sql;
  auto have = [&](const auto& def) {
    if (def) {
      name = def->name;
      sql = def->sql;
    }
  };
  if (kind == "function") have(catalog_.findFunction(lowerName));
  if (kind == "processor") have(catalog_.findProcessor(lowerName));
  if (kind == "source") have(catalog_.findSource(lowerName));
  if (kind == "sink") have(catalog_.findSink(lowerName));
  if (kind == "table") have(catalog_.findTable(lowerName));
  if (kind == "flow") have(catalog_.findFlow(lowerName));
  // A record this node could not apply before is replaced by the entry.
  std::erase_if(unrestored_, [&](const CatalogRecord& r) {
    return clusterKey(r.kind == "insert" ? "table" : r.kind, r.name) == entry.key;
  });
  auto dropHere = [&] {
    if (!name.empty()) run(fmt::format("DROP {} IF EXISTS {}", kind, quoteIdentifier(name)));
    name.clear();
  };
  if (!entry.records || entry.records->empty()) {
    dropHere();
    return;
  }
  const std::vector<CatalogRecord> records = clusterRecords({entry});
  const CatalogRecord& main = records.front();
  // The object is made here as its owner's, as on the node that made it.
  // (An entry that differs from this node's object in its owner alone comes
  // only from a node of an earlier version, which writes none: it is left
  // as it is here, rather than dropped and made again under flows that use
  // it.)
  session.user = main.owner;
  try {
    if (kind == "flow") {
      // A sharded flow made again with the same statement is another flow:
      // it exchanges its rows through topics of its own (planner/shard_plan.h), and
      // its copies (or a spread flow's partitions) may be on other slots.
      auto setting = [](const std::vector<std::pair<std::string, std::string>>& settings,
                        const char* key) {
        for (const auto& [k, v] : settings) {
          if (k == key) return v;
        }
        return std::string();
      };
      bool samePlacement = true;
      if (!name.empty()) {
        std::lock_guard flock(flowsMu_);
        const auto& mine = flows_[toLower(name)].control.settings;
        for (const char* key : {kExchangeIdSetting, kExchangeLocalSetting, kClusterSlotsSetting})
          samePlacement = samePlacement && setting(mine, key) == setting(main.settings, key);
      }
      if (!name.empty() && sql == main.sql && samePlacement) {
        // The same flow: whether it should run may have changed.
        FlowRuntime* rt = findRuntime(name);
        bool wasWanted = false;
        {
          std::lock_guard flock(flowsMu_);
          FlowControl& c = flows_[toLower(name)].control;
          c.settings = main.settings;
          wasWanted = c.wantRunning;
        }
        if (wasWanted != main.running) setWantRunning(name, main.running);
        const bool started = main.running && !wasWanted;
        if (!main.running) {
          if (rt) rt->stop();
          stopShards(name);
          return;
        }
        // A sharded flow's copies that run here start again too (a failed
        // one included); the others, on the nodes that run them.
        if (started) startShardsHere(name);
        if (rt && !flowRunsHere(name, rt)) {
          rt->stop();
          return;
        }
        if (started) {
          // START FLOW on another node: as START FLOW here, a flow that
          // failed is started again too. When it cannot start now, the
          // supervisor retries it.
          try {
            if (!rt) rt = planRestoredFlow(name);
            if (!flowRunsHere(name, rt)) return;
            rt->stop();
            startRuntime(name, *rt);
            std::lock_guard flock(flowsMu_);
            flows_[toLower(name)].control.runningSinceMicros = monotonicMicros();
          } catch (const SqlError& e) {
            std::lock_guard flock(flowsMu_);
            flows_[toLower(name)].control.lastError = e.message();
          }
        }
        return;
      }
      dropHere();
      restoreFlow(main);
      return;
    }
    if (kind == "table" && !name.empty() && sql == main.sql) {
      // The same table: the INSERTs this node does not have yet.
      const std::vector<std::string> mine = tableInserts_[toLower(name)];
      const size_t theirs = records.size() - 1;
      bool prefix = mine.size() <= theirs;
      for (size_t i = 0; prefix && i < mine.size(); ++i) prefix = records[i + 1].sql == mine[i];
      if (prefix) {
        for (size_t i = mine.size(); i < theirs; ++i) run(records[i + 1].sql);
        return;
      }
    }
    if (!name.empty() && sql == main.sql) return;
    // Another definition: CREATE OR REPLACE replaces a function or processor
    // in place (flows may call it); anything else is dropped and created.
    if (!name.empty() && (kind == "function" || kind == "processor")) {
      try {
        run(main.sql);
        return;
      } catch (const SqlError&) {
        // Not OR REPLACE: the other node dropped it and created it anew.
      }
    }
    dropHere();
    for (const CatalogRecord& r : records) run(r.sql);
  } catch (const std::exception&) {
    // Kept as it came, as a restart keeps what it cannot restore, so that
    // this node never writes the cluster's catalog without it.
    for (const CatalogRecord& r : records) unrestored_.push_back(r);
    throw;
  }
}

}  // namespace rtsql
