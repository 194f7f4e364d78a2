// POST /sql: the web console's SQL box. It runs one read-only statement (SHOW,
// DESCRIBE, EXPLAIN, or a query: a live SELECT on a source) as the user the
// request authenticated as, and answers its rows as JSON; anything else is
// refused with SQLSTATE 25006 before it runs, so the endpoint can look at the
// server but never change it.
//
//   request:  Content-Type: application/json,
//             {"sql": "SELECT * FROM clicks LIMIT 5", "timeout_ms": 10000, "max_rows": 1000}
//   200:      {"command": "SELECT 5", "columns": [{"name": ...}], "rows": [[text|null, ...]],
//              "stopped": null | "timeout" | "max_rows" | "cancelled"}
//   400:      {"error": message, "sqlstate": "25006", "position": n|null, "hint": text|null}
//
// A live SELECT answers once it has its LIMIT's rows. Without a LIMIT, or on a
// source with too few new records, it is stopped at `timeout_ms` (1 to 60000,
// 10000 when absent) or `max_rows` (1 to 10000, 1000 when absent) and answers
// the rows it had, with "stopped" saying why. A client that closes the
// connection stops it too, freeing its task slots.
//
// The JSON content type is required: a page of another site can send a form
// or a text/plain POST with the browser's cached Basic credentials, but not a
// JSON one (that needs a CORS preflight, which rtsqld never grants).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "server/http/routes.h"

namespace rtsql::http {

// Throws SqlError unless `sql` is exactly one SHOW, DESCRIBE, EXPLAIN or
// SELECT statement (SHOW USERS included): 25006 for any other statement,
// 42601 for text that does not parse or holds no statement or several.
void checkReadOnly(std::string_view sql);

// The reply to POST /sql with `body` and `contentType`, running the statement
// through `run` once it is known to be read-only, within the request's limits;
// `cancelled` (may be empty) joins them.
Reply sqlReply(std::string_view contentType, std::string_view body,
               const std::function<SqlResult(const std::string& sql, const SqlLimits& limits)>& run,
               const std::function<bool()>& cancelled = {});

}  // namespace rtsql::http
