// POST /sql: the web console's SQL box. It runs one read-only statement (SHOW,
// DESCRIBE, EXPLAIN) as the user the request authenticated as, and answers its
// rows as JSON; anything else is refused with SQLSTATE 25006 before it runs,
// so the endpoint can look at the server but never change it.
//
//   request:  Content-Type: application/json, {"sql": "SHOW FLOWS"}
//   200:      {"command": "SHOW", "columns": [{"name": ...}], "rows": [[text|null, ...]]}
//   400:      {"error": message, "sqlstate": "25006", "position": n|null, "hint": text|null}
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

// Throws SqlError unless `sql` is exactly one SHOW, DESCRIBE or EXPLAIN
// statement (SHOW USERS included): 25006 for any other statement, 42601 for
// text that does not parse or holds no statement or several.
void checkReadOnly(std::string_view sql);

// The reply to POST /sql with `body` and `contentType`, running the statement
// through `run` once it is known to be read-only.
Reply sqlReply(std::string_view contentType, std::string_view body,
               const std::function<SqlResult(const std::string& sql)>& run);

}  // namespace rtsql::http
