// The read-only SQL endpoint (sql_endpoint.h).
#include "server/http/sql_endpoint.h"

#include <fmt/format.h>
#include <simdjson.h>

#include "common/json.h"
#include "common/schema.h"
#include "parser/ast.h"
#include "parser/parser.h"

namespace rtsql::http {

namespace {

Reply errorReply(unsigned status, const SqlError& e) {
  Reply r;
  r.status = status;
  r.contentType = kJsonContentType;
  r.body = "{\"error\":";
  appendJsonString(r.body, e.message());
  r.body += ",\"sqlstate\":";
  appendJsonString(r.body, e.sqlstate());
  r.body += ",\"position\":";
  r.body += e.hasPosition() ? std::to_string(e.position()) : "null";
  r.body += ",\"hint\":";
  if (e.hint().empty()) {
    r.body += "null";
  } else {
    appendJsonString(r.body, e.hint());
  }
  r.body += "}\n";
  return r;
}

constexpr int64_t kMaxTimeoutMs = 60'000;
constexpr int64_t kMaxRows = 10'000;

bool jsonContentType(std::string_view contentType) {
  std::string_view type = contentType.substr(0, contentType.find(';'));
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  return iequals(type, "application/json");
}

}  // namespace

void checkReadOnly(std::string_view sql) {
  std::vector<ast::StatementPtr> statements = parseStatements(sql);
  if (statements.size() != 1) {
    throw SqlError(sqlstate::kSyntaxError,
                   statements.empty() ? "no statement to run" : "one statement at a time",
                   statements.empty() ? SqlError::npos : statements[1]->pos);
  }
  const ast::Statement& s = *statements[0];
  // A SELECT reads: a static query, or a live one whose temporary flow
  // commits no offsets and leaves nothing behind (live_query.h).
  bool readOnly = s.kind == ast::StatementKind::Show || s.kind == ast::StatementKind::Describe ||
                  s.kind == ast::StatementKind::Explain || s.kind == ast::StatementKind::Select ||
                  s.kind == ast::StatementKind::ShowCreate;
  if (s.kind == ast::StatementKind::User) {
    readOnly = static_cast<const ast::UserStatement&>(s).action == ast::UserAction::Show;
  }
  if (!readOnly) {
    throw SqlError(sqlstate::kReadOnlySqlTransaction,
                   "the console runs read-only statements only: SHOW, DESCRIBE, EXPLAIN, SELECT",
                   s.pos, "run other statements with rtsql or psql");
  }
}

Reply sqlReply(std::string_view contentType, std::string_view body,
               const std::function<SqlResult(const std::string& sql, const SqlLimits& limits)>& run,
               const std::function<bool()>& cancelled) {
  if (!jsonContentType(contentType)) {
    Reply r = errorReply(415, SqlError(sqlstate::kProtocolViolation,
                                       "POST /sql takes Content-Type: application/json"));
    return r;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string_view sql;
  if (parser.parse(body.data(), body.size()).get(doc) != simdjson::SUCCESS ||
      doc["sql"].get(sql) != simdjson::SUCCESS) {
    return errorReply(400, SqlError(sqlstate::kProtocolViolation,
                                    "the body must be a JSON object with a string \"sql\""));
  }
  SqlLimits limits;
  limits.cancelled = cancelled;
  int64_t timeoutMs = 0;
  if (auto t = doc["timeout_ms"]; t.error() != simdjson::NO_SUCH_FIELD) {
    if (t.get(timeoutMs) != simdjson::SUCCESS || timeoutMs < 1 || timeoutMs > kMaxTimeoutMs) {
      return errorReply(400, SqlError(sqlstate::kInvalidParameterValue,
                                      fmt::format("\"timeout_ms\" must be an integer from 1 to {}",
                                                  kMaxTimeoutMs)));
    }
    limits.timeout = std::chrono::milliseconds(timeoutMs);
  }
  int64_t maxRows = 0;
  if (auto m = doc["max_rows"]; m.error() != simdjson::NO_SUCH_FIELD) {
    if (m.get(maxRows) != simdjson::SUCCESS || maxRows < 1 || maxRows > kMaxRows) {
      return errorReply(
          400, SqlError(sqlstate::kInvalidParameterValue,
                        fmt::format("\"max_rows\" must be an integer from 1 to {}", kMaxRows)));
    }
    limits.maxRows = static_cast<size_t>(maxRows);
  }
  try {
    checkReadOnly(sql);
  } catch (const SqlError& e) {
    return errorReply(400, e);
  }
  SqlResult result = run(std::string(sql), limits);
  if (result.error) return errorReply(400, *result.error);
  Reply r;
  r.contentType = kJsonContentType;
  r.body = "{\"command\":";
  appendJsonString(r.body, result.command);
  r.body += ",\"columns\":[";
  for (size_t i = 0; i < result.columns.size(); ++i) {
    if (i) r.body += ",";
    r.body += "{\"name\":";
    appendJsonString(r.body, result.columns[i]);
    r.body += "}";
  }
  r.body += "],\"rows\":[";
  for (size_t i = 0; i < result.rows.size(); ++i) {
    r.body += i ? ",[" : "[";
    for (size_t j = 0; j < result.rows[i].size(); ++j) {
      if (j) r.body += ",";
      if (result.rows[i][j]) {
        appendJsonString(r.body, *result.rows[i][j]);
      } else {
        r.body += "null";
      }
    }
    r.body += "]";
  }
  r.body += "],\"stopped\":";
  if (result.stopped.empty()) {
    r.body += "null";
  } else {
    appendJsonString(r.body, result.stopped);
  }
  r.body += "}\n";
  return r;
}

}  // namespace rtsql::http
