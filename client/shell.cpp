#include "client/shell.h"

#include <editline/readline.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

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

}  // namespace

std::string shellHelp() {
  return "Statements end with ';' and may span several lines.\n"
         "  \\q          quit (Ctrl-D does too)\n"
         "  \\r          discard the statement being typed\n"
         "  \\?          this help\n"
         "Ctrl-C cancels the running statement (a live SELECT runs until its LIMIT\n"
         "or until cancelled) and discards the line being typed.\n"
         "History is kept in ~/.rtsql_history.\n";
}

int runShell(Connection& conn, const RunOptions& options) {
  rl_readline_name = "rtsql";
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

  std::string buffer;
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
    if (!command.empty() && command.front() == '\\') {
      remember(std::string(command));
      if (command == "\\q") break;
      if (command == "\\?") {
        std::cout << shellHelp();
      } else if (command == "\\r") {
        buffer.clear();
        std::cout << "Statement discarded.\n";
      } else {
        std::cerr << "rtsql: unknown command " << command << "; type \\? for help\n";
      }
      continue;
    }
    if (buffer.empty() && command.empty()) continue;

    if (!buffer.empty()) buffer += '\n';
    buffer += line;
    if (!endsStatement(buffer)) continue;

    remember(buffer);

    if (ensureConnected(conn)) {
      const RunStatus status = runStatements(conn, buffer, "", options, std::cout, std::cerr);
      if (status == RunStatus::kConnectionLost) {
        std::cerr << "rtsql: the next statement will try to reconnect\n";
      }
    }
    takeInterrupt();
    buffer.clear();
  }

  if (!history.empty()) write_history(history.c_str());
  return kExitOk;
}

}  // namespace rtsql::client
