// Text helpers shared by values, casts and functions: Spark-style doubles,
// PostgreSQL-style intervals, base64, hex and UTF-8 length; and the calendar
// arithmetic that timestamps are built on.
#include <charconv>
#include <cmath>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "common/functions/internal.h"

namespace rtsql::expr_internal {

namespace {

// A double or a float as Java's Double.toString or Float.toString prints it:
// the shortest digits that read back as the same value of that width.
template <typename F>
void appendJavaFloating(std::string& out, F d) {
  if (std::isnan(d)) {
    out += "NaN";
    return;
  }
  if (std::isinf(d)) {
    out += d > 0 ? "Infinity" : "-Infinity";
    return;
  }
  if (d == 0) {
    out += std::signbit(d) ? "-0.0" : "0.0";
    return;
  }
  // Shortest round-trip digits in scientific form, e.g. "1.2345e-05", then laid
  // out the way Java's Double.toString does (which is what Spark prints).
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  bool neg = false;
  if (!sci.empty() && sci[0] == '-') {
    neg = true;
    sci.remove_prefix(1);
  }
  size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e))
    if (c != '.') digits += c;
  int exp = 0;
  std::string_view es = sci.substr(e + 1);
  if (!es.empty() && es[0] == '+') es.remove_prefix(1);
  std::from_chars(es.data(), es.data() + es.size(), exp);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  if (neg) out += '-';
  F a = std::fabs(d);
  if (a >= F(1e-3) && a < F(1e7)) {
    if (exp >= 0) {
      size_t intLen = static_cast<size_t>(exp) + 1;
      if (digits.size() <= intLen) {
        out += digits;
        out.append(intLen - digits.size(), '0');
        out += ".0";
      } else {
        out.append(digits, 0, intLen);
        out += '.';
        out.append(digits, intLen, std::string::npos);
      }
    } else {
      out += "0.";
      out.append(static_cast<size_t>(-exp - 1), '0');
      out += digits;
    }
  } else {
    out += digits[0];
    out += '.';
    if (digits.size() > 1)
      out.append(digits, 1, std::string::npos);
    else
      out += '0';
    out += 'E';
    out += std::to_string(exp);
  }
}

}  // namespace

void appendDouble(std::string& out, double d) { appendJavaFloating(out, d); }

void appendFloat(std::string& out, float f) { appendJavaFloating(out, f); }

std::string formatFloat(float f) {
  std::string s;
  appendFloat(s, f);
  return s;
}

std::string formatDouble(double d) {
  std::string s;
  appendDouble(s, d);
  return s;
}

std::string formatInterval(int64_t micros) {
  std::string s;
  uint64_t u = micros < 0 ? 0 - static_cast<uint64_t>(micros) : static_cast<uint64_t>(micros);
  const char* sign = micros < 0 ? "-" : "";
  uint64_t days = u / static_cast<uint64_t>(kMicrosPerDay);
  uint64_t rest = u % static_cast<uint64_t>(kMicrosPerDay);
  uint64_t frac = rest % 1000000;
  uint64_t secs = rest / 1000000;
  // The sign applies to the whole interval: "-1 day 02:00:00" is minus 26 hours.
  s += sign;
  if (days) s += fmt::format("{} day{} ", days, days == 1 ? "" : "s");
  s += fmt::format("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
  if (frac) {
    std::string f = fmt::format("{:06}", frac);
    while (f.back() == '0') f.pop_back();
    s += '.';
    s += f;
  }
  return s;
}

namespace {
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string toBase64(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(in[k])); };
  for (; i + 3 <= in.size(); i += 3) {
    uint32_t v = b(i) << 16 | b(i + 1) << 8 | b(i + 2);
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += kB64[v & 63];
  }
  if (in.size() - i == 1) {
    uint32_t v = b(i) << 16;
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += "==";
  } else if (in.size() - i == 2) {
    uint32_t v = b(i) << 16 | b(i + 1) << 8;
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

bool fromBase64(std::string_view in, std::string* out) {
  static const auto kRev = [] {
    std::array<int8_t, 256> r{};
    r.fill(-1);
    for (int i = 0; i < 64; ++i) r[static_cast<unsigned char>(kB64[i])] = static_cast<int8_t>(i);
    // The URL-safe alphabet decodes too.
    r['-'] = 62;
    r['_'] = 63;
    return r;
  }();
  out->clear();
  uint32_t acc = 0;
  int bits = 0;
  size_t pad = 0;
  for (char c : in) {
    if (c == '=') {
      ++pad;
      continue;
    }
    if (c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
    if (pad) return false;  // data after padding
    int v = kRev[static_cast<unsigned char>(c)];
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return pad <= 2;
}

bool sparkBase64Valid(std::string_view in) {
  size_t chars = 0, pad = 0;
  for (char c : in) {
    const bool alphabet = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                          (c >= '0' && c <= '9') || c == '+' || c == '/';
    if (alphabet) {
      if (pad) return false;  // data after padding
      ++chars;
    } else if (c == '=') {
      if (++pad > 2) return false;
    } else if (c != '\n' && c != '\r') {
      return false;
    }
  }
  return pad ? (chars + pad) % 4 == 0 : chars % 4 != 1;
}

const char* javaMimeBase64Error(std::string_view in) {
  auto alphabet = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '+' || c == '/';
  };
  int inUnit = 0;  // base64 characters read of the current 4-character unit
  size_t i = 0;
  for (; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '=') {
      // Padding ends the data: after two characters it is "==", after three
      // one '='; at the start of a unit it is wrong.
      if (inUnit == 0 || (inUnit == 2 && (i + 1 == in.size() || in[++i] != '=')))
        return "Input byte array has wrong 4-byte ending unit";
      ++i;
      break;
    }
    if (!alphabet(c)) continue;  // MIME skips any other character
    inUnit = (inUnit + 1) % 4;
  }
  if (inUnit == 1) return "Last unit does not have enough valid bits";
  for (; i < in.size(); ++i)
    if (alphabet(in[i])) return "Input byte array has incorrect ending byte";
  return nullptr;
}

size_t findSubstring(std::string_view text, std::string_view needle, size_t from) {
  if (from > text.size()) return std::string_view::npos;
  if (needle.empty()) return from;
  const void* at = memmem(text.data() + from, text.size() - from, needle.data(), needle.size());
  return at ? static_cast<size_t>(static_cast<const char*>(at) - text.data()) : std::string_view::npos;
}

void appendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string formatSparkTimestamp(int64_t us) {
  int64_t days = floorDiv(us, kMicrosPerDay);
  int64_t rest = floorMod(us, kMicrosPerDay);
  int64_t y;
  unsigned m, d;
  civilFromDays(days, &y, &m, &d);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", y, m, d, rest / 3600000000LL,
                     rest / 60000000LL % 60, rest / 1000000 % 60, rest / 1000 % 1000);
}

size_t utf8Length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Howard Hinnant's days_from_civil / civil_from_days algorithms.
int64_t daysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void civilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

}  // namespace rtsql::expr_internal
