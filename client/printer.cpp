#include "client/printer.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/sql_text.h"

namespace rtsql::client {

namespace {

// What an invalid byte decodes to: U+FFFD, one column wide.
constexpr uint32_t kInvalid = 0xFFFD;

// Decodes one UTF-8 code point at `i`, advancing `i`. An invalid byte decodes as
// kInvalid and consumes one byte, so broken input still advances and still shows.
uint32_t decodeOne(std::string_view s, size_t& i) {
  auto b0 = static_cast<unsigned char>(s[i]);
  int extra = 0;
  uint32_t cp = 0;
  if (b0 < 0x80) {
    ++i;
    return b0;
  } else if ((b0 & 0xE0) == 0xC0) {
    extra = 1;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    extra = 2;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    extra = 3;
    cp = b0 & 0x07;
  } else {
    ++i;
    return kInvalid;
  }
  if (i + extra >= s.size()) {
    ++i;
    return kInvalid;
  }
  for (int k = 1; k <= extra; ++k) {
    auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return kInvalid;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  i += extra + 1;
  return cp;
}

// Terminal width of one code point; a compact version of the usual wcwidth
// tables, enough for table alignment with CJK text, emoji and accents.
int codePointWidth(uint32_t cp) {
  if (cp == 0) return 0;
  if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) return 0;
  // Combining marks and zero-width characters.
  if ((cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x0483 && cp <= 0x0489) ||
      (cp >= 0x0591 && cp <= 0x05BD) || (cp >= 0x0610 && cp <= 0x061A) ||
      (cp >= 0x064B && cp <= 0x065F) || (cp >= 0x200B && cp <= 0x200F) ||
      (cp >= 0x20D0 && cp <= 0x20FF) || (cp >= 0xFE00 && cp <= 0xFE0F) ||
      (cp >= 0xFE20 && cp <= 0xFE2F) || cp == 0xFEFF)
    return 0;
  // Wide characters: Hangul Jamo, CJK, Hangul syllables, fullwidth forms, emoji.
  if ((cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0x303E) ||
      (cp >= 0x3041 && cp <= 0x33FF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
      (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xA000 && cp <= 0xA4CF) ||
      (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
      (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
      (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) ||
      (cp >= 0x1F900 && cp <= 0x1F9FF) || (cp >= 0x20000 && cp <= 0x3FFFD))
    return 2;
  return 1;
}

// Splits a cell into the lines it shows as. Tabs become spaces and other control
// characters are dropped so that they cannot break the alignment.
std::vector<std::string> cellLines(std::string_view cell) {
  std::vector<std::string> lines(1);
  for (char c : cell) {
    if (c == '\n') {
      lines.emplace_back();
    } else if (c == '\t') {
      lines.back() += "    ";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      continue;
    } else {
      lines.back() += c;
    }
  }
  return lines;
}

void pad(std::string& out, size_t n) { out.append(n, ' '); }

void trimTrailingSpaces(std::string& line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
}

}  // namespace

size_t displayWidth(std::string_view utf8) {
  size_t width = 0;
  size_t i = 0;
  while (i < utf8.size()) width += codePointWidth(decodeOne(utf8, i));
  return width;
}

size_t charIndexToByteOffset(std::string_view text, size_t charIndex) {
  size_t i = 0;
  for (size_t n = 0; n < charIndex && i < text.size(); ++n) decodeOne(text, i);
  return std::min(i, text.size());
}

std::string formatTable(const ResultSet& result) {
  const size_t ncols = result.columns.size();
  std::string out;
  if (ncols > 0) {
    // Every cell split into lines once, so widths and rendering agree.
    std::vector<std::vector<std::vector<std::string>>> cells;
    cells.reserve(result.rows.size());
    std::vector<size_t> widths(ncols, 0);
    for (size_t c = 0; c < ncols; ++c) widths[c] = displayWidth(result.columns[c].name);
    for (const auto& row : result.rows) {
      auto& lines = cells.emplace_back(ncols);
      for (size_t c = 0; c < ncols; ++c) {
        const bool present = c < row.size() && row[c].has_value();
        lines[c] = present ? cellLines(*row[c]) : std::vector<std::string>{"NULL"};
        for (const auto& l : lines[c]) widths[c] = std::max(widths[c], displayWidth(l));
      }
    }

    std::string line;
    for (size_t c = 0; c < ncols; ++c) {
      const auto& name = result.columns[c].name;
      const size_t w = displayWidth(name);
      const size_t left = (widths[c] - w) / 2;
      line += ' ';
      pad(line, left);
      line += name;
      pad(line, widths[c] - w - left);
      line += c + 1 < ncols ? " |" : " ";
    }
    trimTrailingSpaces(line);
    out += line + '\n';

    line.clear();
    for (size_t c = 0; c < ncols; ++c) {
      line.append(widths[c] + 2, '-');
      if (c + 1 < ncols) line += '+';
    }
    out += line + '\n';

    for (const auto& rowCells : cells) {
      size_t height = 1;
      for (const auto& lines : rowCells) height = std::max(height, lines.size());
      for (size_t h = 0; h < height; ++h) {
        line.clear();
        for (size_t c = 0; c < ncols; ++c) {
          const auto& lines = rowCells[c];
          const std::string text = h < lines.size() ? lines[h] : std::string();
          const size_t w = displayWidth(text);
          line += ' ';
          if (result.columns[c].numeric) {
            pad(line, widths[c] - w);
            line += text;
          } else {
            line += text;
            pad(line, widths[c] - w);
          }
          // psql marks a cell that goes on in the next line with '+'.
          line += h + 1 < lines.size() ? '+' : ' ';
          if (c + 1 < ncols) line += '|';
        }
        trimTrailingSpaces(line);
        out += line + '\n';
      }
    }
  }
  const size_t n = result.rows.size();
  out += "(" + std::to_string(n) + (n == 1 ? " row)" : " rows)") + '\n';
  return out;
}

std::string prettyJson(std::string_view json) {
  size_t begin = json.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos || (json[begin] != '{' && json[begin] != '[')) {
    return std::string(json);
  }
  std::string out;
  out.reserve(json.size() * 2);
  int depth = 0;
  auto newline = [&] {
    out += '\n';
    out.append(static_cast<size_t>(depth) * 2, ' ');
  };
  auto nextSignificant = [&](size_t i) {
    while (i < json.size() && (json[i] == ' ' || json[i] == '\t' || json[i] == '\r' ||
                               json[i] == '\n'))
      ++i;
    return i;
  };
  for (size_t i = begin; i < json.size(); ++i) {
    const char c = json[i];
    switch (c) {
      case '"': {
        // Strings are copied as they are, escapes included.
        size_t j = i + 1;
        while (j < json.size() && json[j] != '"') j += json[j] == '\\' ? 2 : 1;
        if (j >= json.size()) return std::string(json);
        out.append(json.substr(i, j - i + 1));
        i = j;
        break;
      }
      case '{':
      case '[': {
        const size_t next = nextSignificant(i + 1);
        const char close = c == '{' ? '}' : ']';
        if (next < json.size() && json[next] == close) {
          out += c;
          out += close;
          i = next;
        } else {
          out += c;
          ++depth;
          newline();
        }
        break;
      }
      case '}':
      case ']':
        if (--depth < 0) return std::string(json);
        newline();
        out += c;
        break;
      case ',':
        out += ',';
        newline();
        break;
      case ':':
        out += ": ";
        break;
      case ' ':
      case '\t':
      case '\r':
      case '\n':
        break;
      default:
        out += c;
    }
  }
  if (depth != 0) return std::string(json);
  return out;
}

std::string formatResult(const ResultSet& result, const PrintOptions& options) {
  if (result.hasRows) {
    if (result.columns.size() == 1 && result.columns[0].name == "progress") {
      std::string out;
      for (const auto& row : result.rows) {
        out += !row.empty() && row[0] ? prettyJson(*row[0]) : std::string("NULL");
        out += '\n';
      }
      return out;
    }
    return formatTable(result);
  }
  if (options.quiet || result.tag.empty()) return {};
  return result.tag + '\n';
}

namespace {

// The longest part of a source line quoted under an error; longer lines are cut
// to a window around the error position, marked with "...".
constexpr size_t kMaxQuotedWidth = 100;

// The quoted line and the caret line below it, both without a newline.
std::pair<std::string, std::string> quoteWithCaret(std::string_view line,
                                                   size_t errorByte) {
  struct Piece {
    std::string_view bytes;
    size_t width;
  };
  std::vector<Piece> pieces;
  size_t errorPiece = 0;
  bool errorFound = false;
  for (size_t i = 0; i < line.size();) {
    if (!errorFound && i >= errorByte) {
      errorPiece = pieces.size();
      errorFound = true;
    }
    const size_t start = i;
    const uint32_t cp = decodeOne(line, i);
    // A tab keeps its place in both lines, so the caret lines up whatever the
    // terminal's tab stops are.
    pieces.push_back({line.substr(start, i - start),
                      cp == '\t' ? 1 : static_cast<size_t>(codePointWidth(cp))});
  }
  if (!errorFound) errorPiece = pieces.size();

  size_t total = 0;
  for (const auto& p : pieces) total += p.width;
  size_t first = 0;
  size_t last = pieces.size();
  if (total > kMaxQuotedWidth) {
    // Keep some context before the error and fill the rest after it.
    size_t before = 0;
    first = errorPiece;
    while (first > 0 && before + pieces[first - 1].width <= kMaxQuotedWidth / 2) {
      before += pieces[--first].width;
    }
    size_t used = 0;
    last = first;
    while (last < pieces.size() && used + pieces[last].width <= kMaxQuotedWidth) {
      used += pieces[last++].width;
    }
    if (last < errorPiece) last = errorPiece;
  }

  std::string quoted;
  std::string caret;
  if (first > 0) {
    quoted += "...";
    caret += "   ";
  }
  for (size_t k = first; k < last; ++k) {
    quoted.append(pieces[k].bytes);
    if (k < errorPiece) {
      if (pieces[k].bytes == "\t") {
        caret += '\t';
      } else {
        caret.append(pieces[k].width, ' ');
      }
    }
  }
  if (last < pieces.size()) quoted += "...";
  caret += '^';
  return {quoted, caret};
}

}  // namespace

std::string formatError(const ServerError& error, std::string_view text,
                        size_t statementOffset, std::string_view sourceName) {
  statementOffset = std::min(statementOffset, text.size());
  const std::string severity = error.severity.empty() ? "ERROR" : error.severity;
  std::string head = severity;
  if (!error.sqlstate.empty()) head += " [" + error.sqlstate + "]";
  head += ": " + error.message;

  std::string out;
  if (error.position > 0) {
    const size_t errorOffset =
        statementOffset +
        charIndexToByteOffset(text.substr(statementOffset), error.position - 1);
    const auto [lineNo, column] = lineAndColumn(text, errorOffset);
    size_t lineStart = errorOffset;
    while (lineStart > 0 && text[lineStart - 1] != '\n') --lineStart;
    size_t lineEnd = text.find('\n', errorOffset);
    if (lineEnd == std::string_view::npos) lineEnd = text.size();
    std::string_view line = text.substr(lineStart, lineEnd - lineStart);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    auto [quoted, caret] = quoteWithCaret(line, errorOffset - lineStart);

    std::string prefix;
    if (!sourceName.empty()) {
      out += std::string(sourceName) + ":" + std::to_string(lineNo) + ":" +
             std::to_string(column) + ": " + head + '\n';
      prefix = "  ";
    } else {
      out += head + '\n';
      prefix = "LINE " + std::to_string(lineNo) + ": ";
    }
    out += prefix + quoted + '\n';
    out += std::string(prefix.size(), ' ') + caret + '\n';
  } else if (!sourceName.empty()) {
    // No position: point at the start of the statement, so the user still knows
    // which statement of the script failed.
    size_t start = statementOffset;
    while (start < text.size() &&
           (text[start] == ' ' || text[start] == '\t' || text[start] == '\r' ||
            text[start] == '\n'))
      ++start;
    const auto [lineNo, column] = lineAndColumn(text, start);
    out += std::string(sourceName) + ":" + std::to_string(lineNo) + ":" +
           std::to_string(column) + ": " + head + '\n';
  } else {
    out += head + '\n';
  }
  if (!error.detail.empty()) out += "DETAIL: " + error.detail + '\n';
  if (!error.hint.empty()) out += "HINT: " + error.hint + '\n';
  return out;
}

}  // namespace rtsql::client
