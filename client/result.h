// The data the shell moves between its connection and its printer: one result of
// a statement (columns and rows, or a command tag) and one server error with the
// fields of a PostgreSQL ErrorResponse. Plain structs, so the printer can be tested
// without a server.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace rtsql::client {

struct ResultColumn {
  std::string name;
  // Numbers are right-aligned in tables, as psql shows them.
  bool numeric = false;
};

// A cell is std::nullopt for SQL NULL.
using ResultRow = std::vector<std::optional<std::string>>;

struct ResultSet {
  // True when the statement returned a row description (a query), even with no
  // rows; false for commands, whose outcome is the tag alone.
  bool hasRows = false;
  std::vector<ResultColumn> columns;
  std::vector<ResultRow> rows;
  // The command tag, e.g. "CREATE SOURCE" or "SELECT 3".
  std::string tag;
};

struct ServerError {
  std::string severity = "ERROR";
  std::string sqlstate;
  std::string message;
  std::string detail;
  std::string hint;
  // The ErrorResponse 'P' field: a 1-based character index into the statement
  // that was sent, or 0 when the error has no position.
  size_t position = 0;
};

}  // namespace rtsql::client
