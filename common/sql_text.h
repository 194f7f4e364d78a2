// Lexical helpers on SQL text shared by the parser, the server and the shell:
// splitting a script into statements and turning offsets into line:column.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rtsql {

// Splits a script at top-level ';' (outside '...' "..." `...` quotes, $$...$$
// text, -- line comments and /* */ block comments). Each piece keeps its text
// without the ';' and its byte offset in `text`; pieces that hold only
// whitespace and comments are dropped.
struct StatementText {
  std::string text;
  size_t offset = 0;
};
std::vector<StatementText> splitStatements(std::string_view text);

// True when `text` ends a statement: its last top-level token is ';' (used by
// the REPL to know when to stop reading continuation lines).
bool endsStatement(std::string_view text);

// A string literal that reads back as `s`: quotes and backslashes doubled
// (string literals read backslash escapes, parser/string_literals.h).
std::string sqlStringLiteral(std::string_view s);

// 1-based line and column of a byte offset in `text`.
std::pair<int, int> lineAndColumn(std::string_view text, size_t offset);

}  // namespace rtsql
