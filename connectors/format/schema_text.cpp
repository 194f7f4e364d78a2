// The bounds of a schema's text (see schema_text.h): one pass over the bytes,
// with no recursion and no allocation, that stops at the first level too deep.
#include "connectors/format/schema_text.h"

#include <fmt/format.h>

#include <algorithm>

namespace rtsql::format {

std::string schemaTextProblem(std::string_view text, SchemaTextSyntax syntax) {
  if (text.size() > kMaxSchemaTextBytes) {
    return fmt::format("the text is {} bytes, more than the {} a schema may have", text.size(),
                       kMaxSchemaTextBytes);
  }
  const bool proto = syntax == SchemaTextSyntax::Proto;
  int depth = 0;
  size_t line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
    } else if (c == '"' || (proto && c == '\'')) {
      // A string: skipped to its closing quote (or the end of the text).
      for (++i; i < text.size() && text[i] != c; ++i) {
        if (text[i] == '\\') {
          ++i;  // the escaped character, a quote included
        } else if (text[i] == '\n') {
          ++line;
        }
      }
    } else if (proto && c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (proto && c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const size_t end = text.find("*/", i + 2);
      for (size_t j = i; j < std::min(end, text.size()); ++j) line += text[j] == '\n';
      i = end == std::string_view::npos ? text.size() : end + 1;
    } else if (c == '{' || c == '[' || c == '(' || (proto && c == '<')) {
      if (++depth > kMaxSchemaTextDepth) {
        return fmt::format(
            "the text nests more than {} levels deep (at line {}), deeper than a schema may",
            kMaxSchemaTextDepth, line);
      }
    } else if (c == '}' || c == ']' || c == ')' || (proto && c == '>')) {
      if (depth > 0) --depth;
    }
  }
  return {};
}

}  // namespace rtsql::format
