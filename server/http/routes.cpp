// Routing of the HTTP endpoint's few paths.
#include "server/http/routes.h"

#include <fmt/format.h>

#include <exception>
#include <optional>

#include "common/hex.h"
#include "common/json.h"
#include "server/http/console_assets.h"
#include "server/http/metrics.h"
#include "server/http/sql_endpoint.h"

namespace rtsql::http {

namespace {

Reply jsonError(unsigned status, std::string_view message) {
  Reply r;
  r.status = status;
  r.contentType = kJsonContentType;
  r.body = "{\"error\":";
  appendJsonString(r.body, message);
  r.body += "}\n";
  return r;
}

Reply flowsReply(const Source& source) {
  Reply r;
  r.contentType = kJsonContentType;
  r.body = "[";
  bool first = true;
  for (const auto& f : source.flows(false)) {
    if (!first) r.body += ",";
    first = false;
    r.body += "{\"name\":";
    appendJsonString(r.body, f.name);
    r.body += ",\"sink\":";
    appendJsonString(r.body, f.sink);
    r.body += ",\"state\":";
    appendJsonString(r.body, f.state);
    r.body += ",\"error\":";
    if (f.error.empty()) {
      r.body += "null";
    } else {
      appendJsonString(r.body, f.error);
    }
    r.body += ",\"slots\":";
    r.body += f.slots ? std::to_string(*f.slots) : "null";
    r.body += ",\"materializedView\":";
    r.body += f.materializedView ? "true" : "false";
    r.body += "}";
  }
  r.body += "]\n";
  return r;
}

Reply progressReply(const Source& source, std::string_view encodedName) {
  std::optional<std::string> name = percentDecode(encodedName);
  if (!name || name->empty()) return jsonError(404, "not a flow name");
  std::optional<std::string> json = source.progress(*name);
  if (!json) return jsonError(404, fmt::format("flow \"{}\" does not exist", *name));
  Reply r;
  r.contentType = kJsonContentType;
  r.body = std::move(*json);
  return r;
}

Reply planReply(const Source& source, std::string_view encodedName) {
  std::optional<std::string> name = percentDecode(encodedName);
  if (!name || name->empty()) return jsonError(404, "not a flow name");
  std::optional<std::string> json = source.planJson(*name);
  if (!json) {
    return jsonError(404, fmt::format("flow \"{}\" does not exist or is not running", *name));
  }
  Reply r;
  r.contentType = kJsonContentType;
  r.body = std::move(*json);
  return r;
}

Reply textReply(std::string body) {
  Reply r;
  r.contentType = kTextContentType;
  r.body = std::move(body);
  return r;
}

}  // namespace

std::optional<std::string> percentDecode(std::string_view segment) {
  std::string out;
  out.reserve(segment.size());
  for (size_t i = 0; i < segment.size(); ++i) {
    if (segment[i] != '%') {
      out += segment[i];
      continue;
    }
    if (i + 2 >= segment.size()) return std::nullopt;
    int hi = hexDigitValue(segment[i + 1]);
    int lo = hexDigitValue(segment[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

Reply route(const Source& source, std::string_view method, std::string_view target) {
  Request request;
  request.method = method;
  request.target = target;
  return route(source, request);
}

Reply route(const Source& source, const Request& request) {
  const std::string_view method = request.method;
  const std::string_view target = request.target;
  // The query string selects nothing here; it is ignored rather than refused
  // so that scrapers adding one (some do) still work.
  std::string_view path = target.substr(0, target.find('?'));

  enum class Route { None, Health, Flows, Progress, Plan, Metrics, Console, Sql };
  Route which = Route::None;
  std::string_view flowName;
  constexpr std::string_view kFlowsPrefix = "/flows/";
  constexpr std::string_view kProgressSuffix = "/progress";
  constexpr std::string_view kPlanSuffix = "/plan";
  // "/flows/<name><suffix>": the name, or nullopt when the path is another.
  auto flowPath = [&](std::string_view suffix) -> std::optional<std::string_view> {
    if (path.size() <= kFlowsPrefix.size() + suffix.size() ||
        path.substr(0, kFlowsPrefix.size()) != kFlowsPrefix ||
        path.substr(path.size() - suffix.size()) != suffix) {
      return std::nullopt;
    }
    std::string_view name =
        path.substr(kFlowsPrefix.size(), path.size() - kFlowsPrefix.size() - suffix.size());
    // A name with a raw '/' would be another path; '/' in a name is sent as %2F.
    if (name.find('/') != std::string_view::npos) return std::nullopt;
    return name;
  };
  if (findConsoleFile(path)) {
    which = Route::Console;
  } else if (path == "/healthz") {
    which = Route::Health;
  } else if (path == "/flows") {
    which = Route::Flows;
  } else if (path == "/metrics") {
    which = Route::Metrics;
  } else if (path == "/sql") {
    which = Route::Sql;
  } else if (auto progress = flowPath(kProgressSuffix)) {
    flowName = *progress;
    which = Route::Progress;
  } else if (auto plan = flowPath(kPlanSuffix)) {
    flowName = *plan;
    which = Route::Plan;
  }

  if (which == Route::None) return jsonError(404, fmt::format("no such path: {}", path));
  if (which == Route::Sql) {
    if (method != "POST") {
      Reply r = jsonError(405, fmt::format("method {} is not allowed; use POST", method));
      r.headers.emplace_back("Allow", "POST");
      return r;
    }
    try {
      // Without a users file every client is trusted, as on the PostgreSQL
      // protocol; its statements then run as the default user.
      const std::string user = request.user.empty() ? "rtsql" : std::string(request.user);
      return sqlReply(
          request.contentType, request.body,
          [&](const std::string& sql, const SqlLimits& limits) {
            return source.runReadOnly(user, sql, limits);
          },
          request.cancelled);
    } catch (const std::exception& e) {
      return jsonError(500, e.what());
    }
  }
  if (method != "GET") {
    Reply r = jsonError(405, fmt::format("method {} is not allowed; use GET", method));
    r.headers.emplace_back("Allow", "GET");
    return r;
  }
  try {
    switch (which) {
      case Route::Health: return textReply("ok\n");
      case Route::Flows: return flowsReply(source);
      case Route::Progress: return progressReply(source, flowName);
      case Route::Plan:
        return planReply(source, flowName);
      case Route::Console:
        return *consoleReply(path);
      case Route::Metrics: {
        Reply r;
        r.contentType = kMetricsContentType;
        r.body = renderMetrics(source);
        return r;
      }
      case Route::Sql:
      case Route::None: break;
    }
  } catch (const std::exception& e) {
    return jsonError(500, e.what());
  } catch (...) {
    return jsonError(500, "internal error");
  }
  return jsonError(404, "no such path");
}

}  // namespace rtsql::http
