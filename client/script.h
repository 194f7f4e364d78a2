// Non-interactive runs of the shell: `-f file` (a script split into statements
// and sent one at a time, stopping at the first error) and `-c SQL` (one simple
// query). The statement runner here is shared with the REPL.
#pragma once

#include <iosfwd>
#include <string_view>

#include "client/connection.h"
#include "client/printer.h"

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
};

enum class RunStatus { kOk, kSqlError, kConnectionLost, kInterrupted };

// Runs each statement of `text` in order (split with splitStatements), printing
// results to `out` and the first error to `err` with its place in `text`;
// `sourceName` names the file in error messages ("" in the REPL).
RunStatus runStatements(Connection& conn, std::string_view text,
                        std::string_view sourceName, const RunOptions& options,
                        std::ostream& out, std::ostream& err);

// `-f`: the whole script; returns the process exit code.
int runScript(Connection& conn, std::string_view text, std::string_view sourceName,
              const RunOptions& options, std::ostream& out, std::ostream& err);

// `-c`: `sql` as one simple query; returns the process exit code.
int runCommand(Connection& conn, std::string_view sql, const RunOptions& options,
               std::ostream& out, std::ostream& err);

}  // namespace rtsql::client
