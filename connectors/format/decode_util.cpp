#include "connectors/format/decode_util.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "common/expr.h"
#include "common/json.h"
#include "connectors/format/float_widening.h"
#include "common/year_month_interval.h"

namespace rtsql::format {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

bool parseInt64(std::string_view s, int64_t& out) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool parseDouble(std::string_view s, double& out) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool parseBool(std::string_view s, bool& out) {
  s = trim(s);
  static const char* const kTrue[] = {"true", "t", "yes", "y", "1"};
  static const char* const kFalse[] = {"false", "f", "no", "n", "0"};
  for (const char* t : kTrue)
    if (iequals(s, t)) return out = true, true;
  for (const char* f : kFalse)
    if (iequals(s, f)) return out = false, true;
  return false;
}

int base64Digit(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;  // '-' and '_': the URL-safe alphabet
  if (c == '/' || c == '_') return 63;
  return -1;
}

// The DECIMAL and DATE conversions of textToValue, kept out of it: inlined,
// their 128-bit arithmetic made every call of it, for any column type, pay for
// the registers they need.
[[gnu::noinline]] bool textToDecimal(std::string_view text, const DataType& type, Value& out) {
  // Exact digits, rounded HALF_UP to the column's scale; a value over its
  // precision does not convert.
  auto v = decimal::parse(text, {type.precision, type.scale});
  if (!v) return false;
  out = Value::decimal(*v, type.precision, type.scale);
  return true;
}

[[gnu::noinline]] bool textToDate(std::string_view text, Value& out) {
  int64_t days = 0;
  if (!parseDate(text, &days)) return false;
  out = Value::date(days);
  return true;
}

}  // namespace

bool decodeBase64(std::string_view in, std::string& out) {
  out.clear();
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  if (in.size() % 4 == 1) return false;
  out.reserve(in.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : in) {
    int d = base64Digit(c);
    if (d < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(d);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return true;
}

bool textToValue(std::string_view text, const DataType& type, Value& out, bool binaryIsBase64) {
  switch (type.id) {
    case TypeId::String:
      out.setString(text);
      return true;
    case TypeId::Binary: {
      if (!binaryIsBase64) {
        out.setBinary(text);
        return true;
      }
      std::string bytes;
      if (!decodeBase64(trim(text), bytes)) return false;
      out = Value::binary(std::move(bytes));
      return true;
    }
    case TypeId::Int: {
      int64_t v = 0;
      if (!parseInt64(text, v) || v < std::numeric_limits<int32_t>::min() ||
          v > std::numeric_limits<int32_t>::max())
        return false;
      out = Value::integer(static_cast<int32_t>(v));
      return true;
    }
    case TypeId::BigInt: {
      int64_t v = 0;
      if (!parseInt64(text, v)) return false;
      out = Value::bigint(v);
      return true;
    }
    case TypeId::TinyInt:
    case TypeId::SmallInt: {
      int64_t v = 0;
      const bool tiny = type.id == TypeId::TinyInt;
      if (!parseInt64(text, v) || v < (tiny ? INT8_MIN : INT16_MIN) || v > (tiny ? INT8_MAX : INT16_MAX))
        return false;
      out = tiny ? Value::tinyint(static_cast<int8_t>(v)) : Value::smallint(static_cast<int16_t>(v));
      return true;
    }
    case TypeId::Float: {
      double v = 0;
      if (!parseDouble(text, v)) return false;
      out = Value::float32(static_cast<float>(v));
      return true;
    }
    case TypeId::Double: {
      double v = 0;
      if (!parseDouble(text, v)) return false;
      out = Value::float64(v);
      return true;
    }
    case TypeId::Decimal:
      return textToDecimal(text, type, out);
    case TypeId::Boolean: {
      bool b = false;
      if (!parseBool(text, b)) return false;
      out = Value::boolean(b);
      return true;
    }
    case TypeId::Timestamp: {
      int64_t micros = 0;
      if (!parseTimestamp(trim(text), &micros)) return false;
      out = Value::timestamp(micros);
      return true;
    }
    case TypeId::Interval: {
      // Interval text as SQL writes it ('10 seconds'); parseInterval reports
      // bad text with an exception, which here is just a failed conversion.
      try {
        out = Value::interval(parseInterval(std::string(trim(text)), "", SqlError::npos));
        return true;
      } catch (const SqlError&) {
        return false;
      }
    }
    case TypeId::YearMonthInterval: {
      // Spark's text ('1-2', INTERVAL '1-2' YEAR TO MONTH), as its writers give it.
      auto months = ym::parse(text, type.ymStart, type.ymEnd);
      if (!months) return false;
      out = Value::yearMonthInterval(*months);
      return true;
    }
    case TypeId::Null:
      out = Value();
      return true;
    case TypeId::Date:
      return textToDate(text, out);
    case TypeId::TimestampNtz: {
      // A wall clock: an offset in the text is read and left out.
      int64_t micros = 0;
      if (!parseTimestamp(trim(text), &micros, false)) return false;
      out = Value::timestampNtz(micros);
      return true;
    }
    case TypeId::Array:
    case TypeId::Struct:
    case TypeId::Map:
      return false;
  }
  return false;
}

std::string shortText(std::string_view text) {
  constexpr size_t kMax = 40;
  if (text.size() <= kMax) return std::string(text);
  return std::string(text.substr(0, kMax)) + "...";
}

std::string mismatchError(std::string_view field, const DataType& type, std::string_view got) {
  if (got.empty()) return fmt::format("field '{}': expected {}", field, type.toString());
  return fmt::format("field '{}': expected {}, got {}", field, type.toString(), shortText(got));
}

MetaKind metaKindOf(const Column& column) {
  if (!column.hidden) return MetaKind::None;
  if (column.name == kMetaKey) return MetaKind::Key;
  if (column.name == kMetaTimestamp) return MetaKind::Timestamp;
  if (column.name == kMetaPartition) return MetaKind::Partition;
  if (column.name == kMetaOffset) return MetaKind::Offset;
  if (column.name == kMetaHeaders) return MetaKind::Headers;
  return MetaKind::None;
}

Value headersToValue(const std::vector<std::pair<std::string, std::string>>& headers) {
  ValueList items;
  items.reserve(headers.size());
  for (const auto& [k, v] : headers)
    items.push_back(Value::structure({Value::string(k), Value::binary(v)}));
  return Value::array(std::move(items));
}

Value metaValue(MetaKind kind, const RecordView& rec) {
  switch (kind) {
    case MetaKind::Key:
      return rec.key ? Value::binary(std::string(rec.key, rec.keyLen)) : Value();
    case MetaKind::Timestamp:
      return Value::timestamp(rec.timestampMicros);
    case MetaKind::Partition:
      return Value::integer(rec.partition);
    case MetaKind::Offset:
      return Value::bigint(rec.offset);
    case MetaKind::Headers:
      return rec.headers ? headersToValue(*rec.headers) : Value();
    case MetaKind::None:
      break;
  }
  return Value();
}

bool writerTypeFills(const DataType& writer, const DataType& column) {
  if (writer.equals(column)) return true;
  if (writer.id == TypeId::Int && column.id == TypeId::BigInt) return true;
  if (writer.id == TypeId::Float && column.id == TypeId::Double) return true;
  if (floatsWidened(writer, column)) return true;
  return (writer.id == TypeId::Int || writer.id == TypeId::BigInt) && column.id == TypeId::Double;
}

void widenWriterValue(Value& v, const DataType& column) {
  if (v.isNull() || v.type() == column.id) return;
  if (column.id == TypeId::BigInt) v = Value::bigint(v.asInt());
  if (column.id == TypeId::Double)
    v = Value::float64(v.type() == TypeId::Float ? v.asDouble() : static_cast<double>(v.asInt()));
}

}  // namespace rtsql::format
