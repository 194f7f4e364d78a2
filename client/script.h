// Non-interactive runs of the shell: `-f file` (a script split into statements
// and sent one at a time, stopping at the first error) and `-c SQL` (one simple
// query). The statement runner here is shared with the REPL.
#pragma once

#include <chrono>
#include <iosfwd>
#include <string_view>

#include "client/connection.h"
#include "client/printer.h"
#include "client/variables.h"

namespace rtsql::client {

// Exit codes of rtsql, also listed in docs/shell.md.
inline constexpr int kExitOk = 0;
inline constexpr int kExitSqlError = 1;
inline constexpr int kExitConnection = 2;
inline constexpr int kExitUsage = 64;

struct RunOptions {
  // Print each statement before running it (script mode).
  bool echo = false;
  PrintOptions print;
  // Print "Time: 1.234 ms" after each statement (\timing).
  bool timing = false;
  // `-v` variables, substituted into statements as :name (see variables.h).
  Variables variables;
};

enum class RunStatus { kOk, kSqlError, kConnectionLost, kInterrupted };

// Runs each statement of `text` (variables already substituted) in order
// (split with splitStatements), printing
// results to `out` and the first error to `err` with its place in `text`;
// `sourceName` names the file in error messages ("" in the REPL).
RunStatus runStatements(Connection& conn, std::string_view text,
                        std::string_view sourceName, const RunOptions& options,
                        std::ostream& out, std::ostream& err);

// A script's statements and backslash commands (\flows, \sources, \sinks,
// \tables, \progress, \timing, \q), each command on a line of its own
// between statements. Stops at the first error.
RunStatus runScriptText(Connection& conn, std::string_view text, std::string_view sourceName,
                        const RunOptions& options, std::ostream& out, std::ostream& err);

// Prints "Time: 12.345 ms" for a statement that took `took`.
void printTiming(std::chrono::steady_clock::duration took, std::ostream& out);

// `-f`: the whole script, variables substituted first; returns the process
// exit code.
int runScript(Connection& conn, std::string_view text, std::string_view sourceName,
              const RunOptions& options, std::ostream& out, std::ostream& err);

// `-c`: `sql` (variables substituted) as one simple query; returns the
// process exit code.
int runCommand(Connection& conn, std::string_view sql, const RunOptions& options,
               std::ostream& out, std::ostream& err);

}  // namespace rtsql::client
