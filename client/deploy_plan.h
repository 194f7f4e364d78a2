// Deployments as code: `rtsql -f deploy.sql --plan` compares a script of
// CREATE [OR REPLACE] statements with what the server runs and prints what
// applying it would do, changing nothing: each object to create, each flow to
// replace with its state plan (EXPLAIN CREATE OR REPLACE FLOW), each left
// alone, and what runs but is not in the script. The script runs in a dry-run
// session (SET rtsql.dry_run), so a flow may read a source the script itself
// creates. `--apply` runs the script (script.h), statement by statement.
#pragma once

#include <iosfwd>
#include <string_view>

#include "client/connection.h"

namespace rtsql::client {

// Prints the plan of `script` to `out`; returns an exit code of script.h
// (kExitSqlError when a statement would fail or a replace would be refused).
int planDeployment(Connection& conn, std::string_view script, std::string_view sourceName,
                   std::ostream& out, std::ostream& err);

}  // namespace rtsql::client
