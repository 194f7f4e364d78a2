// The describe path of the extended query protocol, in one place: which
// columns a statement returns (none for a command), learned from
// QueryHandler::describe() or, when the handler cannot tell, by running the
// statement until its columns are known; and the one message that tells the
// client, RowDescription or NoData.
//
// Describe of a prepared statement, Describe of a portal (answered at once or
// deferred to the Execute that follows it) and that Execute all go through
// here, so they agree on what a statement returns and how it is said. The
// functions take the handler and session rather than a connection, so they
// are tested with a fake handler and no socket.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "server/pgwire/extended.h"
#include "server/query_handler.h"

namespace rtsql::pgwire {

// What describing a statement found: its columns (empty: it returns no rows)
// or the error the client gets instead, with its position in the text the
// client wrote. Neither is set when the handler could not tell.
struct Description {
  std::optional<std::vector<ResultColumn>> columns;
  std::optional<SqlError> error;
};

// Asks the handler for the columns of `bound` without running it.
Description askHandler(QueryHandler& handler, Session& session, const BoundStatement& bound);

// The columns of `bound`: asked of the handler, or else found by running the
// statement and stopping once its columns are known (`gone` stops the run
// early when the client leaves). Exactly one of columns and error is set.
// Only statements that return rows get this far, so running one has no
// effect beyond the work.
Description describeStatement(QueryHandler& handler, Session& session,
                              const BoundStatement& bound, const std::atomic<bool>& gone);

// NoData for a statement that returns no rows, else RowDescription with each
// column in `formats` (empty: text). Throws SqlError 54011 for more columns
// than the message can count, leaving `out` as it was.
void appendDescription(std::string& out, const std::vector<ResultColumn>& columns,
                       const std::vector<int16_t>& formats = {});

// The answer to Describe of a portal: its columns in the result formats its
// Bind asked for. Throws SqlError, leaving `out` as it was, when the formats
// do not fit the columns (see resultFormatsFor).
void appendPortalDescription(std::string& out, const std::vector<int16_t>& resultFormats,
                             const std::vector<ResultColumn>& columns);

}  // namespace rtsql::pgwire
