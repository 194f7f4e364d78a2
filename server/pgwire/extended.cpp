// Extended-protocol value conversions: finding parameters in statement text,
// turning parameter values into SQL literals, and sending result values in
// binary format.
#include "server/pgwire/extended.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "common/error.h"
#include "common/hex.h"
#include "common/json.h"
#include "server/pgwire/codec.h"
#include "server/pgwire/framing.h"

namespace rtsql::pgwire {

namespace {

// PostgreSQL's limit on the number of parameters of one statement.
constexpr size_t kMaxParameters = 65535;

bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$' ||
         (static_cast<unsigned char>(c) & 0x80) != 0;
}

// Calls visit(dollarAt, length, number) for every parameter reference in `sql`,
// skipping quoted strings and names, comments, and identifiers that contain '$'.
template <typename F>
void scanParameters(std::string_view sql, F visit) {
  size_t i = 0;
  const size_t n = sql.size();
  while (i < n) {
    const char c = sql[i];
    if (c == '\'' || c == '"' || c == '`') {
      // A doubled quote inside is an escaped quote; scanning on past it works
      // the same as treating it as one, since both halves are quotes.
      const size_t close = sql.find(c, i + 1);
      i = close == std::string_view::npos ? n : close + 1;
      continue;
    }
    if (c == '-' && i + 1 < n && sql[i + 1] == '-') {
      const size_t eol = sql.find('\n', i);
      i = eol == std::string_view::npos ? n : eol + 1;
      continue;
    }
    if (c == '/' && i + 1 < n && sql[i + 1] == '*') {
      const size_t close = sql.find("*/", i + 2);
      i = close == std::string_view::npos ? n : close + 2;
      continue;
    }
    if (isIdentChar(c) && c != '$') {
      // A whole word: a '$' inside it belongs to the identifier.
      while (i < n && isIdentChar(sql[i])) ++i;
      continue;
    }
    if (c == '$' && i + 1 < n && std::isdigit(static_cast<unsigned char>(sql[i + 1])) != 0) {
      size_t j = i + 1;
      size_t number = 0;
      while (j < n && std::isdigit(static_cast<unsigned char>(sql[j])) != 0) {
        if (number <= kMaxParameters) number = number * 10 + static_cast<size_t>(sql[j] - '0');
        ++j;
      }
      if (number == 0 || number > kMaxParameters) {
        throw SqlError(sqlstate::kUndefinedParameter,
                       fmt::format("there is no parameter {}", sql.substr(i, j - i)), i);
      }
      visit(i, j - i, number);
      i = j;
      continue;
    }
    ++i;
  }
}

std::string textLiteral(std::string_view s) {
  if (s.find('\0') != std::string_view::npos) {
    throw SqlError(sqlstate::kCharacterNotInRepertoire,
                   "invalid byte sequence for encoding \"UTF8\": 0x00 in a parameter");
  }
  // With a backslash, an E'...' string: it reads back the same whether the
  // session reads backslash escapes in '...' or keeps them as written.
  const bool backslash = s.find('\\') != std::string_view::npos;
  std::string out = backslash ? "E'" : "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out.push_back(c);
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool isInteger(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// A decimal number the SQL grammar reads as one literal (after an optional sign).
bool isDecimal(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  size_t i = 0;
  size_t digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    const size_t expStart = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) ++i;
    if (i == expStart) return false;
  }
  return i == s.size();
}

// A number as a literal: a leading '+' dropped, a negative one parenthesised
// so that `x-$1` cannot become the comment `x--1`.
std::string numberLiteral(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (!s.empty() && s[0] == '-') return fmt::format("({})", s);
  return std::string(s);
}

std::string doubleLiteral(double d) {
  if (std::isnan(d)) return "CAST('NaN' AS DOUBLE)";
  if (std::isinf(d)) return d > 0 ? "CAST('Infinity' AS DOUBLE)" : "CAST('-Infinity' AS DOUBLE)";
  return fmt::format("CAST({} AS DOUBLE)", numberLiteral(fmt::format("{}", d)));
}

const char* typeName(uint32_t oid) {
  switch (oid) {
    case extype::kInt2: return "smallint";
    case pgtype::kInt4: return "integer";
    case pgtype::kInt8: return "bigint";
    case extype::kOid: return "oid";
    case extype::kFloat4: return "real";
    case pgtype::kFloat8: return "double precision";
    case extype::kNumeric: return "numeric";
    case pgtype::kBool: return "boolean";
    case pgtype::kTimestamp: return "timestamp";
    case pgtype::kTimestamptz: return "timestamp with time zone";
    default: return "the parameter's type";
  }
}

[[noreturn]] void invalidInput(uint32_t oid, std::string_view value) {
  throw SqlError(sqlstate::kInvalidTextRepresentation,
                 fmt::format("invalid input syntax for type {}: \"{}\"", typeName(oid), value));
}

template <typename T>
T readBinary(std::string_view bytes, uint32_t oid) {
  if (bytes.size() != sizeof(T)) {
    throw SqlError(sqlstate::kProtocolViolation,
                   fmt::format("incorrect binary data format in a {} parameter: {} bytes",
                               typeName(oid), bytes.size()));
  }
  uint64_t v = 0;
  for (unsigned char b : bytes) v = (v << 8) | b;
  if constexpr (std::is_same_v<T, double>) {
    return std::bit_cast<double>(v);
  } else if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<float>(static_cast<uint32_t>(v));
  } else {
    return static_cast<T>(v);
  }
}

void putBigEndian(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

template <typename T>
T parseInteger(std::string_view text, uint32_t oid) {
  std::string_view s = trimmed(text);
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  T v{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) invalidInput(oid, text);
  return v;
}

double parseDouble(std::string_view text, uint32_t oid) {
  std::string s(trimmed(text));
  if (iequal(s, "NaN")) return std::nan("");
  if (iequal(s, "Infinity") || iequal(s, "+Infinity") || iequal(s, "inf")) return INFINITY;
  if (iequal(s, "-Infinity") || iequal(s, "-inf")) return -INFINITY;
  if (!isDecimal(s)) invalidInput(oid, text);
  return std::strtod(s.c_str(), nullptr);
}

// PostgreSQL's binary numeric: int16 count of base-10000 digits, int16 weight
// (the power of 10000 of the first), uint16 sign, int16 display scale, then the
// digits. `text` is a DECIMAL's plain text ("-12.50"), never an exponent.
constexpr uint16_t kNumericNegative = 0x4000;

std::string numericBinary(std::string_view text, uint32_t oid) {
  std::string_view s = trimmed(text);
  const bool negative = !s.empty() && s[0] == '-';
  if (negative || (!s.empty() && s[0] == '+')) s.remove_prefix(1);
  const size_t point = s.find('.');
  std::string_view whole = s.substr(0, point);
  std::string_view frac =
      point == std::string_view::npos ? std::string_view() : s.substr(point + 1);
  auto allDigits = [](std::string_view d) {
    return std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if ((whole.empty() && frac.empty()) || !allDigits(whole) || !allDigits(frac) ||
      frac.size() > 0x3FFF)
    invalidInput(oid, text);
  // The digits padded to whole groups of four on both sides of the point.
  std::string digits(3 - (whole.size() + 3) % 4, '0');
  digits.append(whole);
  const auto wholeGroups = static_cast<int>(digits.size() / 4);
  digits.append(frac);
  digits.append(3 - (frac.size() + 3) % 4, '0');
  std::vector<uint16_t> groups;
  for (size_t i = 0; i < digits.size(); i += 4)
    groups.push_back(static_cast<uint16_t>(std::stoi(digits.substr(i, 4))));
  int weight = wholeGroups - 1;
  size_t first = 0;
  while (first < groups.size() && groups[first] == 0) {
    ++first;
    --weight;
  }
  size_t last = groups.size();
  while (last > first && groups[last - 1] == 0) --last;
  if (first == last) weight = 0;
  std::string out;
  putBigEndian(out, last - first, 2);
  putBigEndian(out, static_cast<uint16_t>(static_cast<int16_t>(weight)), 2);
  putBigEndian(out, negative && first != last ? kNumericNegative : 0, 2);
  putBigEndian(out, frac.size(), 2);
  for (size_t i = first; i < last; ++i) putBigEndian(out, groups[i], 2);
  return out;
}

// A binary numeric parameter as decimal text, bounded: at most 1000 digits.
std::string numericText(std::string_view v, uint32_t oid) {
  auto at = [&](size_t i) {
    return static_cast<uint16_t>((static_cast<unsigned char>(v[i]) << 8) |
                                 static_cast<unsigned char>(v[i + 1]));
  };
  if (v.size() < 8) invalidInput(oid, "binary numeric");
  const size_t n = at(0);
  const auto weight = static_cast<int16_t>(at(2));
  const uint16_t sign = at(4), dscale = at(6);
  if (v.size() != 8 + 2 * n || n > 250 || dscale > 1000 || std::abs(weight) > 250)
    invalidInput(oid, "binary numeric");
  if (sign == 0xC000) return "NaN";
  if (sign != 0 && sign != kNumericNegative) invalidInput(oid, "binary numeric");
  // The four decimal digits of weight w (zeros outside those sent).
  auto digitsOf = [&](int w) {
    const int i = weight - w;
    const uint16_t d = i >= 0 && static_cast<size_t>(i) < n ? at(8 + 2 * static_cast<size_t>(i)) : 0;
    if (d > 9999) invalidInput(oid, "binary numeric");
    return fmt::format("{:04}", d);
  };
  std::string whole, frac;
  for (int w = std::max<int>(weight, 0); w >= 0; --w) whole += digitsOf(w);
  for (int w = -1; static_cast<int>(frac.size()) < dscale; --w) frac += digitsOf(w);
  frac.resize(dscale);
  const size_t nonzero = whole.find_first_not_of('0');
  whole = nonzero == std::string::npos ? "0" : whole.substr(nonzero);
  return (sign == kNumericNegative ? "-" : "") + whole + (frac.empty() ? "" : "." + frac);
}

// Days since 1970-01-01 of a proleptic Gregorian date.
int64_t daysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// Microseconds since 2000-01-01 00:00:00 of "YYYY-MM-DD[ T]HH:MM:SS[.ffffff]",
// as PostgreSQL sends a timestamp in binary. For a timestamptz (`oid`
// kTimestamptz) the text ends with its offset as pgTimestamptzText() writes
// it ("+02", "-03:30", "+00:53:28"; Z), then " BC" for years before 1, and
// the microseconds are those of the instant (since 2000-01-01 00:00 UTC).
int64_t timestampMicros(std::string_view text, uint32_t oid = pgtype::kTimestamp) {
  std::string_view s = trimmed(text);
  auto number = [&](size_t at, size_t len) -> int64_t {
    if (at + len > s.size()) invalidInput(oid, text);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data() + at, s.data() + at + len, v);
    if (ec != std::errc() || end != s.data() + at + len) invalidInput(oid, text);
    return v;
  };
  bool bc = false;
  int64_t offsetSeconds = 0;
  if (oid == pgtype::kTimestamptz) {
    if (s.size() > 3 && s.substr(s.size() - 3) == " BC") {
      bc = true;
      s.remove_suffix(3);
    }
    // The offset: after the seconds (and their fraction), a sign or Z.
    const size_t sign = s.size() > 19 ? s.find_first_of("+-Zz", 19) : std::string_view::npos;
    if (sign == std::string_view::npos) invalidInput(oid, text);
    const std::string_view zone = s.substr(sign);
    if (zone != "Z" && zone != "z") {
      // ±HH, ±HH:MM or ±HH:MM:SS.
      if (zone.size() != 3 && zone.size() != 6 && zone.size() != 9) invalidInput(oid, text);
      int64_t parts[3] = {0, 0, 0};
      for (size_t i = 0; i * 3 + 1 < zone.size(); ++i) {
        if (i > 0 && zone[i * 3] != ':') invalidInput(oid, text);
        parts[i] = number(sign + i * 3 + 1, 2);
      }
      if (parts[0] > 15 || parts[1] > 59 || parts[2] > 59) invalidInput(oid, text);
      offsetSeconds = (parts[0] * 60 + parts[1]) * 60 + parts[2];
      if (zone[0] == '-') offsetSeconds = -offsetSeconds;
    }
    s = s.substr(0, sign);
  } else if (!s.empty() && (s.back() == 'Z' || s.back() == 'z')) {
    s.remove_suffix(1);
  }
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
      s[13] != ':' || s[16] != ':') {
    invalidInput(oid, text);
  }
  int64_t year = number(0, 4);
  if (bc) year = 1 - year;
  const int64_t days =
      daysFromCivil(year, static_cast<unsigned>(number(5, 2)), static_cast<unsigned>(number(8, 2)));
  int64_t micros = ((number(11, 2) * 60 + number(14, 2)) * 60 + number(17, 2)) * 1000000;
  if (s.size() > 19) {
    if (s[19] != '.' || s.size() == 20) invalidInput(oid, text);
    const std::string_view frac = s.substr(20);
    if (frac.size() > 9) invalidInput(oid, text);
    int64_t f = number(20, frac.size());
    for (size_t i = frac.size(); i < 6; ++i) f *= 10;
    for (size_t i = 6; i < frac.size(); ++i) f /= 10;
    micros += f;
  }
  constexpr int64_t kEpoch2000Days = 10957;  // 1970-01-01 to 2000-01-01
  return (days - kEpoch2000Days) * 86400LL * 1000000LL + micros - offsetSeconds * 1000000LL;
}

// A timestamp or timestamptz parameter sent in binary (microseconds since
// 2000-01-01, of the wall clock or of the instant in UTC) as a literal: the
// wall clock as a TIMESTAMP in the session zone, as the text form of a
// timestamp parameter reads, or the instant with its Z.
std::string binaryTimestampLiteral(std::string_view bytes, uint32_t oid) {
  const auto micros2000 = readBinary<int64_t>(bytes, oid);
  constexpr int64_t kEpoch2000Micros = 946684800LL * 1000000LL;
  int64_t micros = 0;
  if (__builtin_add_overflow(micros2000, kEpoch2000Micros, &micros))
    invalidInput(oid, "out of range");
  if (oid == pgtype::kTimestamp) return "TIMESTAMP " + textLiteral(formatTimestamp(micros));
  return "TIMESTAMP " + textLiteral(formatTimestamp(micros) + "Z");
}

}  // namespace

// ---- Statement text --------------------------------------------------------------------

size_t countParameters(std::string_view sql) {
  size_t highest = 0;
  scanParameters(sql, [&](size_t, size_t, size_t number) { highest = std::max(highest, number); });
  return highest;
}

size_t BoundStatement::originalOffset(size_t offset) const {
  size_t original = offset;
  for (const auto& r : replacements) {
    if (offset < r.at) break;
    if (offset < r.at + r.length) return r.originalAt;
    original = r.originalAt + r.originalLength + (offset - (r.at + r.length));
  }
  return original;
}

SqlError BoundStatement::mapError(SqlError err) const {
  if (err.hasPosition()) err.setPosition(originalOffset(err.position()));
  return err;
}

BoundStatement substituteParameters(std::string_view sql,
                                    const std::vector<std::string>& literals) {
  BoundStatement out;
  size_t copied = 0;
  scanParameters(sql, [&](size_t at, size_t length, size_t number) {
    if (number > literals.size()) {
      throw SqlError(sqlstate::kUndefinedParameter,
                     fmt::format("there is no parameter ${}", number), at);
    }
    out.text.append(sql.substr(copied, at - copied));
    const std::string& literal = literals[number - 1];
    out.replacements.push_back({out.text.size(), literal.size(), at, length, number - 1});
    out.text.append(literal);
    copied = at + length;
  });
  out.text.append(sql.substr(copied));
  return out;
}

std::string parameterLiteral(const std::optional<std::string>& value, uint32_t typeOid,
                             int16_t format) {
  if (!value) return "NULL";
  const std::string& v = *value;
  if (format == kBinaryFormat) {
    switch (typeOid) {
      case extype::kInt2: return numberLiteral(std::to_string(readBinary<int16_t>(v, typeOid)));
      case pgtype::kInt4: return numberLiteral(std::to_string(readBinary<int32_t>(v, typeOid)));
      case pgtype::kInt8: return numberLiteral(std::to_string(readBinary<int64_t>(v, typeOid)));
      case extype::kOid: return std::to_string(readBinary<uint32_t>(v, typeOid));
      case extype::kNumeric: {
        const std::string text = numericText(v, typeOid);
        return text == "NaN" ? "CAST('NaN' AS DOUBLE)" : numberLiteral(text);
      }
      case extype::kFloat4:
        return doubleLiteral(static_cast<double>(readBinary<float>(v, typeOid)));
      case pgtype::kFloat8: return doubleLiteral(readBinary<double>(v, typeOid));
      case pgtype::kBool: return readBinary<uint8_t>(v, typeOid) != 0 ? "TRUE" : "FALSE";
      case pgtype::kTimestamp:
      case pgtype::kTimestamptz:
        return binaryTimestampLiteral(v, typeOid);
      case extype::kUnspecified:
      case extype::kUnknown:
      case extype::kName:
      case pgtype::kText:
      case extype::kVarchar:
      case extype::kBpchar:
      case pgtype::kJson:
        return textLiteral(v);
      case extype::kJsonb:
        // Binary jsonb is a version byte (1) before the JSON text.
        if (!v.empty() && v[0] == 1) return textLiteral(std::string_view(v).substr(1));
        break;
      default:
        break;
    }
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("binary format is not supported for parameters of type {}",
                               typeOid),
                   SqlError::npos, "Send the parameter in text format.");
  }
  switch (typeOid) {
    case extype::kInt2:
    case pgtype::kInt4:
    case pgtype::kInt8:
    case extype::kOid: {
      const std::string_view s = trimmed(v);
      if (!isInteger(s)) invalidInput(typeOid, v);
      return numberLiteral(s);
    }
    case extype::kNumeric: {
      const std::string_view s = trimmed(v);
      if (iequal(s, "NaN")) return "CAST('NaN' AS DOUBLE)";
      if (!isDecimal(s)) invalidInput(typeOid, v);
      return numberLiteral(s);
    }
    case extype::kFloat4:
    case pgtype::kFloat8: {
      const std::string_view s = trimmed(v);
      if (isDecimal(s)) return fmt::format("CAST({} AS DOUBLE)", numberLiteral(s));
      return doubleLiteral(parseDouble(s, typeOid));
    }
    case pgtype::kBool: {
      const std::string_view s = trimmed(v);
      for (const char* t : {"t", "true", "y", "yes", "on", "1"}) {
        if (iequal(s, t)) return "TRUE";
      }
      for (const char* f : {"f", "false", "n", "no", "off", "0"}) {
        if (iequal(s, f)) return "FALSE";
      }
      invalidInput(typeOid, v);
    }
    case pgtype::kTimestamp:
    case pgtype::kTimestamptz:
      return "TIMESTAMP " + textLiteral(v);
    case pgtype::kDate:
      return "DATE " + textLiteral(v);
    default:
      return textLiteral(v);
  }
}

bool binaryResultSupported(uint32_t typeOid) {
  switch (typeOid) {
    case pgtype::kBool:
    case pgtype::kBytea:
    case extype::kInt2:
    case pgtype::kInt4:
    case pgtype::kInt8:
    case extype::kOid:
    case extype::kFloat4:
    case pgtype::kFloat8:
    case extype::kNumeric:
    case pgtype::kText:
    case extype::kName:
    case extype::kVarchar:
    case extype::kBpchar:
    case extype::kUnknown:
    case pgtype::kJson:
    case pgtype::kTimestamp:
    case pgtype::kTimestamptz:
      return true;
    default:
      return false;
  }
}

std::string encodeBinaryValue(std::string_view text, uint32_t typeOid) {
  std::string out;
  switch (typeOid) {
    case pgtype::kBool: {
      const std::string_view s = trimmed(text);
      out.push_back(iequal(s, "t") || iequal(s, "true") || s == "1" ? 1 : 0);
      return out;
    }
    case extype::kInt2:
      putBigEndian(out, static_cast<uint16_t>(parseInteger<int16_t>(text, typeOid)), 2);
      return out;
    case pgtype::kInt4:
      putBigEndian(out, static_cast<uint32_t>(parseInteger<int32_t>(text, typeOid)), 4);
      return out;
    case extype::kOid:
      putBigEndian(out, parseInteger<uint32_t>(text, typeOid), 4);
      return out;
    case pgtype::kInt8:
      putBigEndian(out, static_cast<uint64_t>(parseInteger<int64_t>(text, typeOid)), 8);
      return out;
    case extype::kFloat4:
      putBigEndian(out, std::bit_cast<uint32_t>(static_cast<float>(parseDouble(text, typeOid))),
                   4);
      return out;
    case pgtype::kFloat8:
      putBigEndian(out, std::bit_cast<uint64_t>(parseDouble(text, typeOid)), 8);
      return out;
    case pgtype::kTimestamp:
    case pgtype::kTimestamptz:
      putBigEndian(out, static_cast<uint64_t>(timestampMicros(text, typeOid)), 8);
      return out;
    case extype::kNumeric:
      return numericBinary(text, typeOid);
    case pgtype::kBytea: {
      // The text form is "\x" and two hex digits per byte.
      if (text.size() < 2 || text[0] != '\\' || text[1] != 'x' || text.size() % 2 != 0) {
        throw SqlError(sqlstate::kInvalidTextRepresentation,
                       "invalid bytea value: expected \\x and hex digits");
      }
      for (size_t i = 2; i < text.size(); i += 2) {
        const int hi = hexDigitValue(text[i]);
        const int lo = hexDigitValue(text[i + 1]);
        if (hi < 0 || lo < 0) {
          throw SqlError(sqlstate::kInvalidTextRepresentation,
                         "invalid bytea value: expected \\x and hex digits");
        }
        out.push_back(static_cast<char>(hi * 16 + lo));
      }
      return out;
    }
    default:
      if (binaryResultSupported(typeOid)) return std::string(text);  // text-like types
      throw SqlError(sqlstate::kFeatureNotSupported,
                     fmt::format("binary format is not supported for result columns of type {}",
                                 typeOid),
                     SqlError::npos, "Request text format (format code 0) for this column.");
  }
}

bool returnsRows(std::string_view sql) {
  size_t i = 0;
  // Skip blanks and comments before the first word.
  for (;;) {
    while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i])) != 0) ++i;
    if (sql.substr(i, 2) == "--") {
      const size_t eol = sql.find('\n', i);
      i = eol == std::string_view::npos ? sql.size() : eol + 1;
    } else if (sql.substr(i, 2) == "/*") {
      const size_t close = sql.find("*/", i + 2);
      i = close == std::string_view::npos ? sql.size() : close + 2;
    } else {
      break;
    }
  }
  if (i < sql.size() && sql[i] == '(') return true;
  size_t end = i;
  while (end < sql.size() && std::isalpha(static_cast<unsigned char>(sql[end])) != 0) ++end;
  const std::string_view word = sql.substr(i, end - i);
  for (const char* k : {"select", "show", "describe", "desc", "explain", "values", "with",
                        "table", "fetch"}) {
    if (iequal(word, k)) return true;
  }
  return false;
}

std::optional<std::string> deallocateTarget(std::string_view sql) {
  // Words separated by blanks; a trailing ';' is allowed.
  std::string_view s = trimmed(sql);
  if (!s.empty() && s.back() == ';') s = trimmed(s.substr(0, s.size() - 1));
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) != 0) ++i;
    if (i >= s.size()) break;
    size_t end = i;
    if (s[i] == '"') {
      end = s.find('"', i + 1);
      if (end == std::string_view::npos) return std::nullopt;
      ++end;
    } else {
      while (end < s.size() && std::isspace(static_cast<unsigned char>(s[end])) == 0) ++end;
    }
    words.push_back(s.substr(i, end - i));
    i = end;
  }
  if (words.empty() || !iequal(words[0], "deallocate")) return std::nullopt;
  size_t at = 1;
  if (at < words.size() && iequal(words[at], "prepare")) ++at;
  if (at + 1 != words.size()) return std::nullopt;
  const std::string_view name = words[at];
  if (iequal(name, "all")) return std::string();
  if (name.size() >= 2 && name.front() == '"') return std::string(name.substr(1, name.size() - 2));
  if (!std::all_of(name.begin(), name.end(), isIdentChar)) return std::nullopt;
  // An unquoted name folds to lower case, as in PostgreSQL.
  std::string lower(name);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return lower;
}

std::vector<int16_t> resultFormatsFor(const std::vector<int16_t>& codes,
                                      const std::vector<ResultColumn>& columns) {
  std::vector<int16_t> formats(columns.size(), kTextFormat);
  if (codes.size() == 1) {
    std::fill(formats.begin(), formats.end(), codes[0]);
  } else if (codes.size() == columns.size()) {
    formats = codes;
  } else if (!codes.empty()) {
    throw SqlError(sqlstate::kProtocolViolation,
                   fmt::format("bind message has {} result formats but query has {} columns",
                               codes.size(), columns.size()));
  }
  for (size_t i = 0; i < columns.size(); ++i) {
    if (formats[i] == kBinaryFormat && !binaryResultSupported(columns[i].typeOid)) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     fmt::format("binary format is not supported for result column \"{}\" "
                                 "of type {}",
                                 columns[i].name, columns[i].typeOid),
                     SqlError::npos, "Request text format (format code 0) for this column.");
    }
  }
  return formats;
}

}  // namespace rtsql::pgwire
