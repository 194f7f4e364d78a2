// The extended query protocol (Parse, Bind, Describe, Execute, Close, Flush,
// Sync): the per-connection state of prepared statements and portals, and the
// value conversions it needs. Its messages are encoded and decoded in
// codec.h. Internal to the pgwire server.
//
// rtsql parses a statement each time it runs, so a bound parameter is not kept
// apart from the text: Bind turns each `$n` into a SQL literal of its value
// (text quoted with '' escaping, numbers as they are, NULL) and the portal runs
// that text. Error positions the engine reports in the substituted text are
// mapped back to the text the client sent.
//
// Everything here except ExtendedProtocol is plain data and byte work, tested
// on strings; ExtendedProtocol (extended_connection.cpp) drives a Connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/error.h"
#include "server/pgwire/codec.h"
#include "server/query_handler.h"

namespace rtsql::pgwire {

// Type OIDs the extended protocol converts besides those in pgtype.
namespace extype {
inline constexpr uint32_t kUnspecified = 0;
inline constexpr uint32_t kName = 19;
inline constexpr uint32_t kInt2 = 21;
inline constexpr uint32_t kOid = 26;
inline constexpr uint32_t kFloat4 = 700;
inline constexpr uint32_t kUnknown = 705;
inline constexpr uint32_t kBpchar = 1042;
inline constexpr uint32_t kVarchar = 1043;
inline constexpr uint32_t kNumeric = 1700;
inline constexpr uint32_t kJsonb = 3802;
}  // namespace extype

// ---- Statement text -----------------------------------------------------------------

// The highest `$n` in `sql` (0 when there is none). `$` inside quotes, comments
// and identifiers (a$1) is not a parameter. Throws SqlError 42P02 for `$0` or a
// number above 65535, with the position of the `$`.
size_t countParameters(std::string_view sql);

// `sql` with every `$n` replaced by literals[n-1], and the map back to `sql`.
struct BoundStatement {
  struct Replacement {
    size_t at = 0;           // in text
    size_t length = 0;       // in text
    size_t originalAt = 0;   // in the original statement
    size_t originalLength = 0;
    size_t parameter = 0;  // which `$n` it replaced (0-based)
  };
  std::string text;
  std::vector<Replacement> replacements;  // in text order

  // The byte offset in the original statement that `offset` in `text` comes
  // from; an offset inside a substituted literal maps to its `$n`.
  size_t originalOffset(size_t offset) const;
  // `err` with its position moved from `text` to the text the client wrote.
  SqlError mapError(SqlError err) const;
};
BoundStatement substituteParameters(std::string_view sql, const std::vector<std::string>& literals);

// The SQL literal for one parameter value of type `typeOid` sent in `format`:
// NULL, a number, TRUE/FALSE or a quoted string. Throws SqlError 22P02 when a
// value does not fit its declared type, 0A000 for a binary format we do not
// decode, 08P01 for a binary value of the wrong size.
std::string parameterLiteral(const std::optional<std::string>& value, uint32_t typeOid,
                             int16_t format);

// Whether a column of this type can be sent in binary format.
bool binaryResultSupported(uint32_t typeOid);
// The binary wire form of a text-format value of the given type. Throws
// SqlError 0A000 for an unsupported type, 22P02 for a value that does not parse.
std::string encodeBinaryValue(std::string_view text, uint32_t typeOid);

// Whether the statement returns rows, judged by its first keyword (SELECT,
// SHOW, DESCRIBE, EXPLAIN, VALUES, WITH, TABLE, FETCH or a parenthesis): the others
// answer Describe with NoData without being run.
bool returnsRows(std::string_view sql);

// For `DEALLOCATE [PREPARE] { name | ALL }` (PostgreSQL's SQL for dropping
// prepared statements, which drivers such as psycopg send): the statement name,
// or "" for ALL. nullopt for any other text. Prepared statements live in the
// protocol layer, so the protocol layer answers this statement itself.
std::optional<std::string> deallocateTarget(std::string_view sql);

// The format of each of `columnCount` columns from Bind's result format codes.
// Throws SqlError 08P01 when the count fits neither rule, 0A000 when a binary
// column has a type we cannot send in binary (the message names the format).
std::vector<int16_t> resultFormatsFor(const std::vector<int16_t>& codes,
                                      const std::vector<ResultColumn>& columns);

// ---- Per-connection state ---------------------------------------------------------

struct PreparedStatement {
  std::string sql;
  std::vector<uint32_t> paramTypes;  // one per parameter; 0 = unspecified
  bool returnsRows = false;
  std::optional<std::vector<ResultColumn>> columns;  // once learned
  // The handler's prepared form of it (QueryHandler::prepare), asked once,
  // at its first Describe or Execute; null when the handler has none.
  std::shared_ptr<PreparedQuery> prepared;
  bool prepareAsked = false;
  bool named = false;  // not the unnamed statement, which is never prepared
};

struct Portal {
  std::string name;
  std::string sql;  // as the client wrote it, for error positions
  BoundStatement bound;
  // The statement it was bound from, and each parameter's literal: what a
  // prepared form of the statement runs with instead of `bound`.
  std::shared_ptr<PreparedStatement> statement;
  std::vector<std::string> literals;
  bool returnsRows = false;
  std::vector<int16_t> resultFormats;  // Bind's codes
  std::optional<std::vector<ResultColumn>> columns;  // once learned
  bool started = false;  // executed; what remains is below
  // DataRow messages produced beyond an Execute's row limit, and the message
  // that follows them (CommandComplete or ErrorResponse).
  std::deque<std::string> buffered;
  size_t bufferedBytes = 0;
  std::string tail;
  bool tailIsError = false;
  std::string completedTag;  // the handler's CommandComplete tag, once done
};

// A portal's run stopped at an Execute's row limit while its statement goes on
// producing rows (a live query). Its worker waits inside the statement, which
// keeps the statement's state; the connection tells it, under its output lock,
// to go on with the next Execute's row limit or to end.
struct SuspendedRun {
  enum class Next { kWait, kResume, kEnd };
  std::shared_ptr<Portal> portal;
  Next next = Next::kWait;
  int32_t maxRows = 0;  // with kResume; 0: no limit
};

struct ExtendedState {
  std::unordered_map<std::string, std::shared_ptr<PreparedStatement>> statements;
  std::unordered_map<std::string, std::shared_ptr<Portal>> portals;
  // The suspended run, if any. While it waits no other statement runs, so
  // the session is never used by two statements at once: Execute and
  // Describe of its portal, and Flush, leave it waiting; any other message
  // ends it first.
  std::shared_ptr<SuspendedRun> suspended;
  // A Describe of a portal whose columns are unknown waits for the next
  // message: when that is an Execute of the same portal, one run answers both.
  std::optional<std::string> deferredDescribe;
};

class Connection;
struct Description;

// The connection's handling of extended-protocol messages; strand only unless
// marked. A friend of Connection.
class ExtendedProtocol {
 public:
  // Parse, Bind, Describe, Execute, Close or Flush.
  static void handle(Connection& c, char type, std::string_view body);
  // Called for every message before it is handled: settles a deferred Describe
  // unless `type`/`body` is the Execute it waited for. Returns true when the
  // Describe now runs; the caller then puts the message back at the front of
  // the inbox, to be handled once the Describe is answered.
  static bool settleDeferred(Connection& c, char type, std::string_view body);
  // Called for every message before it is handled, like settleDeferred: ends
  // the suspended run unless `type`/`body` may leave it waiting. Returns true
  // when the run is ending; the caller then puts the message back at the
  // front of the inbox, to be handled once the run has ended.
  static bool settleSuspended(Connection& c, char type, std::string_view body);
  // Sync ends the implicit transaction, and with it every portal.
  static void sync(Connection& c);
  // A simple query the protocol layer answers itself (DEALLOCATE); returns
  // false for everything else, which goes to the handler.
  static bool simpleQuery(Connection& c, std::string_view sql);

  // Worker threads: output of a running job, and whether it should stop.
  static void sendFromWorker(Connection& c, std::string_view bytes);
  static bool cancelled(const Connection& c);
  // After PortalSuspended was sent: gives the connection back and waits for
  // the next Execute of `portal` (true, with its row limit in `maxRows`) or
  // for the run's end (false).
  static bool suspend(Connection& c, const std::shared_ptr<Portal>& portal, int32_t& maxRows);

 private:
  static void parse(Connection& c, std::string_view body);
  static void bind(Connection& c, std::string_view body);
  static void describe(Connection& c, std::string_view body);
  static void execute(Connection& c, std::string_view body);
  static void close(Connection& c, std::string_view body);
  static void resume(Connection& c, Portal& portal, int32_t maxRows);
  // Runs the portal's prepared form on the strand when it answers at once
  // (PreparedQuery::executeNow), its messages queued as one piece. Returns
  // false, having sent nothing, when the Execute is a worker's to run.
  static bool executeNow(Connection& c, Portal& portal, bool describeToo);
  // Hands the connection to the suspended run's worker with `next`.
  static void wakeSuspended(Connection& c, SuspendedRun::Next next, int32_t maxRows);
  // Sends an ErrorResponse and skips messages until Sync.
  static void fail(Connection& c, const SqlError& err, std::string_view sql);
  // Runs `job` on a worker thread while the connection handles no other
  // message; a job returns true when it sent an error.
  static void submit(Connection& c, std::function<bool()> job);
  // Worker thread: the statement's prepared form, asked of the handler the
  // first time (the statement is the worker's while it runs).
  static std::shared_ptr<PreparedQuery> preparedOnWorker(Connection& c, PreparedStatement& stmt);
  // Worker thread: the columns of `bound` (see describeStatement in describe.h).
  static Description describeOnWorker(Connection& c, const BoundStatement& bound);
};

}  // namespace rtsql::pgwire
