// JSON writing without a DOM (sinks write one object per record, so this is a
// hot path: values are appended straight into the output buffer) and timestamp
// text in both directions.
#include "common/json.h"

#include "common/decimal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <charconv>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "common/functions/internal.h"
#include "common/year_month_interval.h"

namespace rtsql {

using expr_internal::civilFromDays;
using expr_internal::daysFromCivil;
using expr_internal::daysInMonth;
using expr_internal::floorDiv;
using expr_internal::floorMod;
using expr_internal::kMicrosPerDay;

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when invalid.
size_t utf8SeqLen(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n;
  uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  // Reject overlong forms, surrogates and code points past U+10FFFF.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
      (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
    return 0;
  return n;
}

// How many bytes from `p` (of `n`) a JSON string takes as they are: printable
// ASCII but the quote and the backslash (DEL included, as JSON allows). The
// text of a kilobyte column is mostly such bytes, so they are skipped 16 (or
// 8) at a time rather than one by one; the byte that stops the run is
// looked at by the caller.
size_t plainJsonBytes(const char* p, size_t n) {
  size_t i = 0;
#if defined(__SSE2__)
  // As signed bytes, every byte under 0x20 or from 0x80 up is less than 0x20.
  const __m128i space = _mm_set1_epi8(0x20);
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  for (; i + 16 <= n; i += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i special = _mm_or_si128(
        _mm_cmplt_epi8(x, space), _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)));
    const int mask = _mm_movemask_epi8(special);
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#else
  // Eight bytes at a time: any byte under 0x20, from 0x80 up, or equal to
  // the quote or the backslash sets its high bit in `special` (the
  // classic "has a byte less than" and "has a zero byte" tests).
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    std::memcpy(&x, p + i, 8);
    const uint64_t q = x ^ (kOnes * '"'), b = x ^ (kOnes * '\\');
    const uint64_t special = (((x - kOnes * 0x20) & ~x) | ((q - kOnes) & ~q) | ((b - kOnes) & ~b) | x) & kHigh;
    if (special != 0) break;
  }
#endif
  for (; i < n; ++i) {
    auto c = static_cast<unsigned char>(p[i]);
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
  }
  return i;
}

}  // namespace

void appendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  size_t run = 0;  // start of the pending run of bytes copied verbatim
  size_t i = 0;
  while (i < s.size()) {
    i += plainJsonBytes(s.data() + i, s.size() - i);
    if (i == s.size()) break;
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t n = utf8SeqLen(s, i);
      if (n) {
        i += n;
        continue;
      }
    }
    out.append(s.data() + run, i - run);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          // A byte that is not valid UTF-8: JSON text must be Unicode, so it
          // becomes the replacement character.
          out += "\\ufffd";
        }
    }
    ++i;
    run = i;
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

void appendJsonValue(std::string& out, const Value& v, const DataType& type) {
  switch (v.type()) {
    case TypeId::Null:
      out += "null";
      return;
    case TypeId::Boolean:
      out += v.asBool() ? "true" : "false";
      return;
    case TypeId::Int:
    case TypeId::BigInt:
    case TypeId::TinyInt:
    case TypeId::SmallInt: {
      char buf[24];
      auto r = std::to_chars(buf, buf + sizeof buf, v.asInt());
      out.append(buf, r.ptr);
      return;
    }
    case TypeId::Double:
    case TypeId::Float: {
      double d = v.asDouble();
      auto append = [&] {
        if (v.type() == TypeId::Float) expr_internal::appendFloat(out, static_cast<float>(d));
        else expr_internal::appendDouble(out, d);
      };
      if (std::isfinite(d)) {
        append();
      } else {
        // JSON has no NaN/Infinity; write them as strings, as Jackson's
        // non-numeric-numbers mode would, so the record stays parseable.
        out += '"';
        append();
        out += '"';
      }
      return;
    }
    case TypeId::String:
      appendJsonString(out, v.asString());
      return;
    case TypeId::Binary:
      out += '"';
      out += expr_internal::toBase64(v.asString());
      out += '"';
      return;
    case TypeId::Timestamp:
      out += '"';
      out += formatTimestamp(v.asInt(), true);
      out += '"';
      return;
    case TypeId::TimestampNtz: {
      // A wall clock: ISO text without the offset.
      std::string text = formatTimestamp(v.asInt(), true);
      text.pop_back();
      out += '"';
      out += text;
      out += '"';
      return;
    }
    case TypeId::Interval:
      appendJsonString(out, expr_internal::formatInterval(v.asInt()));
      return;
    case TypeId::YearMonthInterval:
      // Spark's ANSI text, as its JSON writer gives it: "INTERVAL '1-2' YEAR TO MONTH".
      appendJsonString(out, ym::sparkText(v.asInt(), type.id == TypeId::YearMonthInterval
                                                         ? type
                                                         : *DataType::of(TypeId::YearMonthInterval)));
      return;
    case TypeId::Decimal:
      // A JSON number with every digit, as Spark writes a DecimalType.
      decimal::append(out, v.asDecimal(), v.decimalScale());
      return;
    case TypeId::Date:
      out += '"';
      out += v.toString();
      out += '"';
      return;
    case TypeId::Array: {
      static const DataType kNull{};
      const DataType& et = (type.id == TypeId::Array && type.element) ? *type.element : kNull;
      out += '[';
      bool first = true;
      for (const auto& item : v.asList()) {
        if (!first) out += ',';
        first = false;
        appendJsonValue(out, item, et);
      }
      out += ']';
      return;
    }
    case TypeId::Struct: {
      static const DataType kNull{};
      const auto& items = v.asList();
      bool typed = type.id == TypeId::Struct && type.fields.size() == items.size();
      out += '{';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ',';
        if (typed)
          appendJsonString(out, type.fields[i].name);
        else
          appendJsonString(out, "col" + std::to_string(i + 1));
        out += ':';
        appendJsonValue(out, items[i], typed && type.fields[i].type ? *type.fields[i].type : kNull);
      }
      out += '}';
      return;
    }
    case TypeId::Map: {
      // An object whose names are the keys' text, as Spark writes a map.
      static const DataType kNull{};
      const auto& items = v.asList();
      const DataType& vt = (type.id == TypeId::Map && type.value) ? *type.value : kNull;
      out += '{';
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        if (i) out += ',';
        appendJsonString(out, items[i].toString());
        out += ':';
        appendJsonValue(out, items[i + 1], vt);
      }
      out += '}';
      return;
    }
  }
}

std::string rowToJson(const Row& row, const Schema& schema) {
  static const DataType kNull{};
  std::string out;
  out.reserve(64 + 16 * schema.columns.size());
  out += '{';
  bool first = true;
  for (size_t i = 0; i < schema.columns.size() && i < row.size(); ++i) {
    const auto& col = schema.columns[i];
    if (col.hidden) continue;
    if (!first) out += ',';
    first = false;
    appendJsonString(out, col.name);
    out += ':';
    appendJsonValue(out, row[i], col.type ? *col.type : kNull);
  }
  out += '}';
  return out;
}

namespace {

// A year as Spark prints it: four digits, with a sign before a year past 9999
// (+10000) or before year 0 (-0001), as Java's yyyy does.
char* appendYear(char* p, int64_t y) {
  if (y > 9999) *p++ = '+';
  if (y < 0) {
    *p++ = '-';
    return fmt::format_to(p, "{:04}", -y);
  }
  return fmt::format_to(p, "{:04}", y);
}

}  // namespace

std::string formatTimestamp(int64_t micros, bool iso) {
  int64_t days = floorDiv(micros, kMicrosPerDay);
  int64_t rest = floorMod(micros, kMicrosPerDay);
  int64_t y;
  unsigned m, d;
  civilFromDays(days, &y, &m, &d);
  int64_t secs = rest / 1000000;
  auto frac = static_cast<int>(rest % 1000000);
  char buf[64];
  char* p = appendYear(buf, y);
  p = fmt::format_to(p, "-{:02}-{:02}{}{:02}:{:02}:{:02}", m, d, iso ? 'T' : ' ', secs / 3600,
                     secs / 60 % 60, secs % 60);
  if (iso) {
    // ISO form keeps milliseconds always (as Spark's JSON writer does), and
    // microseconds only when there are any.
    if (frac % 1000 == 0)
      p = fmt::format_to(p, ".{:03}Z", frac / 1000);
    else
      p = fmt::format_to(p, ".{:06}Z", frac);
  } else if (frac) {
    char f[8];
    fmt::format_to(f, "{:06}", frac);
    int len = 6;
    while (len > 0 && f[len - 1] == '0') --len;
    *p++ = '.';
    for (int k = 0; k < len; ++k) *p++ = f[k];
  }
  return std::string(buf, p);
}

namespace {

// Reads 1..maxDigits decimal digits at s[i]; false when there are none.
bool readNum(std::string_view s, size_t& i, int minDigits, int maxDigits, int64_t* out) {
  int n = 0;
  int64_t v = 0;
  while (i < s.size() && n < maxDigits && s[i] >= '0' && s[i] <= '9') {
    v = v * 10 + (s[i] - '0');
    ++i;
    ++n;
  }
  *out = v;
  return n >= minDigits;
}


}  // namespace

bool parseDate(std::string_view s, int64_t* days) {
  while (!s.empty() && static_cast<unsigned char>(s.front()) <= ' ') s.remove_prefix(1);
  while (!s.empty() && static_cast<unsigned char>(s.back()) <= ' ') s.remove_suffix(1);
  size_t i = 0;
  int64_t year, month = 1, day = 1;
  if (!readNum(s, i, 4, 7, &year)) return false;
  if (i < s.size() && s[i] == '-') {
    ++i;
    if (!readNum(s, i, 1, 2, &month)) return false;
    if (i < s.size() && s[i] == '-') {
      ++i;
      if (!readNum(s, i, 1, 2, &day)) return false;
      // A time after the day is allowed and not read, as Spark casts.
      if (i < s.size() && (s[i] == ' ' || s[i] == 'T')) i = s.size();
    }
  }
  if (i != s.size() || month < 1 || month > 12 || day < 1 ||
      static_cast<unsigned>(day) > daysInMonth(year, static_cast<unsigned>(month)))
    return false;
  *days = daysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return true;
}

std::string formatDate(int64_t days) {
  int64_t y;
  unsigned m, d;
  civilFromDays(days, &y, &m, &d);
  char buf[40];
  char* p = fmt::format_to(appendYear(buf, y), "-{:02}-{:02}", m, d);
  return std::string(buf, p);
}

bool parseTimestamp(std::string_view s, int64_t* micros, bool applyOffset) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  size_t i = 0;
  int64_t year, month = 1, day = 1, hour = 0, minute = 0, second = 0, frac = 0;
  // Year, then optionally -month and -day ("2024", "2024-05", "2024-5-1").
  if (!readNum(s, i, 4, 4, &year)) return false;
  if (i < s.size() && s[i] == '-') {
    ++i;
    if (!readNum(s, i, 1, 2, &month)) return false;
    if (i < s.size() && s[i] == '-') {
      ++i;
      if (!readNum(s, i, 1, 2, &day)) return false;
    }
  }
  if (month < 1 || month > 12) return false;
  if (day < 1 || static_cast<unsigned>(day) > daysInMonth(year, static_cast<unsigned>(month)))
    return false;
  int64_t offsetMinutes = 0;
  if (i < s.size() && (s[i] == ' ' || s[i] == 'T' || s[i] == 't')) {
    ++i;
    while (i < s.size() && s[i] == ' ') ++i;
    if (!readNum(s, i, 1, 2, &hour)) return false;
    if (i >= s.size() || s[i] != ':') return false;
    ++i;
    if (!readNum(s, i, 1, 2, &minute)) return false;
    if (i < s.size() && s[i] == ':') {
      ++i;
      if (!readNum(s, i, 1, 2, &second)) return false;
      if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
        ++i;
        int n = 0;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
          if (n < 6) frac = frac * 10 + (s[i] - '0');  // digits past micros are dropped
          ++n;
          ++i;
        }
        if (n == 0) return false;
        for (int k = n; k < 6; ++k) frac *= 10;
      }
    }
    if (hour > 23 || minute > 59 || second > 59) return false;
    while (i < s.size() && s[i] == ' ') ++i;
    // Zone: Z, UTC, GMT, or an offset +hh[:mm] / +hhmm.
    if (i < s.size()) {
      std::string_view z = s.substr(i);
      if (z == "Z" || z == "z" || z == "UTC" || z == "GMT") {
        i = s.size();
      } else if (z[0] == '+' || z[0] == '-') {
        int sign = z[0] == '-' ? -1 : 1;
        ++i;
        int64_t oh = 0, om = 0;
        if (!readNum(s, i, 2, 2, &oh)) return false;
        if (i < s.size() && s[i] == ':') ++i;
        if (i < s.size() && !readNum(s, i, 2, 2, &om)) return false;
        if (oh > 18 || om > 59) return false;
        offsetMinutes = sign * (oh * 60 + om);
      }
    }
  }
  if (i != s.size()) return false;
  int64_t days = daysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  if (!applyOffset) offsetMinutes = 0;
  *micros = days * kMicrosPerDay + ((hour * 60 + minute - offsetMinutes) * 60 + second) * 1000000 +
            frac;
  return true;
}

}  // namespace rtsql
