// Reading materialized views: what a SELECT over a view is answered from.
// A view is a flow whose sink is its keyed table (CREATE MATERIALIZED VIEW,
// server/flow_ddl.cpp); its rows are read from a snapshot as of the flow's
// last checkpoint (executor/state/view_table.h), never from rows in flight.
//
// Served here: `SELECT <columns | *> FROM v WHERE <key column> = <value>
// [AND ...]` giving every key column (a lookup by key), and `SELECT
// <columns | *> FROM v [LIMIT n]` (every row in key order). Any other query
// over a view is refused (0A000) with a hint, for the bounded-query engine to
// take over; ViewSnapshot::scan() is the plain row iterator it reads.
//
// A view whose flow failed answers its last committed snapshot and says so
// in a NOTICE; one that is still being restored (a restart, before its
// checkpoint is loaded) is waited for within the statement's timeout, then
// answers 55000.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "executor/state/view_table.h"
#include "parser/ast.h"
#include "planner/bounded_relation.h"
#include "planner/catalog.h"
#include "server/flows/flow_registry.h"
#include "server/query_handler.h"
#include "server/statement_lock.h"

namespace rtsql {

// One line of SHOW MATERIALIZED VIEWS.
struct ViewStatus {
  std::string name;
  std::string state;              // the flow's: running, failed, stopped, ...
  std::optional<uint64_t> epoch;  // the epoch reads see; none before the first checkpoint
  std::string key;                // the key columns, comma-separated
  std::string error;              // why the flow failed
};

class ViewReads {
 public:
  ViewReads(FlowRegistry& flows, StatementLock& statements)
      : flows_(flows), statements_(statements) {}

  // The view `query` reads, when its FROM names a materialized view of
  // `catalog`; null otherwise.
  static Catalog::FlowPtr viewOf(const ast::Query& query, const Catalog& catalog);

  // Answers a SELECT over `view` (see above). Returns the epoch it read
  // (none: the view has not checkpointed yet).
  std::optional<uint64_t> select(const ast::Query& query, const FlowDef& view, ResultWriter& out);
  // Whether select() answers `query` (a lookup by key or a scan, as above);
  // any other query over the view is a bounded query reading relation().
  bool serves(const ast::Query& query, const FlowDef& view);
  // The view as a bounded query's relation (planner/bounded_relation.h):
  // its snapshot, opened now (waiting as snapshot() does, on the
  // statement's thread), whose epoch goes to `epoch` when given. Without
  // `out` (a Describe), only its columns, and no rows.
  std::shared_ptr<const BoundedRelation> relation(const std::string& view, ResultWriter* out,
                                                  std::optional<uint64_t>* epoch);
  // The columns such a SELECT returns, without reading (Describe).
  std::vector<ResultColumn> columns(const ast::Query& query, const FlowDef& view);

  // The snapshot of `view` reads see now: waits while it is restored (within
  // the statement's deadline, which `out` knows), and tells `out` when its
  // flow failed. Throws 55000 when it has none to give.
  std::shared_ptr<const ViewSnapshot> snapshot(const std::string& view, size_t pos,
                                               ResultWriter& out);
  // The view's columns and key, from its running plan; nullopt when it has none.
  std::optional<ViewLayout> layout(const std::string& view);

  ViewStatus status(const FlowDef& view);
  // Forgets what is kept of a dropped view.
  void forget(const std::string& view);

 private:
  struct Found {
    ViewLayout layout;
    std::optional<CheckpointInfo> checkpoint;
    FlowState state = FlowState::Stopped;
    std::string failure;
    bool wantRunning = false;
    bool planned = false;
    bool exists = true;  // false: dropped since the statement found it
    bool elsewhere = false;  // another node of the cluster runs it
  };
  Found find(const std::string& view);
  std::shared_ptr<const ViewSnapshot> opened(const std::string& view, const Found& found);

  FlowRegistry& flows_;
  StatementLock& statements_;
  std::mutex mu_;
  // The snapshot last opened per view (lower-cased name).
  std::map<std::string, std::shared_ptr<const ViewSnapshot>> open_;
};

}  // namespace rtsql
