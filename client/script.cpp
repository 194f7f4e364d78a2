#include "client/script.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <ostream>
#include <sstream>
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

namespace {

bool readFile(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return false;
  *text = buffer.str();
  return true;
}

// Runs one statement a command stands for; errors name the command and, in a
// script, its place (`where`).
RunStatus runCommandSql(Connection& conn, const std::string& sql, std::string_view where,
                        std::string_view line, const RunOptions& options, std::ostream& out,
                        std::ostream& err, Outcome* kept = nullptr) {
  const auto started = std::chrono::steady_clock::now();
  Outcome outcome = conn.execute(sql);
  const auto took = std::chrono::steady_clock::now() - started;
  if (kept == nullptr) printOutcome(outcome, options, out);
  if (outcome.connectionLost) {
    reportLost(conn, outcome, err);
    return RunStatus::kConnectionLost;
  }
  if (outcome.error) {
    if (!where.empty()) err << where << ": in " << line << ":\n";
    err << formatError(*outcome.error, sql, 0);
    err.flush();
    return RunStatus::kSqlError;
  }
  if (options.timing) printTiming(took, out);
  if (kept != nullptr) *kept = std::move(outcome);
  return RunStatus::kOk;
}

RunStatus runScriptTextAt(Connection& conn, std::string_view text, std::string_view sourceName,
                          const RunOptions& initialOptions, std::ostream& out, std::ostream& err,
                          int depth) {
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
    const std::string where =
        std::string(sourceName.empty() ? std::string_view("<script>") : sourceName) + ':' +
        std::to_string(lineNo);
    auto fail = [&](const std::string& message) {
      err << where << ": " << message << '\n';
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
      case BackslashKind::kInclude:
        if (options.echo) out << line << '\n';
        if (depth + 1 > kMaxIncludeDepth) {
          return fail("\\i nested more than " + std::to_string(kMaxIncludeDepth) + " deep; does " +
                      cmd.argument + " include itself?");
        }
        status = runInclude(conn, cmd.argument, options, out, err, depth + 1, where);
        if (status != RunStatus::kOk) return status;
        break;
      case BackslashKind::kDescribe:
        if (options.echo) out << line << '\n';
        status = runDescribe(conn, cmd.argument, where, options, out, err);
        if (status != RunStatus::kOk) return status;
        break;
      default:
        if (options.echo) out << line << '\n';
        status = runCommandSql(conn, backslashSql(cmd), where, line, options, out, err);
        if (status != RunStatus::kOk) return status;
        break;
    }
  }
  return runRange(conn, text, chunk, text.size(), sourceName, options, out, err);
}

}  // namespace

RunStatus runScriptText(Connection& conn, std::string_view text, std::string_view sourceName,
                        const RunOptions& options, std::ostream& out, std::ostream& err) {
  return runScriptTextAt(conn, text, sourceName, options, out, err, 0);
}

RunStatus runInclude(Connection& conn, const std::string& path, const RunOptions& options,
                     std::ostream& out, std::ostream& err, int depth, std::string_view where) {
  std::string text;
  if (!readFile(path, &text)) {
    err << (where.empty() ? std::string_view("rtsql") : where) << ": \\i: cannot read " << path
        << ": " << std::strerror(errno) << '\n';
    return RunStatus::kSqlError;
  }
  const std::string substituted = substituteVariables(text, options.variables);
  return runScriptTextAt(conn, substituted, path, options, out, err, depth);
}

RunStatus runDescribe(Connection& conn, const std::string& name, std::string_view where,
                      const RunOptions& options, std::ostream& out, std::ostream& err) {
  const std::string line = name.empty() ? std::string("\\d") : "\\d " + name;
  // Several statements make one command: its time is printed once, at the end.
  RunOptions untimed = options;
  untimed.timing = false;
  const auto started = std::chrono::steady_clock::now();
  auto finish = [&] {
    if (options.timing) printTiming(std::chrono::steady_clock::now() - started, out);
    return RunStatus::kOk;
  };
  if (!name.empty()) {
    Outcome described;
    RunStatus status =
        runCommandSql(conn, "DESCRIBE " + name, where, line, untimed, out, err, &described);
    if (status != RunStatus::kOk) return status;
    printOutcome(described, options, out);
    // DESCRIBE marks a flow's rows with the kind "flow"; its plan follows.
    bool flow = false;
    for (const auto& result : described.results) {
      for (const auto& row : result.rows) {
        if (row.size() >= 3 && row[2] && *row[2] == "flow") flow = true;
      }
    }
    if (flow) {
      status = runCommandSql(conn, "EXPLAIN FLOW " + name, where, line, untimed, out, err);
      if (status != RunStatus::kOk) return status;
    }
    return finish();
  }
  // Every object, as psql's \d lists relations: one table of names and kinds.
  ResultSet all;
  all.hasRows = true;
  all.columns = {{"name"}, {"type"}};
  static const std::pair<const char*, const char*> kLists[] = {{"SHOW SOURCES", "source"},
                                                               {"SHOW SINKS", "sink"},
                                                               {"SHOW TABLES", "table"},
                                                               {"SHOW FLOWS", "flow"}};
  for (const auto& [sql, kind] : kLists) {
    Outcome listed;
    const RunStatus status = runCommandSql(conn, sql, where, line, untimed, out, err, &listed);
    if (status != RunStatus::kOk) return status;
    for (const auto& result : listed.results) {
      for (const auto& row : result.rows) {
        if (!row.empty() && row[0]) all.rows.push_back({row[0], std::string(kind)});
      }
    }
  }
  all.tag = "SHOW " + std::to_string(all.rows.size());
  out << formatResult(all, options.print);
  out.flush();
  return finish();
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

int runScriptInOneTransaction(Connection& conn, std::string_view text, std::string_view sourceName,
                              const RunOptions& options, std::ostream& out, std::ostream& err) {
  Outcome quiet;
  RunStatus status = runCommandSql(conn, "BEGIN", {}, "BEGIN", options, out, err, &quiet);
  if (status != RunStatus::kOk) return exitCodeFor(status);
  const std::string substituted = substituteVariables(text, options.variables);
  status = runScriptText(conn, substituted, sourceName, options, out, err);
  if (status == RunStatus::kOk) {
    // A COMMIT the server cannot apply answers an error, and then nothing was.
    status = runCommandSql(conn, "COMMIT", {}, "COMMIT", options, out, err, &quiet);
    if (status == RunStatus::kSqlError) err << "rtsql: the transaction was rolled back\n";
    return exitCodeFor(status);
  }
  if (status == RunStatus::kInterrupted) err << "rtsql: interrupted\n";
  if (status != RunStatus::kConnectionLost) {
    runCommandSql(conn, "ROLLBACK", {}, "ROLLBACK", options, out, err, &quiet);
    err << "rtsql: the transaction was rolled back: nothing of the script was applied\n";
  }
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
