// A session's statements as the parser reads them: with the backslashes of
// its string literals kept as written when the session SET
// rtsql.escaped_string_literals (or spark.sql.parser.escapedStringLiterals)
// on, as Spark's default otherwise (parser/string_literals.h). PostgreSQL's
// standard_conforming_strings says the same to drivers: off by default (a
// driver that quotes values itself then doubles backslashes), on with the
// setting.
#pragma once

#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/options.h"
#include "parser/ast.h"

namespace rtsql {

// Whether `settings` keep backslashes in string literals as written.
bool keepsBackslashes(const Options& settings);

// parseStatements() of a session's text, under its settings.
std::vector<ast::StatementPtr> parseSessionStatements(const Options& settings,
                                                      std::string_view sql);

// Moves the position of `err`, found in the text parseSessionStatements()
// parsed under settings that kept backslashes (`kept`), to where it is in
// `sql` as the client wrote it: each statement, its errors and a read sent
// to another node (whose positions come back in the same text) see the
// backslashes doubled.
void moveToWrittenText(SqlError& err, bool kept, std::string_view sql);

}  // namespace rtsql
