// What the HTTP endpoint reads: a small read-only interface over the server's
// flows and slots. The endpoint is written against it, not against the engine,
// so its routes, its metrics and its socket handling are tested with a fake;
// EngineSource (engine_source.h) is the real one.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"

namespace rtsql::http {

// One flow as SHOW FLOWS lists it, plus its progress JSON when asked for.
struct FlowStatus {
  std::string name;
  std::string sink;
  std::string state;  // SHOW FLOWS's: "running", "stopped", "failed", "recovering" or "remote"
  std::string error;  // SHOW FLOWS's reason (why it failed, where it runs...); empty for none
  std::optional<int> slots;  // none when the flow has no runtime yet
  std::string progressJson;  // SHOW PROGRESS's JSON; empty unless asked for
  bool materializedView = false;  // the flow of CREATE MATERIALIZED VIEW
};

struct SlotUsage {
  int used = 0;
  int total = 0;
};

// What a statement run for the console's SQL box returned (sql_endpoint.h),
// or the error it stopped at.
struct SqlResult {
  std::string command;  // the command tag: "SHOW", "EXPLAIN"
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::optional<SqlError> error;
  // Why the statement was stopped before it completed, with the rows it had
  // sent by then: "timeout", "max_rows" or "cancelled" (the client went away
  // or the server is stopping). Empty when it ran to its end.
  std::string stopped;
};

// How far one statement of the SQL box may run. A live SELECT runs until its
// LIMIT; these bound one without a LIMIT, or on a source with no new records.
struct SqlLimits {
  std::chrono::milliseconds timeout{10'000};
  size_t maxRows = 1000;
  // True once the statement must stop: the client closed the connection or
  // the endpoint is stopping. Polled while it runs; empty: never.
  std::function<bool()> cancelled;
};

// Every call may come from any thread, concurrently with statements and with
// the flows themselves; implementations only read snapshots and return quickly.
class Source {
 public:
  virtual ~Source() = default;
  // Every flow, in SHOW FLOWS order; with `withProgress`, each with its JSON.
  virtual std::vector<FlowStatus> flows(bool withProgress) const = 0;
  // SHOW PROGRESS <flow>'s JSON; nullopt when there is no such flow.
  virtual std::optional<std::string> progress(const std::string& flow) const = 0;
  virtual SlotUsage slots() const = 0;
  // The plan the flow runs, as JSON (planner/plan_json.h); nullopt when there
  // is no such flow or it has no plan (it is not running).
  virtual std::optional<std::string> planJson(const std::string& flow) const {
    (void)flow;
    return std::nullopt;
  }
  // Runs one statement, already checked to be read-only (sql_endpoint.h), as
  // `user`, within `limits`. Unlike the rest, it may take as long as the
  // statement does, up to limits.timeout; the endpoint calls it on a thread of
  // its own (http_server.h).
  virtual SqlResult runReadOnly(const std::string& user, const std::string& sql,
                                const SqlLimits& limits) const {
    (void)user;
    (void)sql;
    (void)limits;
    SqlResult r;
    r.error = SqlError(sqlstate::kFeatureNotSupported, "this server runs no SQL over HTTP");
    return r;
  }
};

}  // namespace rtsql::http
