#include "client/shell.h"

#include <editline/readline.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>

#include "client/backslash.h"
#include "client/completion.h"
#include "common/sql_text.h"

namespace rtsql::client {

namespace {

constexpr const char* kPrompt = "rtsql> ";
constexpr const char* kContinuation = "    -> ";
constexpr int kHistorySize = 2000;

std::string historyPath() {
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return {};
  return std::string(home) + "/.rtsql_history";
}

std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// Brings a lost connection back before a statement; false (after saying why)
// when the server is still unreachable.
bool ensureConnected(Connection& conn) {
  if (conn.connected()) return true;
  std::cerr << "rtsql: reconnecting to " << conn.endpoint() << "...\n";
  if (conn.reset()) {
    std::cerr << "rtsql: reconnected\n";
    return true;
  }
  std::cerr << "rtsql: could not reconnect: " << conn.lastError() << '\n';
  return false;
}

// Completion runs inside readline's callback, which carries no user data, so
// the shell's state it needs is kept here for the session.
struct CompletionState {
  Connection* conn = nullptr;
  // The lines of the statement typed before the current one.
  const std::string* buffer = nullptr;
  ObjectNames names;
  std::chrono::steady_clock::time_point fetched{};
  bool haveNames = false;
  std::vector<std::string> functions;
  std::chrono::steady_clock::time_point functionsFetched{};
  bool haveFunctions = false;
  std::vector<std::string> matches;
  size_t next = 0;
};
CompletionState g_completion;

// Object names are cached briefly: a burst of Tab presses asks the server
// once, and objects created a moment ago still show up soon.
constexpr auto kNameCacheTtl = std::chrono::seconds(5);

std::vector<std::string> firstColumn(Connection& conn, const char* sql) {
  std::vector<std::string> out;
  const Outcome outcome = conn.execute(sql);
  if (outcome.error) return out;
  for (const auto& result : outcome.results) {
    for (const auto& row : result.rows) {
      if (!row.empty() && row[0]) out.push_back(*row[0]);
    }
  }
  return out;
}

const ObjectNames& objectNames() {
  CompletionState& st = g_completion;
  const auto now = std::chrono::steady_clock::now();
  if (st.haveNames && now - st.fetched < kNameCacheTtl) return st.names;
  if (st.conn == nullptr || !st.conn->connected()) return st.names;
  st.names.sources = firstColumn(*st.conn, "SHOW SOURCES");
  st.names.sinks = firstColumn(*st.conn, "SHOW SINKS");
  st.names.tables = firstColumn(*st.conn, "SHOW TABLES");
  st.names.flows = firstColumn(*st.conn, "SHOW FLOWS");
  st.fetched = now;
  st.haveNames = true;
  return st.names;
}

// The functions the server has, cached like the object names.
const std::vector<std::string>& functionNames() {
  CompletionState& st = g_completion;
  const auto now = std::chrono::steady_clock::now();
  if (st.haveFunctions && now - st.functionsFetched < kNameCacheTtl) return st.functions;
  if (st.conn == nullptr || !st.conn->connected()) return st.functions;
  st.functions = firstColumn(*st.conn, "SHOW FUNCTIONS");
  st.functionsFetched = now;
  st.haveFunctions = true;
  return st.functions;
}

extern "C" char* nextMatch(const char*, int state) {
  CompletionState& st = g_completion;
  if (state == 0) st.next = 0;
  if (st.next >= st.matches.size()) return nullptr;
  // readline frees each match with free().
  return strdup(st.matches[st.next++].c_str());
}

extern "C" char** completeWord(const char* text, int start, int) {
  CompletionState& st = g_completion;
  // No file-name completion when nothing fits: it never helps in SQL.
  rl_attempted_completion_over = 1;
  std::string before;
  if (st.buffer != nullptr && !st.buffer->empty()) before = *st.buffer + "\n";
  before.append(rl_line_buffer, static_cast<size_t>(start));
  // \i takes a file name: readline's own file-name completion fits there.
  const size_t first = before.find_first_not_of(" \t");
  if (first != std::string::npos && before.compare(first, 3, "\\i ") == 0) {
    rl_attempted_completion_over = 0;
    return nullptr;
  }
  ObjectNames names;
  if (completionWantsNames(before)) names = objectNames();
  if (completionWantsFunctions(before)) names.functions = functionNames();
  // libedit treats '\\' as an escape and leaves it out of the word, so a
  // backslash command arrives as "\\" before the word "ti"; complete it whole
  // and hand back the rest of the name.
  const std::string_view head(before);
  if (head.find_first_not_of(" \t") != std::string_view::npos &&
      head.substr(head.find_first_not_of(" \t")) == "\\") {
    st.matches = completionCandidates("", std::string("\\") + text, names);
    for (auto& m : st.matches) m.erase(0, 1);
  } else {
    st.matches = completionCandidates(before, text, names);
  }
  if (st.matches.empty()) return nullptr;
  return rl_completion_matches(text, nextMatch);
}

// Runs `sql` as typed in the REPL: variables substituted, reconnecting first
// when the connection dropped.
RunStatus runInteractive(Connection& conn, const std::string& sql, const RunOptions& options) {
  if (!ensureConnected(conn)) return RunStatus::kConnectionLost;
  const std::string text = substituteVariables(sql, options.variables);
  const RunStatus status = runStatements(conn, text, "", options, std::cout, std::cerr);
  if (status == RunStatus::kConnectionLost) {
    std::cerr << "rtsql: the next statement will try to reconnect\n";
  }
  return status;
}

// Waits `seconds`, in short steps so that Ctrl-C ends the wait at once;
// false when it was interrupted.
bool sleepUnlessInterrupted(double seconds) {
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(seconds));
  while (std::chrono::steady_clock::now() < until) {
    if (takeInterrupt()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return !takeInterrupt();
}

// \watch: runs `sql` every `seconds` under a header with the time, until
// Ctrl-C or until a round fails.
void watch(Connection& conn, const std::string& sql, double seconds, const RunOptions& options) {
  takeInterrupt();
  for (;;) {
    const std::time_t now = std::time(nullptr);
    char stamp[64] = "";
    std::tm local{};
    if (localtime_r(&now, &local) != nullptr) {
      std::strftime(stamp, sizeof stamp, "%a %b %e %H:%M:%S %Y", &local);
    }
    std::cout << stamp << " (every " << seconds << "s)\n\n";
    std::cout.flush();
    const RunStatus status = runInteractive(conn, sql, options);
    if (takeInterrupt() || status != RunStatus::kOk) break;
    std::cout << '\n';
    if (!sleepUnlessInterrupted(seconds)) break;
  }
  std::cout << '\n';
}

}  // namespace

std::string shellHelp() {
  return "Statements end with ';' and may span several lines.\n"
         "  \\flows          list flows (SHOW FLOWS)\n"
         "  \\sources        list sources (SHOW SOURCES)\n"
         "  \\sinks          list sinks (SHOW SINKS)\n"
         "  \\tables         list tables (SHOW TABLES)\n"
         "  \\progress FLOW  show a flow's progress (SHOW PROGRESS FLOW)\n"
         "  \\d [NAME]       list every object, or describe one: columns and options,\n"
         "                  and for a flow its plan (DESCRIBE NAME, EXPLAIN FLOW NAME)\n"
         "  \\i FILE         run the statements and commands of FILE; stops at its\n"
         "                  first error\n"
         "  \\timing [on|off] print how long each statement took\n"
         "  \\watch [SEC]    re-run the last statement every SEC seconds (default 2)\n"
         "                  until Ctrl-C\n"
         "  \\r              discard the statement being typed\n"
         "  \\q              quit (Ctrl-D does too)\n"
         "  \\?              this help\n"
         "Statements may use variables set with -v NAME=VALUE as :NAME, :'NAME'\n"
         "(a quoted string) or :\"NAME\" (a quoted identifier).\n"
         "Tab completes keywords, the server's functions and the names of sources,\n"
         "sinks, tables and flows; after \\i it completes file names.\n"
         "Ctrl-C cancels the running statement (a live SELECT runs until its LIMIT\n"
         "or until cancelled) and discards the line being typed.\n"
         "History is kept in ~/.rtsql_history.\n";
}

int runShell(Connection& conn, const RunOptions& initialOptions) {
  RunOptions options = initialOptions;
  std::string buffer;
  // The statement run last, repeated by \watch.
  std::string lastStatement;

  rl_readline_name = "rtsql";
  g_completion.conn = &conn;
  g_completion.buffer = &buffer;
  rl_attempted_completion_function = completeWord;
  // Completion works on whole words; '.' and ':' are not part of names here.
  static char wordBreaks[] = " \t\n\"'`@$><=;|&{(,)";
  rl_completer_word_break_characters = wordBreaks;
  using_history();
  stifle_history(kHistorySize);
  const std::string history = historyPath();
  if (!history.empty()) read_history(history.c_str());

  if (!options.print.quiet) {
    std::cout << "rtsql connected to " << conn.endpoint();
    const std::string version = conn.serverVersion();
    if (!version.empty()) std::cout << " (server " << version << ")";
    std::cout << ". Type \\? for help, \\q to quit.\n";
  }

  // The entry added last in this session: repeating a statement does not fill
  // the history with copies of it.
  std::string lastEntry;
  auto remember = [&](const std::string& entry) {
    if (entry == lastEntry) return;
    add_history(entry.c_str());
    lastEntry = entry;
    if (!history.empty()) write_history(history.c_str());
  };
  for (;;) {
    char* raw = readline(buffer.empty() ? kPrompt : kContinuation);
    if (raw == nullptr) {
      if (takeInterrupt()) {
        // Ctrl-C at the prompt drops what was typed and starts over.
        std::cout << '\n';
        buffer.clear();
        continue;
      }
      std::cout << '\n';
      break;
    }
    std::string line(raw);
    std::free(raw);
    if (takeInterrupt()) {
      buffer.clear();
      continue;
    }

    const std::string_view command = trim(line);
    if (buffer.empty() && !command.empty() && command.front() == '\\') {
      remember(std::string(command));
      // Variables work in commands too: \progress :flow.
      const BackslashCommand cmd =
          parseBackslash(substituteVariables(command, options.variables));
      if (cmd.kind == BackslashKind::kQuit) break;
      switch (cmd.kind) {
        case BackslashKind::kHelp:
          std::cout << shellHelp();
          break;
        case BackslashKind::kReset:
          buffer.clear();
          std::cout << "Statement discarded.\n";
          break;
        case BackslashKind::kTiming:
          options.timing = cmd.timing == TimingMode::kToggle ? !options.timing
                                                             : cmd.timing == TimingMode::kOn;
          std::cout << "Timing is " << (options.timing ? "on" : "off") << ".\n";
          break;
        case BackslashKind::kWatch:
          if (lastStatement.empty()) {
            std::cerr << "rtsql: \\watch needs a statement to repeat; run one first\n";
          } else {
            watch(conn, lastStatement, cmd.seconds, options);
          }
          break;
        case BackslashKind::kInvalid:
          std::cerr << "rtsql: " << cmd.error << '\n';
          break;
        case BackslashKind::kInclude:
          if (ensureConnected(conn)) runInclude(conn, cmd.argument, options, std::cout, std::cerr);
          break;
        case BackslashKind::kDescribe:
          if (ensureConnected(conn)) {
            runDescribe(conn, cmd.argument, "", options, std::cout, std::cerr);
          }
          break;
        default:
          runInteractive(conn, backslashSql(cmd), options);
          break;
      }
      takeInterrupt();
      continue;
    }
    if (!buffer.empty() && !command.empty() && command.front() == '\\') {
      // Inside a statement only \r (discard) and \q make sense.
      remember(std::string(command));
      const BackslashCommand cmd = parseBackslash(command);
      if (cmd.kind == BackslashKind::kQuit) break;
      if (cmd.kind == BackslashKind::kReset) {
        buffer.clear();
        std::cout << "Statement discarded.\n";
      } else {
        std::cerr << "rtsql: finish the statement with ';' or discard it with \\r first\n";
      }
      continue;
    }
    if (buffer.empty() && command.empty()) continue;

    if (!buffer.empty()) buffer += '\n';
    buffer += line;
    if (!endsStatement(buffer)) continue;

    remember(buffer);
    lastStatement = buffer;
    runInteractive(conn, buffer, options);
    takeInterrupt();
    buffer.clear();
  }

  if (!history.empty()) write_history(history.c_str());
  return kExitOk;
}

}  // namespace rtsql::client
