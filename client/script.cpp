#include "client/script.h"

#include <ostream>

#include "common/sql_text.h"

namespace rtsql::client {

namespace {

void printOutcome(const Outcome& outcome, const RunOptions& options, std::ostream& out) {
  for (const auto& result : outcome.results) out << formatResult(result, options.print);
  out.flush();
}

// A lost connection may still come with the server's reason (an ErrorResponse
// sent before it closed); that is shown first.
void reportLost(Connection& conn, const Outcome& outcome, std::ostream& err) {
  if (outcome.error && !outcome.error->sqlstate.empty()) {
    err << outcome.error->severity << " [" << outcome.error->sqlstate
        << "]: " << outcome.error->message << '\n';
  }
  err << "rtsql: connection to server at " << conn.endpoint() << " was lost";
  const std::string why = conn.lastError();
  if (!why.empty()) err << ": " << why;
  err << '\n';
}

int exitCodeFor(RunStatus status) {
  switch (status) {
    case RunStatus::kOk:
      return kExitOk;
    case RunStatus::kConnectionLost:
      return kExitConnection;
    case RunStatus::kSqlError:
    case RunStatus::kInterrupted:
      break;
  }
  return kExitSqlError;
}

}  // namespace

RunStatus runStatements(Connection& conn, std::string_view text,
                        std::string_view sourceName, const RunOptions& options,
                        std::ostream& out, std::ostream& err) {
  for (const auto& statement : splitStatements(text)) {
    if (takeInterrupt()) return RunStatus::kInterrupted;
    if (options.echo) out << statement.text << ";\n";
    const Outcome outcome = conn.execute(statement.text);
    printOutcome(outcome, options, out);
    if (outcome.connectionLost) {
      reportLost(conn, outcome, err);
      return RunStatus::kConnectionLost;
    }
    if (outcome.error) {
      err << formatError(*outcome.error, text, statement.offset, sourceName);
      err.flush();
      return RunStatus::kSqlError;
    }
  }
  return RunStatus::kOk;
}

int runScript(Connection& conn, std::string_view text, std::string_view sourceName,
              const RunOptions& options, std::ostream& out, std::ostream& err) {
  const RunStatus status = runStatements(conn, text, sourceName, options, out, err);
  if (status == RunStatus::kInterrupted) err << "rtsql: interrupted\n";
  return exitCodeFor(status);
}

int runCommand(Connection& conn, std::string_view sql, const RunOptions& options,
               std::ostream& out, std::ostream& err) {
  if (options.echo) out << sql << '\n';
  const Outcome outcome = conn.execute(sql);
  printOutcome(outcome, options, out);
  if (outcome.connectionLost) {
    reportLost(conn, outcome, err);
    return kExitConnection;
  }
  if (outcome.error) {
    err << formatError(*outcome.error, sql, 0);
    return kExitSqlError;
  }
  return kExitOk;
}

}  // namespace rtsql::client
