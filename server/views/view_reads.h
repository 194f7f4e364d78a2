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
// A read sees the last committed epoch unless the session chose the view's
// latest state (`SET rtsql.view_snapshot = 'latest'`, ViewRead::Latest,
// executor/state/view_latest.h), which a running view's flow gives and any
// other answers committed; the epoch a read returns says which it saw
// (ViewLatest::kLatestEpoch: the latest state).
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
#include <set>
#include <string>
#include <vector>

#include "executor/state/view_latest.h"
#include "executor/state/view_table.h"
#include "parser/ast.h"
#include "planner/bounded_relation.h"
#include "planner/catalog.h"
#include "server/flows/flow_registry.h"
#include "server/query_handler.h"
#include "server/views/holder_outages.h"

namespace rtsql {

class Options;

// Which state a read of a view sees: its last committed epoch (the default)
// or its latest state; or, for a view another node holds, the last committed
// epoch of the standby copy of it this node keeps (Standby: docs/operations.md,
// "standby"), a view held here being read as Committed.
enum class ViewRead { Committed, Latest, Standby };
// The session's choice (the setting rtsql.view_snapshot in `settings`).
ViewRead viewReadOf(const Options& settings);
// Validates a value SET for rtsql.view_snapshot (22023 at `pos` otherwise).
void checkViewRead(const std::string& value, size_t pos);
// The setting's name, and how SHOW rtsql.view_epoch spells a latest read.
inline constexpr const char* kViewSnapshotSetting = "rtsql.view_snapshot";
inline constexpr const char* kLatestEpochText = "latest";

// Which copy answers a read of a view another node holds, where this node
// keeps a standby copy of it (the setting rtsql.view_read):
//   - Any (the default): the holder, and the standby copy when the holder
//     cannot answer (55000: down, silent, moving, restoring);
//   - Holder: the holder only;
//   - Standby: the standby copy, never the holder.
// A node that keeps no standby copy of the view always reads the holder.
enum class ViewCopy { Any, Holder, Standby };
ViewCopy viewCopyOf(const Options& settings);
// Validates a value SET for rtsql.view_read (22023 at `pos` otherwise).
void checkViewCopy(const std::string& value, size_t pos);
inline constexpr const char* kViewReadSetting = "rtsql.view_read";

// One line of SHOW MATERIALIZED VIEWS.
struct ViewStatus {
  std::string name;
  std::string state;              // the flow's: running, failed, stopped, ...
  std::optional<uint64_t> epoch;  // the epoch reads see; none before the first checkpoint
  std::string key;                // the key columns, comma-separated
  std::string error;              // why the flow failed
};

// A lookup by key recognised once, for a prepared statement
// (server/prepared_lookup.cpp): the view, the columns it returns, and for
// each key column either the parameter that gives its value or the value.
struct PreparedLookup {
  std::string view;
  Catalog::FlowPtr definition;  // the view it was prepared over
  Schema schema;                // the view's columns then
  std::vector<int> key;
  std::vector<std::pair<int, std::string>> selected;  // (view column, name)
  std::vector<ResultColumn> columns;
  std::vector<std::optional<size_t>> parameter;  // per key column; none: `constant` has it
  std::vector<Value> constant;
  std::optional<int64_t> limit;
  size_t pos = 0;  // of the view's name in the text
};

class ViewReads {
 public:
  explicit ViewReads(FlowRegistry& flows) : flows_(flows) {}

  // The view `query` reads, when its FROM names a materialized view of
  // `catalog`; null otherwise.
  static Catalog::FlowPtr viewOf(const ast::Query& query, const Catalog& catalog);
  // The view `query` reads when it is the only relation the query names
  // (once or more, subqueries included); null otherwise. A query over a
  // view held elsewhere is sent whole to its holder only then
  // (server/views/view_forward.h); any other one runs here, reading the view
  // from its holder (server/views/view_remote.h).
  static Catalog::FlowPtr soleViewOf(const ast::Query& query, const Catalog& catalog);

  // Answers a SELECT over `view` (see above). Returns the epoch it read
  // (none: the view has not checkpointed yet).
  std::optional<uint64_t> select(const ast::Query& query, const FlowDef& view, ResultWriter& out,
                                 ViewRead mode = ViewRead::Committed);
  // Whether select() answers `query` (a lookup by key or a scan, as above);
  // any other query over the view is a bounded query reading relation().
  bool serves(const ast::Query& query, const FlowDef& view);
  // The view as a bounded query's relation (planner/bounded_relation.h):
  // its snapshot, opened now (waiting as snapshot() does, on the
  // statement's thread), whose epoch goes to `epoch` when given. Without
  // `out` (a Describe), only its columns, and no rows.
  std::shared_ptr<const BoundedRelation> relation(const std::string& view, ResultWriter* out,
                                                  std::optional<uint64_t>* epoch,
                                                  ViewRead mode = ViewRead::Committed);
  // The columns such a SELECT returns, without reading (Describe).
  std::vector<ResultColumn> columns(const ast::Query& query, const FlowDef& view);

  // The snapshot of `view` reads see now: waits while it is restored (within
  // the statement's deadline, which `out` knows), and tells `out` when its
  // flow failed. Throws 55000 when it has none to give. With
  // ViewRead::Latest, a running view's latest state instead.
  std::shared_ptr<const ViewSnapshot> snapshot(const std::string& view, size_t pos,
                                               ResultWriter& out,
                                               ViewRead mode = ViewRead::Committed);
  // The view's columns and key, from its running plan; nullopt when it has none.
  std::optional<ViewLayout> layout(const std::string& view);

  // `query` as a PreparedLookup: a lookup by key select() serves, whose
  // `$n` (at `parameters`, each a NULL in the text) each give a key column's
  // value and nothing else. Nullopt for any other query.
  std::optional<PreparedLookup> prepareLookup(const ast::Query& query, const FlowDef& view,
                                              const std::vector<ParameterAt>& parameters);
  // Answers `lookup` with the key values `key` (in key order, typed as the
  // key columns), as select() answers the query it came from. Returns false,
  // having reported nothing, when the view's columns or key are no longer
  // those it was prepared over. `epoch` gets the epoch read.
  bool lookup(const PreparedLookup& lookup, const std::vector<Value>& key, ResultWriter& out,
              std::optional<uint64_t>& epoch, ViewRead mode = ViewRead::Committed);
  // lookup() of the last committed epoch when it can answer at once: the
  // view runs here and a snapshot of it is open (the last one opened, when
  // another read is opening the next). Returns false, having reported
  // nothing, when the read would wait or open a snapshot, or the view is
  // not as it was prepared; lookup() then answers. Never sleeps, parses or
  // opens files, so a connection's own thread may run it.
  bool lookupNow(const PreparedLookup& lookup, const std::vector<Value>& key, ResultWriter& out,
                 std::optional<uint64_t>& epoch);

  // How a read of `view` in a session with `settings` reads it:
  // ViewRead::Standby when the session chose the standby copy
  // (rtsql.view_read = 'standby') and this node keeps one of the view,
  // which another node holds; viewReadOf(settings) otherwise. Throws 0A000
  // at `pos` where a standby copy would answer a read of the latest state,
  // which only the holder has. With 'any', ViewRead::Standby too for a
  // while after the holder could not answer (HolderOutages), telling `out`
  // why when given.
  ViewRead readOf(const std::string& view, const Options& settings, size_t pos,
                  ResultWriter* out = nullptr);
  // Whether a read of `view` whose holder failed with `holderError` is
  // answered from this node's standby copy instead (with ViewRead::Standby):
  // the error is 55000, the session allows it (rtsql.view_read 'any'), reads
  // committed epochs, and a standby copy of the view is kept here. The
  // holder is then not asked for a while (HolderOutages).
  bool standbyAfter(const SqlError& holderError, const std::string& view,
                    const Options& settings);

  // Where a read of `view` is sent (server/views/view_forward.h): the node
  // that alone holds it, when that is another one that advertised its
  // address. Nullopt when it is read here, or cannot be sent (the read then
  // answers 55000 naming the holder, as before).
  struct Forward {
    std::string holder;
    ForwardRoute route;
  };
  std::optional<Forward> forwardTo(const std::string& view);

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
    std::set<std::string> holders;  // when elsewhere: the nodes that run it
    std::shared_ptr<ViewLatest> latest;  // the running flow's latest state
  };
  Found find(const std::string& view);
  // The snapshot of the standby copy of `view` (held elsewhere, as `found`
  // says) kept here; null while it has applied no checkpoint (nor the view
  // was planned here). Throws 55000 when this node keeps none.
  std::shared_ptr<const ViewSnapshot> standbySnapshot(const std::string& view, size_t pos,
                                                      const Found& found, ResultWriter& out);
  // The snapshot of `found`'s checkpoint, opened now unless it is open.
  // Another read opening it meanwhile, the last one opened is read (every
  // row of it is of one committed epoch too) rather than opening it once
  // more. Without `mayOpen`, null where it would open one.
  std::shared_ptr<const ViewSnapshot> opened(const std::string& view, const Found& found,
                                             bool mayOpen = true);
  // opened() without opening, for the view's checkpoint of epoch
  // `checkpoint`: null when a snapshot of it is not open.
  std::shared_ptr<const ViewSnapshot> openedNow(const std::string& view, uint64_t checkpoint);
  // The open snapshot (of view `key`, lower-cased) a read of checkpoint
  // `checkpoint` may take; null when there is none. Under mu_.
  std::shared_ptr<const ViewSnapshot> openFor(const std::string& key, uint64_t checkpoint) const;
  // Answers `p` from `snap`; false when `snap` is not the view `p` was
  // prepared over.
  static bool answer(const PreparedLookup& p, const ViewSnapshot& snap,
                     const std::vector<Value>& key, ResultWriter& out,
                     std::optional<uint64_t>& epoch);

  FlowRegistry& flows_;
  std::mutex mu_;
  // The snapshot last opened per view (lower-cased name).
  std::map<std::string, std::shared_ptr<const ViewSnapshot>> open_;
  // The views (lower-cased names) whose next snapshot a read is opening.
  std::set<std::string> opening_;
  // The holders that could not answer a read lately.
  HolderOutages outages_;
};

}  // namespace rtsql
