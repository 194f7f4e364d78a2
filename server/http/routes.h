// The HTTP endpoint's routes, apart from any socket: a request's method and
// target in, a reply out. http_server.cpp calls this on its worker thread.
//
//   GET /healthz                200 "ok"
//   GET /flows                  200 JSON array of {name, sink, state, error, slots}
//   GET /flows/<name>/progress  200 SHOW PROGRESS's JSON; 404 JSON error if no such flow
//   GET /flows/<name>/plan      200 the running plan as JSON (planner/plan_json.h); 404 if
//                               no such flow or it has no plan
//   GET / and /console/<file>   the web console (console_assets.h)
//   POST /sql                   one read-only statement's rows as JSON (sql_endpoint.h);
//                               http_server.cpp runs it on a thread of its own
//   GET /metrics                200 Prometheus text format 0.0.4 (metrics.h)
//   any other path              404 JSON error; any other method on a known path 405
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/http/source.h"

namespace rtsql::http {

struct Reply {
  unsigned status = 200;
  std::string contentType;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type
};

inline constexpr const char* kJsonContentType = "application/json";
inline constexpr const char* kTextContentType = "text/plain; charset=utf-8";

// What a route reads of a request.
struct Request {
  std::string_view method;
  std::string_view target;
  std::string_view contentType;
  std::string_view body;
  std::string_view user;  // who authenticated (basic_auth.h); empty without a users file
  // True once the client has gone or the endpoint is stopping: a statement of
  // POST /sql stops then. Empty: never.
  std::function<bool()> cancelled;
};

// Never throws: a failure reading `source` is a 500 with a JSON error.
Reply route(const Source& source, const Request& request);
// A request without a body, for tests and for routes that read none.
Reply route(const Source& source, std::string_view method, std::string_view target);

// Decodes %XX escapes in one path segment; nullopt on a malformed escape.
std::optional<std::string> percentDecode(std::string_view segment);

}  // namespace rtsql::http
