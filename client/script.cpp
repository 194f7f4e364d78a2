#include "client/script.h"

#include <chrono>
#include <cstdio>
#include <ostream>
#include <string>

#include "client/backslash.h"
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

void printTiming(std::chrono::steady_clock::duration took, std::ostream& out) {
  const std::chrono::duration<double, std::milli> elapsed = took;
  char text[64];
  std::snprintf(text, sizeof text, "Time: %.3f ms\n", elapsed.count());
  out << text;
  out.flush();
}

namespace {

// Runs the statements in text[begin, end); offsets stay relative to `text` so
// diagnostics name the right line of the whole script.
RunStatus runRange(Connection& conn, std::string_view text, size_t begin, size_t end,
                   std::string_view sourceName, const RunOptions& options, std::ostream& out,
                   std::ostream& err) {
  for (auto statement : splitStatements(text.substr(begin, end - begin))) {
    statement.offset += begin;
    if (takeInterrupt()) return RunStatus::kInterrupted;
    if (options.echo) out << statement.text << ";\n";
    const auto started = std::chrono::steady_clock::now();
    const Outcome outcome = conn.execute(statement.text);
    const auto took = std::chrono::steady_clock::now() - started;
    printOutcome(outcome, options, out);
    if (outcome.connectionLost) {
      reportLost(conn, outcome, err);
      return RunStatus::kConnectionLost;
    }
    if (outcome.error) {
      err << formatError(*outcome.error, text, statement.offset, sourceName);
      err.flush();
      // Like psql, a failed statement's time follows its error.
      if (options.timing) printTiming(took, out);
      return RunStatus::kSqlError;
    }
    if (options.timing) printTiming(took, out);
  }
  return RunStatus::kOk;
}

std::string_view trimBlanks(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// Whether a script may have a backslash command here: no statement is left
// unfinished in text[begin, end).
bool atStatementBoundary(std::string_view chunk) {
  return splitStatements(chunk).empty() || endsStatement(chunk);
}

}  // namespace

RunStatus runStatements(Connection& conn, std::string_view text,
                        std::string_view sourceName, const RunOptions& options,
                        std::ostream& out, std::ostream& err) {
  return runRange(conn, text, 0, text.size(), sourceName, options, out, err);
}

RunStatus runScriptText(Connection& conn, std::string_view text, std::string_view sourceName,
                        const RunOptions& initialOptions, std::ostream& out,
                        std::ostream& err) {
  RunOptions options = initialOptions;
  size_t chunk = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view line = trimBlanks(text.substr(pos, eol - pos));
    const size_t next = eol < text.size() ? eol + 1 : eol;
    if (line.empty() || line.front() != '\\' ||
        !atStatementBoundary(text.substr(chunk, pos - chunk))) {
      pos = next;
      continue;
    }
    RunStatus status = runRange(conn, text, chunk, pos, sourceName, options, out, err);
    if (status != RunStatus::kOk) return status;
    chunk = pos = next;

    const int lineNo = lineAndColumn(text, static_cast<size_t>(line.data() - text.data())).first;
    auto fail = [&](const std::string& message) {
      err << (sourceName.empty() ? std::string_view("<script>") : sourceName) << ':' << lineNo
          << ": " << message << '\n';
      return RunStatus::kSqlError;
    };
    const BackslashCommand cmd = parseBackslash(line);
    switch (cmd.kind) {
      case BackslashKind::kQuit:
        return RunStatus::kOk;
      case BackslashKind::kTiming:
        options.timing = cmd.timing == TimingMode::kToggle ? !options.timing
                                                           : cmd.timing == TimingMode::kOn;
        break;
      case BackslashKind::kInvalid:
        return fail(cmd.error);
      case BackslashKind::kHelp:
      case BackslashKind::kReset:
      case BackslashKind::kWatch:
        return fail(std::string(line.substr(0, line.find(' '))) +
                    " works only in the interactive shell");
      default: {
        const std::string sql = backslashSql(cmd);
        if (options.echo) out << line << '\n';
        const auto started = std::chrono::steady_clock::now();
        const Outcome outcome = conn.execute(sql);
        const auto took = std::chrono::steady_clock::now() - started;
        printOutcome(outcome, options, out);
        if (outcome.connectionLost) {
          reportLost(conn, outcome, err);
          return RunStatus::kConnectionLost;
        }
        if (outcome.error) {
          err << (sourceName.empty() ? std::string_view("<script>") : sourceName) << ':'
              << lineNo << ": in " << line << ":\n"
              << formatError(*outcome.error, sql, 0);
          return RunStatus::kSqlError;
        }
        if (options.timing) printTiming(took, out);
        break;
      }
    }
  }
  return runRange(conn, text, chunk, text.size(), sourceName, options, out, err);
}

int runScript(Connection& conn, std::string_view text, std::string_view sourceName,
              const RunOptions& options, std::ostream& out, std::ostream& err) {
  // Substituting the whole script first keeps error positions pointing into
  // the text that was actually sent.
  const std::string substituted = substituteVariables(text, options.variables);
  const RunStatus status = runScriptText(conn, substituted, sourceName, options, out, err);
  if (status == RunStatus::kInterrupted) err << "rtsql: interrupted\n";
  return exitCodeFor(status);
}

int runCommand(Connection& conn, std::string_view text, const RunOptions& options,
               std::ostream& out, std::ostream& err) {
  const std::string sql = substituteVariables(text, options.variables);
  if (options.echo) out << sql << '\n';
  const auto started = std::chrono::steady_clock::now();
  const Outcome outcome = conn.execute(sql);
  const auto took = std::chrono::steady_clock::now() - started;
  printOutcome(outcome, options, out);
  if (options.timing) printTiming(took, out);
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
