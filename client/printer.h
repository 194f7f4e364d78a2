// How the shell shows things: result tables aligned like psql's, command tags,
// the progress JSON indented, and server errors with the offending line and a
// caret under the error position. Everything here is a pure function from data
// to text, so it is tested without a server or a terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "client/result.h"

namespace rtsql::client {

struct PrintOptions {
  // Quiet mode leaves out command tags; rows and errors are still shown.
  bool quiet = false;
};

// Columns a UTF-8 string takes on a terminal: East Asian wide characters and
// most emoji count two, combining marks zero, invalid bytes one each.
size_t displayWidth(std::string_view utf8);

// A psql-style aligned table: centred header, separator, rows ('|' between
// columns, numbers right-aligned, NULL shown as "NULL", '+' marking a cell that
// continues on the next line) and a "(N rows)" footer.
std::string formatTable(const ResultSet& result);

// Re-indents a JSON document with two spaces per level. Text that is not an
// object or array, or does not balance, is returned unchanged: the shell must
// never lose what the server sent.
std::string prettyJson(std::string_view json);

// One result as the shell prints it: a table for rows (the JSON itself for a
// single column named "progress", which is what SHOW PROGRESS returns), the
// command tag otherwise. The text ends with a newline unless it is empty.
std::string formatResult(const ResultSet& result, const PrintOptions& options = {});

// Byte offset of the `charIndex`-th (0-based) UTF-8 character of `text`,
// clamped to text.size(). The server counts positions in characters.
size_t charIndexToByteOffset(std::string_view text, size_t charIndex);

// Renders a server error for a statement that starts at byte `statementOffset`
// of `text` (a whole script, or the REPL's input buffer). With a `sourceName`
// the first line reads "name:LINE:COL: ERROR [SQLSTATE]: message" like a
// compiler's diagnostic; without one it reads "ERROR [SQLSTATE]: message" and
// the quoted line carries a "LINE n:" prefix, as psql shows it. The line holding
// the error position follows with a caret under that position, then DETAIL and
// HINT when the server sent them. Ends with a newline.
std::string formatError(const ServerError& error, std::string_view text,
                        size_t statementOffset, std::string_view sourceName = {});

}  // namespace rtsql::client
