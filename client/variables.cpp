#include "client/variables.h"

#include <cctype>

namespace rtsql::client {

namespace {

bool isNameStart(char ch) {
  const auto c = static_cast<unsigned char>(ch);
  return std::isalpha(c) || c == '_';
}

bool isNameChar(char ch) {
  const auto c = static_cast<unsigned char>(ch);
  return std::isalnum(c) || c == '_';
}

// `value` between `quote` characters, with each `quote` inside doubled, and
// in a string literal each backslash too (string literals read backslash
// escapes, as Spark's).
std::string quoted(std::string_view value, char quote) {
  std::string out(1, quote);
  for (char c : value) {
    if (c == quote || (quote == '\'' && c == '\\')) out += c;
    out += c;
  }
  out += quote;
  return out;
}

// Index just past the quoted run that starts at `i` (text[i] is the quote); a
// doubled quote stays inside, and in a string a backslash takes the next
// character. An unterminated run goes to the end.
size_t skipQuoted(std::string_view text, size_t i) {
  const char quote = text[i];
  ++i;
  while (i < text.size()) {
    if (quote == '\'' && text[i] == '\\') {
      i += 2;
      continue;
    }
    if (text[i] == quote) {
      if (i + 1 < text.size() && text[i + 1] == quote) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    ++i;
  }
  return text.size();
}

}  // namespace

bool isVariableName(std::string_view name) {
  if (name.empty() || !isNameStart(name.front())) return false;
  for (char c : name) {
    if (!isNameChar(c)) return false;
  }
  return true;
}

bool parseVariableAssignment(std::string_view text, std::string* name, std::string* value,
                             std::string* error) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    *error = "expected name=value, got \"" + std::string(text) + "\"";
    return false;
  }
  const std::string_view n = text.substr(0, eq);
  if (!isVariableName(n)) {
    *error = "invalid variable name \"" + std::string(n) +
             "\": use letters, digits and '_', starting with a letter or '_'";
    return false;
  }
  *name = std::string(n);
  *value = std::string(text.substr(eq + 1));
  return true;
}

std::string substituteVariables(std::string_view text, const Variables& variables) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\'' || c == '"' || c == '`') {
      const size_t end = skipQuoted(text, i);
      out.append(text.substr(i, end - i));
      i = end;
      continue;
    }
    if (c == '-' && i + 1 < text.size() && text[i + 1] == '-') {
      size_t end = text.find('\n', i);
      if (end == std::string_view::npos) end = text.size();
      out.append(text.substr(i, end - i));
      i = end;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      size_t end = text.find("*/", i + 2);
      end = end == std::string_view::npos ? text.size() : end + 2;
      out.append(text.substr(i, end - i));
      i = end;
      continue;
    }
    if (c != ':') {
      out += c;
      ++i;
      continue;
    }
    // A cast (x::BIGINT) is not a variable reference.
    if (i + 1 < text.size() && text[i + 1] == ':') {
      out += "::";
      i += 2;
      continue;
    }
    // :'name' and :"name".
    if (i + 1 < text.size() && (text[i + 1] == '\'' || text[i + 1] == '"')) {
      const char quote = text[i + 1];
      const size_t close = text.find(quote, i + 2);
      if (close != std::string_view::npos) {
        const std::string_view name = text.substr(i + 2, close - (i + 2));
        const auto it = isVariableName(name) ? variables.find(std::string(name))
                                             : variables.end();
        if (it != variables.end()) {
          out += quoted(it->second, quote);
          i = close + 1;
          continue;
        }
      }
      out += c;
      ++i;
      continue;
    }
    size_t end = i + 1;
    if (end < text.size() && isNameStart(text[end])) {
      while (end < text.size() && isNameChar(text[end])) ++end;
      const auto it = variables.find(std::string(text.substr(i + 1, end - i - 1)));
      if (it != variables.end()) {
        out += it->second;
        i = end;
        continue;
      }
      // Undefined: keep ":name" as it is, as psql does.
      out.append(text.substr(i, end - i));
      i = end;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

}  // namespace rtsql::client
