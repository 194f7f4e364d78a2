// keepBackslashesAsWritten() (string_literals.h): a flat scan with the
// lexer's rules as they were before string literals took escapes.
#include "parser/string_literals.h"

#include <vector>

namespace rtsql {

namespace {

bool nameChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '$';
}

// The end of a quoted run that starts at `at` (on its opening quote) and
// ends with `q`, a doubled `q` standing for one; with `escapes`, a backslash
// takes the next character. The text's end when it is not closed.
size_t quotedEnd(std::string_view s, size_t at, char q, bool escapes) {
  for (size_t i = at + 1; i < s.size(); ++i) {
    if (escapes && s[i] == '\\') {
      ++i;
    } else if (s[i] == q) {
      if (i + 1 < s.size() && s[i + 1] == q) {
        ++i;
      } else {
        return i + 1;
      }
    }
  }
  return s.size();
}

// keepBackslashesAsWritten(sql), and in `doubled` (when given) the
// position in `sql` of each backslash it doubled, in order.
std::string rewritten(std::string_view sql, std::vector<size_t>* doubled) {
  if (sql.find('\\') == std::string_view::npos) return std::string(sql);
  std::string out;
  out.reserve(sql.size() + 16);
  size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    size_t end = i + 1;
    if (c == '-' && sql.substr(i, 2) == "--") {
      end = sql.find('\n', i);
      end = end == std::string_view::npos ? sql.size() : end;
    } else if (c == '/' && sql.substr(i, 2) == "/*") {
      end = sql.find("*/", i + 2);
      end = end == std::string_view::npos ? sql.size() : end + 2;
    } else if (c == '$' && sql.substr(i, 2) == "$$") {
      end = sql.find("$$", i + 2);
      end = end == std::string_view::npos ? sql.size() : end + 2;
    } else if (c == '"' || c == '`') {
      end = quotedEnd(sql, i, c, false);
    } else if ((c == 'e' || c == 'E') && i + 1 < sql.size() && sql[i + 1] == '\'' &&
               (i == 0 || !nameChar(sql[i - 1]))) {
      end = quotedEnd(sql, i + 1, '\'', true);
    } else if (c == '\'') {
      end = quotedEnd(sql, i, '\'', false);
      for (size_t k = i; k < end; ++k) {
        out += sql[k];
        if (sql[k] != '\\') continue;
        out += '\\';
        if (doubled) doubled->push_back(k);
      }
      i = end;
      continue;
    } else if (nameChar(c)) {
      // A whole word, so that the E of a name ending in E is no E'...'.
      while (end < sql.size() && nameChar(sql[end])) ++end;
    }
    out.append(sql, i, end - i);
    i = end;
  }
  return out;
}

}  // namespace

std::string keepBackslashesAsWritten(std::string_view sql) { return rewritten(sql, nullptr); }

size_t writtenPosition(std::string_view sql, size_t at) {
  std::vector<size_t> doubled;
  rewritten(sql, &doubled);
  // Written byte i is at i + (backslashes doubled before it) once rewritten,
  // and each doubled one's copy right after it.
  size_t added = 0;
  for (size_t d : doubled) {
    if (at <= d + added) break;
    if (at == d + added + 1) return d;
    ++added;
  }
  return at - added;
}

}  // namespace rtsql
