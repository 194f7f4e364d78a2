// A replace issued on a node that does not run the flow, and the requests
// the node that runs it carries out (server/remote_replace.h).
#include "server/remote_replace.h"

#include <fmt/format.h>
#include <pthread.h>

#include <chrono>
#include <random>

#include "common/clock.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "parser/parser.h"
#include "server/catalog_file.h"
#include "server/flow_replace.h"

namespace rtsql {

namespace {

// How often a waiting statement looks whether its request was answered, and
// the request thread whether a flow it runs has one.
constexpr auto kLookEvery = std::chrono::milliseconds(100);
constexpr auto kRequestRound = std::chrono::milliseconds(500);

std::optional<std::string> settingOf(const std::vector<std::pair<std::string, std::string>>& settings,
                                     const char* key) {
  for (const auto& [k, v] : settings) {
    if (k == key) return v;
  }
  return std::nullopt;
}

void eraseRequest(std::vector<std::pair<std::string, std::string>>& settings) {
  std::erase_if(settings, [](const auto& kv) {
    return kv.first == kReplaceRequestSetting || kv.first == kReplaceRefusalSetting;
  });
}

// A refusal as a setting's value: the request's id, the error's SQLSTATE and
// message, and back.
std::string formatRefusal(const std::string& id, const SqlError& e) {
  CatalogRecord r;
  r.kind = "refusal";
  r.name = id;
  r.sql = e.message();
  r.settings.emplace_back("sqlstate", e.sqlstate());
  return formatCatalogFile({r});
}

std::optional<SqlError> parseRefusal(const std::string& text, const std::string& id) {
  try {
    std::vector<CatalogRecord> records = parseCatalogFile(text);
    if (records.size() != 1 || records[0].kind != "refusal" || records[0].name != id) {
      return std::nullopt;
    }
    std::string code = settingOf(records[0].settings, "sqlstate").value_or(sqlstate::kInternalError);
    if (code.size() != 5) code = sqlstate::kInternalError;
    return SqlError(code, records[0].sql);
  } catch (const SqlError&) {
    return std::nullopt;
  }
}

std::string newRequestId() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), static_cast<uint32_t>(nowMicros()));
}

}  // namespace

std::string formatReplaceRequest(const ReplaceRequest& req) {
  CatalogRecord r;
  r.kind = "replace";
  r.name = req.id;
  r.sql = req.sql;
  r.owner = req.user;
  r.settings = req.settings;
  return formatCatalogFile({r});
}

std::optional<ReplaceRequest> parseReplaceRequest(const std::string& text) {
  try {
    std::vector<CatalogRecord> records = parseCatalogFile(text);
    if (records.size() != 1 || records[0].kind != "replace" || records[0].name.empty()) {
      return std::nullopt;
    }
    return ReplaceRequest{records[0].name, records[0].sql, records[0].owner, records[0].settings};
  } catch (const SqlError&) {
    return std::nullopt;
  }
}

std::optional<ReplaceRequest> replaceRequestOf(
    const std::vector<std::pair<std::string, std::string>>& settings) {
  std::optional<std::string> text = settingOf(settings, kReplaceRequestSetting);
  if (!text) return std::nullopt;
  return parseReplaceRequest(*text);
}

void FlowReplace::requestRemoteReplace(EngineSession& s, const ast::CreateFlow& stmt,
                                       ResultWriter& out, StatementLock::Guard& lock) {
  const std::string flow = toLower(stmt.name);
  const char* what = stmt.materializedView ? "materialized view" : "flow";
  ReplaceRequest req{newRequestId(), stmt.text, s.user, ctx_.settingsOf(s)};
  // The request is the flow's record written again with it among its
  // settings; applied here as it is written.
  auto write = [&](const std::function<void(FlowControl&)>& edit) {
    FlowControl control = ctx_.flows.control(flow);
    edit(control);
    CatalogChange change;
    change.flow = flow;
    change.control = &control;
    ctx_.persistCatalog(change);
    ctx_.flows.updateControl(flow, [&](FlowControl& c) { c.settings = control.settings; });
  };
  write([&](FlowControl& c) {
    eraseRequest(c.settings);
    c.settings.emplace_back(kReplaceRequestSetting, formatReplaceRequest(req));
  });
  logLine(fmt::format("asked the node that runs {} \"{}\" to replace it (request {})", what,
                      stmt.name, req.id));

  // Waited for without the statement lock: this node's catalog follower
  // applies the answer under it.
  const int64_t deadline = monotonicMicros() + int64_t(kRemoteReplaceWaitSeconds) * 1'000'000;
  // A take-back that clashes with another node's write is tried again
  // until the answer comes or this much longer.
  const int64_t lastTry = deadline + 30'000'000;
  bool cancelled = false;
  for (;;) {
    lock.unlock();
    std::this_thread::sleep_for(kLookEvery);
    try {
      throwIfInterrupted();
    } catch (const Interrupted&) {
      cancelled = true;
    }
    lock.lock();
    Catalog::FlowPtr f = ctx_.catalog.findFlow(flow);
    if (!f) {
      throw SqlError(sqlstate::kUndefinedObject,
                     fmt::format("{} \"{}\" was dropped while its node replaced it", what,
                                 stmt.name),
                     stmt.namePos);
    }
    const FlowControl control = ctx_.flows.control(flow);
    if (std::optional<std::string> refusal = settingOf(control.settings, kReplaceRefusalSetting)) {
      if (std::optional<SqlError> e = parseRefusal(*refusal, req.id)) {
        throw SqlError(e->sqlstate(), e->message(), stmt.namePos,
                       "the node that runs it refused the replace; nothing changed");
      }
    }
    std::optional<ReplaceRequest> pending = replaceRequestOf(control.settings);
    if (!pending || pending->id != req.id) {
      if (f->sql == stmt.text) break;
      throw SqlError(sqlstate::kSerializationFailure,
                     fmt::format("another statement changed {} \"{}\" before its node replaced it",
                                 what, stmt.name),
                     stmt.namePos, "run the statement again");
    }
    const int64_t now = monotonicMicros();
    if (!cancelled && now < deadline) continue;
    // Taken back: nothing changes. (The flow's node may be applying it at
    // this moment: the cluster's one order decides, and the take-back then
    // fails with 40001 and the answer comes next round.)
    try {
      write([&](FlowControl& c) { eraseRequest(c.settings); });
    } catch (const SqlError& e) {
      if (e.sqlstate() == sqlstate::kSerializationFailure && now < lastTry) continue;
      throw;
    }
    if (cancelled) throw Interrupted();
    throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                   fmt::format("the node that runs {} \"{}\" did not replace it within {} s; "
                               "nothing changed",
                               what, stmt.name, kRemoteReplaceWaitSeconds),
                   stmt.namePos,
                   "SHOW FLOWS says where it runs; when its node is down, the cluster gives "
                   "it to another within --node-timeout: run the statement again then");
  }
  out.notice(fmt::format("{} \"{}\" was replaced by the node that runs it", what, stmt.name));
  out.complete(stmt.materializedView ? "CREATE MATERIALIZED VIEW" : "CREATE FLOW");
}

void ReplaceRequests::start() {
  thread_ = std::thread([this] { run(); });
  pthread_setname_np(thread_.native_handle(), "replace-requests");
}

void ReplaceRequests::wake() {
  std::lock_guard lock(mu_);
  woken_ = true;
  cv_.notify_all();
}

void ReplaceRequests::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ReplaceRequests::run() {
  // A statement it runs ends when the server shuts down.
  InterruptScope interrupt(
      [](const void* self) {
        auto* r = static_cast<ReplaceRequests*>(const_cast<void*>(self));
        std::lock_guard lock(r->mu_);
        return r->stop_;
      },
      this);
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, kRequestRound, [&] { return stop_ || woken_; });
      if (stop_) return;
      woken_ = false;
    }
    std::vector<std::pair<std::string, ReplaceRequest>> todo;
    {
      // Never waits behind a statement: it looks again next round.
      std::unique_lock lock(ctx_.statements.mutex(), std::try_to_lock);
      if (!lock.owns_lock()) continue;
      for (const auto& f : ctx_.catalog.flows()) {
        const std::string name = toLower(f->name);
        const FlowControl control = ctx_.flows.control(name);
        std::optional<ReplaceRequest> req = replaceRequestOf(control.settings);
        if (!req) continue;
        // The node that runs it, once it runs it (a node that took the flow
        // over restores its state first) or holds it stopped.
        FlowRuntime* rt = ctx_.flows.findRuntime(name);
        if (!rt || !ctx_.flows.runsHere(name, rt)) continue;
        if (rt->state() != FlowState::Running && control.wantRunning) continue;
        todo.emplace_back(name, std::move(*req));
      }
    }
    for (const auto& [flow, req] : todo) {
      try {
        runOne(flow, req);
      } catch (const std::exception& e) {
        logLine(fmt::format("replace request {} of flow \"{}\": {}", req.id, flow, e.what()));
      }
    }
  }
}

bool ReplaceRequests::runOne(const std::string& flow, const ReplaceRequest& req) {
  EngineSession s;
  s.user = req.user;
  for (const auto& [k, v] : req.settings) s.settings.set(k, v);
  ReplayWriter discard;
  std::optional<SqlError> refused;
  try {
    std::vector<ast::StatementPtr> stmts = parseStatements(req.sql);
    const bool isReplace =
        stmts.size() == 1 && stmts.front()->kind == ast::StatementKind::CreateFlow &&
        static_cast<const ast::CreateFlow&>(*stmts.front()).orReplace &&
        toLower(static_cast<const ast::CreateFlow&>(*stmts.front()).name) == flow;
    if (!isReplace) throw SqlError(sqlstate::kIoError, "the request is not a replace of the flow");
    ctx_.dispatch->executeStatement(s, *stmts.front(), discard);
  } catch (const SqlError& e) {
    // Another node's write came between: next round.
    if (e.sqlstate() == sqlstate::kSerializationFailure) return false;
    refused = e;
  }
  // The replace's own write dropped the request; one that changed nothing
  // (the flow runs that plan already) or was refused drops it here.
  std::lock_guard lock(ctx_.statements.mutex());
  if (!ctx_.catalog.findFlow(flow)) return true;
  FlowControl control = ctx_.flows.control(flow);
  std::optional<ReplaceRequest> now = replaceRequestOf(control.settings);
  if (refused && (!now || now->id != req.id)) {
    // Written, and only the new plan's start failed: the supervisor starts
    // it again, as after a restart.
    logLine(fmt::format("replace request {} of flow \"{}\": done; the new plan did not start "
                        "yet: {}",
                        req.id, flow, refused->message()));
    return true;
  }
  if (now && now->id == req.id) {
    eraseRequest(control.settings);
    if (refused) control.settings.emplace_back(kReplaceRefusalSetting, formatRefusal(req.id, *refused));
    CatalogChange change;
    change.flow = flow;
    change.control = &control;
    try {
      ctx_.persistCatalog(change);
    } catch (const SqlError&) {
      return false;  // next round
    }
    ctx_.flows.updateControl(flow, [&](FlowControl& c) { c.settings = control.settings; });
  }
  logLine(fmt::format("replace request {} of flow \"{}\": {}", req.id, flow,
                      refused ? "refused: " + refused->message() : std::string("done")));
  return true;
}

}  // namespace rtsql
