// The seam between the wire protocol and the engine. A pgwire connection hands
// each query string to a QueryHandler, which runs its statements in order and
// reports results through a ResultWriter; the connection turns those calls into
// RowDescription / DataRow / CommandComplete / ErrorResponse messages. Neither
// side knows the other's internals, so the protocol can be tested with a fake
// engine and the engine without sockets.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"

namespace rtsql {

// PostgreSQL type OIDs for the columns we return.
namespace pgtype {
inline constexpr uint32_t kBool = 16;
inline constexpr uint32_t kBytea = 17;
inline constexpr uint32_t kInt8 = 20;
inline constexpr uint32_t kInt4 = 23;
inline constexpr uint32_t kText = 25;
inline constexpr uint32_t kJson = 114;
inline constexpr uint32_t kFloat8 = 701;
inline constexpr uint32_t kDate = 1082;
inline constexpr uint32_t kTimestamp = 1114;
inline constexpr uint32_t kTimestamptz = 1184;
inline constexpr uint32_t kInterval = 1186;
inline constexpr uint32_t kNumeric = 1700;
}  // namespace pgtype

struct ResultColumn {
  std::string name;
  uint32_t typeOid = pgtype::kText;
};

// Receives one statement's results. Calls come in this order for a statement
// that returns rows: columns(), row()*, complete(); for one that does not:
// complete(); on failure: error() (possibly after some rows). Values are in text
// format; the wire layer converts them when a client asks for binary.
class ResultWriter {
 public:
  virtual ~ResultWriter() = default;
  virtual void columns(const std::vector<ResultColumn>& cols) = 0;
  virtual void row(const std::vector<std::optional<std::string>>& values) = 0;
  virtual void complete(const std::string& commandTag) = 0;  // "CREATE SOURCE", "SELECT 3"
  virtual void error(const SqlError& err) = 0;
  virtual void notice(const std::string& message) = 0;
  // A WARNING with its SQLSTATE (COMMIT outside a transaction block: 25P01);
  // a writer that has no severities sends it as a notice.
  virtual void warning(const std::string& sqlstate, const std::string& message) {
    (void)sqlstate;
    notice(message);
  }
  // A run-time parameter the client is told of when a statement changes it
  // (PostgreSQL's ParameterStatus: SET TIME ZONE reports TimeZone); a writer
  // without such messages drops it.
  virtual void parameterStatus(const std::string& name, const std::string& value) {
    (void)name;
    (void)value;
  }
  // True once the client has gone away or asked to cancel: long statements
  // (live queries) stop early.
  virtual bool cancelled() const { return false; }
  // What of cancelled() another thread may ask (the client asked to cancel
  // or went away, a deadline passed), for the watchdog that interrupts
  // Python calls: it reads only atomics and the clock and never waits.
  virtual bool cancelledFromAnyThread() const { return false; }
};

// Per-connection state the engine keeps (session settings, user name).
// The writer for statements the server replays itself (its catalog at a
// restart, a cluster's catalog changes): results are dropped, and an error
// reaches the caller as an exception.
class ReplayWriter final : public ResultWriter {
 public:
  void columns(const std::vector<ResultColumn>&) override {}
  void row(const std::vector<std::optional<std::string>>&) override {}
  void complete(const std::string&) override {}
  void error(const SqlError& err) override { throw err; }
  void notice(const std::string&) override {}
};

class Session {
 public:
  virtual ~Session() = default;
  // The process ID the connection gave the client (BackendKeyData), which
  // pg_backend_pid() returns; 0 for a session of no connection.
  int32_t backendPid = 0;
  // The node that sent this session's reads here on its client's behalf
  // (server/views/view_forward.h); empty for a client's own session. Such
  // a session never forwards a read again.
  std::string forwardedBy;
};

// A statement a handler recognised once and runs from then on with only its
// parameters bound, without parsing its text again: the extended protocol
// asks QueryHandler::prepare() at a prepared statement's first Describe or
// Execute and keeps the answer with the statement. Used by one connection at
// a time, so an implementation may change itself in execute().
class PreparedQuery {
 public:
  virtual ~PreparedQuery() = default;
  // The columns it returns.
  virtual const std::vector<ResultColumn>& columns() const = 0;
  // Runs it with `literals`, each `$n`'s SQL literal as Bind made it (NULL,
  // a number, TRUE/FALSE, a quoted string, a typed literal). Returns false,
  // having reported nothing, when it cannot: the caller then runs the
  // statement's text with the literals substituted. Otherwise reports
  // through `out` like QueryHandler::execute and never throws.
  virtual bool execute(Session& session, const std::vector<std::string>& literals,
                       ResultWriter& out) = 0;
  // execute() when it answers at once, at most one row, without blocking
  // (no wait, no file to open, no parsing, no lock held for long): the
  // connection then runs it on its own thread rather than handing it to a
  // worker and back. Returns false, having reported nothing, when it cannot;
  // execute() then runs on a worker.
  virtual bool executeNow(Session&, const std::vector<std::string>&, ResultWriter&) {
    return false;
  }
};

// Where a prepared statement's parameters are in the text given to prepare():
// each `$n` written there is a NULL at `at` standing for parameter `index`
// (0-based, so `$1` is 0).
struct ParameterAt {
  size_t at = 0;
  size_t index = 0;
};

class QueryHandler {
 public:
  virtual ~QueryHandler() = default;
  virtual std::unique_ptr<Session> openSession(const std::string& user,
                                               const std::string& database) = 0;
  // Runs every statement of `sql` in order; stops at the first error (which it
  // reports through out.error()). An empty query string reports nothing: the
  // caller answers EmptyQueryResponse. May block; never throws.
  virtual void execute(Session& session, const std::string& sql, ResultWriter& out) = 0;
  // The columns one statement would return, without running it: an empty
  // vector for a statement that returns no rows, nullopt when the handler
  // cannot tell. The extended query protocol asks this to answer Describe; on
  // nullopt it finds the columns by running the statement instead. May throw
  // SqlError when the statement is invalid (the client then gets that error).
  virtual std::optional<std::vector<ResultColumn>> describe(Session& /*session*/,
                                                            const std::string& /*sql*/) {
    return std::nullopt;
  }
  // The prepared form of one statement, `text` with NULL in place of each
  // parameter (`parameters` says where), when the handler has one for it:
  // null otherwise, and for any statement it cannot tell (the text is then
  // run at each Execute). Never throws.
  virtual std::shared_ptr<PreparedQuery> prepare(Session& /*session*/, const std::string& /*text*/,
                                                 const std::vector<ParameterAt>& /*parameters*/) {
    return nullptr;
  }
  // The columns of the session's cursor `name` (DECLARE ... CURSOR), which the
  // extended protocol's Describe of a portal of that name asks for, as
  // PostgreSQL's cursors are portals; nullopt when there is none.
  virtual std::optional<std::vector<ResultColumn>> describeCursor(Session& /*session*/,
                                                                  const std::string& /*name*/) {
    return std::nullopt;
  }
  // ReadyForQuery's transaction status for the session: 'I' idle, 'T' in a
  // transaction block, 'E' in a failed one. Read between statements, on the
  // connection's thread.
  virtual char transactionStatus(const Session& /*session*/) const { return 'I'; }
};

}  // namespace rtsql
