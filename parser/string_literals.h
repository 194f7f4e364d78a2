// How a session reads backslashes in '...' string literals. rtsql reads them
// as Spark does by default (spark.sql.parser.escapedStringLiterals off): '\n'
// is a newline and '\\d' the regular expression \d (parser/ast_builder.cpp).
// A session with `SET rtsql.escaped_string_literals = on` (or Spark's name for
// it) keeps every backslash as written, as Spark does with the setting on: its
// text is parsed after keepBackslashesAsWritten(), which doubles each
// backslash of its plain string literals, so the parser reads them back as
// written and every statement the text creates is stored in the form that
// means the same to any session. A catalog written before rtsql read escapes
// is converted the same way when it is loaded (server/catalog_file.cpp).
#pragma once

#include <string>
#include <string_view>

namespace rtsql {

inline constexpr const char* kEscapedStringLiteralsSetting = "rtsql.escaped_string_literals";
inline constexpr const char* kSparkEscapedStringLiteralsSetting =
    "spark.sql.parser.escapedStringLiterals";

// `sql` with every backslash inside a plain '...' literal doubled; E'...'
// strings, quoted names, $$ bodies and comments are left as they are. Text
// without a backslash is returned unchanged.
std::string keepBackslashesAsWritten(std::string_view sql);

// The position in `sql` of byte `at` of keepBackslashesAsWritten(sql): what
// a position in the text as parsed (an error's, or one a node that was sent
// the text reports) is in the text as written; the backslash added to one
// written is that one's.
size_t writtenPosition(std::string_view sql, size_t at);

}  // namespace rtsql
