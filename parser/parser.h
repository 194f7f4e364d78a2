// Parses SQL text (one or more statements separated by ';') into AST
// statements. Errors are SqlError with SQLSTATE 42601, a position (0-based
// offset into `text`), and a message naming the line, the column, the offending
// token and what was expected:
//   syntax error at or near "FORM" (line 1, column 10): expected one of FROM, ...
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/sql_text.h"
#include "parser/ast.h"

namespace rtsql {

std::vector<ast::StatementPtr> parseStatements(std::string_view text);

// How many texts parseStatements() was given since the process started
// (SHOW rtsql.statements_parsed): what shows that a prepared lookup by key
// is not parsed again at each Execute.
uint64_t parsedTextCount();

}  // namespace rtsql
