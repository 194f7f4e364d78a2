// A small hand-written scanner over SQL text. It knows only what decides where a
// statement ends: quoted strings and identifiers (with their doubled-quote
// escapes), $$-quoted text, line comments and block comments. It needs no grammar, so the shell
// can use it to split scripts and to know when a typed statement is complete.
#include "common/sql_text.h"

namespace rtsql {

namespace {

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// A character that continues a name (the lexer's IDENTIFIER: letters, digits,
// '_', '$' and any non-ASCII byte): `a$$` is a name, not the start of $$ text.
bool isWordChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '_' ||
         u == '$' || u >= 0x80;
}

// What the scanner found at one position.
enum class Piece {
  Space,      // whitespace
  Comment,    // -- line comment or /* block comment */ (also /*+ hints */)
  Semicolon,  // a top-level ';'
  Other,      // anything else: words, quoted text, operators
};

// Scans one piece starting at `i`, returns its kind and moves `i` past it.
// `open` is set when the piece is a quote or block comment that never ends.
Piece scanPiece(std::string_view text, size_t& i, bool& open) {
  const char c = text[i];
  if (isSpace(c)) {
    ++i;
    return Piece::Space;
  }
  if (c == ';') {
    ++i;
    return Piece::Semicolon;
  }
  if (c == '-' && i + 1 < text.size() && text[i + 1] == '-') {
    while (i < text.size() && text[i] != '\n') ++i;
    return Piece::Comment;
  }
  if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
    size_t end = text.find("*/", i + 2);
    if (end == std::string_view::npos) {
      open = true;
      i = text.size();
    } else {
      i = end + 2;
    }
    return Piece::Comment;
  }
  if (c == '$' && i + 1 < text.size() && text[i + 1] == '$' &&
      (i == 0 || !isWordChar(text[i - 1]))) {
    // $$ ... $$, a function's code: everything up to the next $$ as it is.
    size_t end = text.find("$$", i + 2);
    if (end == std::string_view::npos) {
      open = true;
      i = text.size();
    } else {
      i = end + 2;
    }
    return Piece::Other;
  }
  if (c == '\'' || c == '"' || c == '`') {
    // A doubled quote inside the quotes is the escape for the quote itself;
    // in a string a backslash takes the next character too ('it\'s'), as
    // the parser reads it.
    size_t j = i + 1;
    for (;;) {
      if (j >= text.size()) {
        open = true;
        break;
      }
      if (c == '\'' && text[j] == '\\') {
        j += 2;
        continue;
      }
      if (text[j] == c) {
        if (j + 1 < text.size() && text[j + 1] == c) {
          j += 2;
          continue;
        }
        ++j;
        break;
      }
      ++j;
    }
    i = j;
    return Piece::Other;
  }
  ++i;
  return Piece::Other;
}

}  // namespace

std::vector<StatementText> splitStatements(std::string_view text) {
  std::vector<StatementText> out;
  bool hasCode = false;    // the span holds something besides whitespace and comments
  bool hasPiece = false;   // the span holds anything besides whitespace
  size_t firstPiece = 0;   // offset of the span's first non-space piece
  size_t lastEnd = 0;      // offset just past the span's last non-space piece

  auto flush = [&] {
    if (hasCode) {
      out.push_back({std::string(text.substr(firstPiece, lastEnd - firstPiece)), firstPiece});
    }
    hasCode = false;
    hasPiece = false;
  };

  size_t i = 0;
  while (i < text.size()) {
    const size_t at = i;
    bool open = false;
    const Piece p = scanPiece(text, i, open);
    if (p == Piece::Space) continue;
    if (p == Piece::Semicolon) {
      flush();
      continue;
    }
    if (!hasPiece) {
      firstPiece = at;
      hasPiece = true;
    }
    if (p == Piece::Other) hasCode = true;
    // A line comment ends before its newline, so trailing whitespace never ends
    // up in the statement text.
    lastEnd = i;
  }
  flush();
  return out;
}

bool endsStatement(std::string_view text) {
  bool last = false;
  size_t i = 0;
  while (i < text.size()) {
    bool open = false;
    Piece p = scanPiece(text, i, open);
    if (open) return false;
    if (p == Piece::Semicolon) {
      last = true;
    } else if (p == Piece::Other) {
      last = false;
    }
  }
  return last;
}

std::pair<int, int> lineAndColumn(std::string_view text, size_t offset) {
  if (offset > text.size()) offset = text.size();
  int line = 1;
  int column = 1;
  for (size_t i = 0; i < offset; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      column = 1;
    } else if ((c & 0xC0) != 0x80) {
      // Columns count characters, not bytes: UTF-8 continuation bytes do not
      // start a new column.
      ++column;
    }
  }
  return {line, column};
}

std::string sqlStringLiteral(std::string_view s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') q += c;
    q += c;
  }
  q += '\'';
  return q;
}

}  // namespace rtsql
