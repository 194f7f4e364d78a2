// The interactive shell: reads statements with libedit (history kept in
// ~/.rtsql_history), runs each one when its ';' arrives and prints the results.
// A failed statement never ends the session; a dropped connection is reported
// and re-established once on the next statement. Backslash commands (\flows,
// \progress, \timing, \watch, ...), -v variables and Tab completion of
// keywords and object names are handled here too.
#pragma once

#include <string>

#include "client/connection.h"
#include "client/script.h"

namespace rtsql::client {

// The help text of the backslash commands, shown by "\?".
std::string shellHelp();

// Runs the REPL on the terminal until \q or end of input; returns the exit code.
int runShell(Connection& conn, const RunOptions& options);

}  // namespace rtsql::client
