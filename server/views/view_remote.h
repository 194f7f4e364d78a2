// A materialized view that another node of the cluster holds, read as a
// relation of a bounded query that runs here: a query that joins (or UNIONs,
// or reads in a subquery) views held by different nodes, or a view held
// elsewhere with a view held here or a static table, cannot be sent whole
// to one holder (server/select_statement.cpp sends a query there only when
// every relation it names is the one view that node holds).
//
// Each such view is read once, on the statement's thread, before the query
// is planned: `SELECT <columns> FROM v AS <alias> [WHERE <filters>]` is sent
// to its holder over the forwarding connection (server/views/view_forward.h:
// the client's user, statement_timeout, cancel, the 256 MiB bound, the
// session's settings that change an answer), and its rows, at the epoch the holder read,
// become an in-memory relation the bounded query reads as it reads a static
// table (planner/bounded_relation.h). What is sent:
//   - the columns: those of the view any expression of the query may name
//     (every column when a `*` may expand it), the others left NULL here;
//   - the filters: when the query names the view once, the conjuncts of the
//     WHERE of its SELECT that read only the view (its columns qualified by
//     its alias, or unqualified when the view is that SELECT's only
//     relation), call only deterministic functions (isDeterministicFunction,
//     common/expr.h), and hold no subquery; not when the view is the side of an outer join
//     that may be NULL, nor inside a TRANSFORM. Their text is the client's.
// The holder reads in the session's time zone (it travels with the read),
// so a filter that reads the wall clock (`hour(ts)`, a TIMESTAMP literal,
// text cast to a time) means there what it means here, and each timestamp
// comes back with its offset, the instant it is (server/pg_values.h,
// valueOfPgText).
// A column whose text does not say all of its value (an array, a map, a
// struct, binary, an interval) is refused (0A000) when the query needs it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/schema.h"
#include "parser/ast.h"
#include "planner/bounded_relation.h"
#include "server/query_handler.h"
#include "server/views/view_forward.h"

namespace rtsql {

// What is read of one view held elsewhere for a query.
struct RemoteViewScan {
  std::string text;          // the SELECT sent to the holder
  std::vector<int> columns;  // the view's columns it returns, in its order
  size_t pos = 0;            // of the view's first name in the client's text
  size_t filters = 0;        // WHERE conjuncts sent with it
};

// The scan of view `view` (named as the catalog names it; its columns
// `schema`) for `query`, the statement whose text is `text` and begins at
// `textPos` of the text the client sent. Throws 0A000 when the query needs
// a column pgTextReadable() does not read.
RemoteViewScan remoteViewScan(const ast::Query& query, const std::string& text, size_t textPos,
                              const std::string& view, const Schema& schema);

// Reads `scan` as `read` says (its text and position are set from `scan`)
// and returns its rows as a relation of `schema`; `epoch` gets the epoch
// the holder read. Throws as forwardViewRead does; notices and the cancel
// of the client's statement go through `out`.
std::shared_ptr<const BoundedRelation> readRemoteView(ForwardedRead read,
                                                      const RemoteViewScan& scan,
                                                      const Schema& schema, ResultWriter& out,
                                                      std::optional<uint64_t>& epoch);

}  // namespace rtsql
