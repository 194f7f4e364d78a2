// Parses SQL text (one or more statements separated by ';') into AST
// statements. Errors are SqlError with SQLSTATE 42601, a position (0-based
// offset into `text`), and a message naming the line, the column, the offending
// token and what was expected:
//   syntax error at or near "FORM" (line 1, column 10): expected one of FROM, ...
#pragma once

#include <string_view>
#include <vector>

#include "common/sql_text.h"
#include "parser/ast.h"

namespace rtsql {

std::vector<ast::StatementPtr> parseStatements(std::string_view text);

}  // namespace rtsql
