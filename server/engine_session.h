// One connection's state in the engine (server/engine.h): its user, its SET
// values, a dry run's or a transaction block's own catalog, its cursors. The
// statement families (server/engine_context.h) read and change it; a replay
// of the catalog store makes one that says so.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/options.h"
#include "planner/catalog.h"
#include "server/cursor.h"
#include "server/query_handler.h"
#include "server/transaction.h"

namespace rtsql {

// The views a statement read, each with the epoch it read (none: the view
// had not checkpointed; ViewLatest::kLatestEpoch: its latest state), in the
// order it read them (SHOW rtsql.view_epochs).
using ViewEpochs = std::vector<std::pair<std::string, std::optional<uint64_t>>>;

class EngineSession : public Session {
 public:
  std::string user;
  std::string database;  // as the client named it at startup
  Options settings;
  // SET rtsql.dry_run = on: this session's own copy of the catalog, which
  // its statements change instead of the server's; flows are only planned.
  std::unique_ptr<Catalog> shadow;
  // A replay of the catalog store (at start, or another node's change):
  // its statements were checked where they first ran, and are not written
  // back. With `holdsLock`, its maker holds the statement lock for all of
  // them (server/statement_lock.h).
  bool replay = false;
  bool holdsLock = false;
  // A transaction block (block_statements.cpp): its state, and the DDL it
  // ran on `shadow` (which the block made when `blockShadow`, rather than
  // a dry run), applied to the server's catalog at COMMIT.
  TransactionBlock block;
  std::vector<std::string> blockStatements;
  bool blockShadow = false;
  // SET in a block, as PostgreSQL has it: the settings as they were at
  // BEGIN (ROLLBACK goes back to them), as the block's SETs without its
  // SET LOCALs leave them (COMMIT keeps those), and both at each savepoint.
  Options settingsAtBegin;
  Options sessionSettings;
  std::vector<std::pair<Options, Options>> settingsAtSavepoints;
  Cursors cursors;
  // The epoch the session's last read of a materialized view saw (SHOW
  // rtsql.view_epoch): of the first view a statement read when it read
  // several, each of which is in viewEpochs.
  std::optional<uint64_t> viewEpoch;
  ViewEpochs viewEpochs;
  void readViews(ViewEpochs epochs) {
    viewEpoch = epochs.empty() ? std::nullopt : epochs.front().second;
    viewEpochs = std::move(epochs);
  }
};

}  // namespace rtsql
