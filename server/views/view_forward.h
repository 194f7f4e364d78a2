// A read of a materialized view that another node of the cluster holds,
// sent to that node over the PostgreSQL protocol (libpq) and its answer
// relayed: columns and their types, rows, notices, errors, and the epoch
// the holder read (SHOW rtsql.view_epoch there, after the read).
//
// What it connects to and as whom:
//   - only the address the holder advertised in its membership record
//     (server/cluster/node_record.h, rtsqld --advertise-address); nothing a
//     statement names is ever a destination;
//   - as the client's own user, proving itself with the cluster's secret
//     (rtsqld --cluster-secret-file) through SCRAM-SHA-256, so the secret
//     never crosses the network. The holder takes the secret in place of
//     the user's password only from a connection that says it is forwarded
//     (startup option rtsql.forwarded_by), runs the read as that user
//     (which must exist there), so its privileges decide what is read, and
//     never forwards such a read again.
//
// Bounds: the connection is given at most kForwardConnectMs and three
// quarters of the client's statement_timeout, and the whole read the
// client's statement_timeout (which the holder is told too); a cancel of the
// client's statement, the statement's deadline and rtsqld's shutdown cancel
// the holder's statement and close the connection at once; a result of more
// than kMaxForwardedBytes is refused (54000). The session's settings that
// change what a read answers travel with it (settingsForRead(),
// server/session_settings.h): ansi_mode, the time zone,
// rtsql.view_snapshot, and the result's bound: a whole read's as the
// session has it, none for a part of a query this node runs (which bounds
// the query's result itself). A NULL counts as one byte of the result.
//
// A holder that cannot be reached (down, moving, or advertising no address)
// answers 55000 naming it, as a read there would have said before.
//
// What is not sent whole: a query that calls a function whose value is the
// asking session's or node's (the clock, now() and current_date; who and
// where it runs, pg_backend_pid(), current_user, current_setting(); as the
// function registry flags them, common/function_determinism.h), or a user's
// function, whose body may call one. The holder would answer its own
// values; such a query runs on the node asked instead, as a bounded query
// that reads the view's rows from the holder (server/views/view_remote.h),
// and those functions answer as in any query there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "parser/ast.h"
#include "server/flows/placement.h"
#include "server/query_handler.h"

namespace rtsql {

class Catalog;
class Options;

// The startup option a forwarded connection carries (`-c
// rtsql.forwarded_by=<node>` in libpq's `options`).
inline constexpr const char* kForwardedBySetting = "rtsql.forwarded_by";
// The node named by `-c rtsql.forwarded_by=<node>` (or
// `--rtsql.forwarded_by=<node>`) in a startup packet's `options`; nullopt
// when it names none.
std::optional<std::string> forwardedByOf(const std::string& startupOptions);

struct ForwardedRead {
  const ForwardRoute& route;
  std::string holder;    // the node's name, for messages
  std::string view;      // the view read, for messages
  std::string user;      // the client's user: the holder runs the read as it
  std::string database;  // as the client named it
  const Options& settings;  // the session's (server/session_settings.h says which go)
  std::string text;      // the SELECT's own text
  size_t pos = 0;        // of the statement in the text the client sent
  // Whether `text` is the client's own, a whole read whose result is the
  // client's (a position the holder reports is moved into it), or was made
  // here (server/views/view_remote.h: every position the holder reports is
  // `pos`, and this node bounds the result).
  bool clientText = true;
};

// Whether `query`, whose only relation is a view held elsewhere, is sent
// whole to the holder: not when it calls a function of the asking session
// or a user's function (`catalog` has them), at any depth.
bool sendsWhole(const ast::Query& query, const Catalog& catalog);

inline constexpr int kForwardConnectMs = 10000;
inline constexpr size_t kMaxForwardedBytes = size_t{256} << 20;

// Sends the read, relays its answer to `out`, and returns the epoch the
// holder read (none: it has not checkpointed). Throws SqlError: 55000 when
// the holder cannot be reached or refuses the connection, the holder's own
// error when the read fails there, 54000 past the size bound, and
// Interrupted when the client cancels or the deadline passes.
std::optional<uint64_t> forwardViewRead(const ForwardedRead& read, ResultWriter& out);

}  // namespace rtsql
