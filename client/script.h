// Non-interactive runs of the shell: `-f file` (a script split into statements
// and sent one at a time, stopping at the first error) and `-c SQL` (one simple
// query). The statement runner here is shared with the REPL, and so are the
// commands that do more than send one statement: \i FILE and \d [NAME].
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

// How deep \i may nest: a file that includes itself stops there.
inline constexpr int kMaxIncludeDepth = 16;

// \i FILE: runs the file's statements and commands as runScriptText does a
// script (variables substituted), stopping at the file's first error, which
// names the file and its line. A relative path is taken from the current
// directory, as psql's \i does. `depth` counts the \i commands around this one;
// `where` ("file:3", or "" in the REPL) names the \i line when the file cannot
// be read.
RunStatus runInclude(Connection& conn, const std::string& path, const RunOptions& options,
                     std::ostream& out, std::ostream& err, int depth = 0,
                     std::string_view where = {});

// \d NAME: DESCRIBE NAME (columns, types, options with credentials masked by
// the server) and, for a flow, the plan it runs (EXPLAIN FLOW NAME). \d alone:
// every source, sink, table and flow as one list of names and kinds. `where`
// ("file:3", or "" in the REPL) prefixes errors.
RunStatus runDescribe(Connection& conn, const std::string& name, std::string_view where,
                      const RunOptions& options, std::ostream& out, std::ostream& err);

// Prints "Time: 12.345 ms" for a statement that took `took`.
void printTiming(std::chrono::steady_clock::duration took, std::ostream& out);

// `-f`: the whole script, variables substituted first; returns the process
// exit code.
int runScript(Connection& conn, std::string_view text, std::string_view sourceName,
              const RunOptions& options, std::ostream& out, std::ostream& err);

// `-c`: `sql` (variables substituted) as one simple query; returns the
// process exit code.
// --single-transaction: the script as runScript() runs it, between BEGIN and
// COMMIT; at its first error, ROLLBACK, so that nothing of it is applied.
int runScriptInOneTransaction(Connection& conn, std::string_view text, std::string_view sourceName,
                              const RunOptions& options, std::ostream& out, std::ostream& err);

int runCommand(Connection& conn, std::string_view sql, const RunOptions& options,
               std::ostream& out, std::ostream& err);

}  // namespace rtsql::client
