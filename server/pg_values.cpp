// The PostgreSQL type and text form of rtsql values (see pg_values.h).
#include "server/pg_values.h"

#include <fmt/format.h>

#include <cctype>

#include "common/expr.h"
#include "common/json.h"
#include "common/pg_types.h"
#include "common/schema.h"
#include "server/query_handler.h"

namespace rtsql {

uint32_t pgTypeOf(const DataType& type) { return pgTypeOidOf(type); }

namespace {

// A date's or a time's text (Spark's, which opens with '+' past year 9999 and
// counts year 0, -1... before year 1) as PostgreSQL writes the year: no '+',
// and 1 BC, 2 BC... for those, the caller writing " BC" at the end when this
// returns true.
bool pgEraText(std::string& text) {
  if (!text.empty() && text[0] == '+') text.erase(0, 1);
  const bool bc = !text.empty() && (text[0] == '-' || text.starts_with("0000-"));
  if (bc) {
    const size_t dash = text.find('-', 1);
    const int64_t year = std::stoll(text.substr(0, dash));
    text = fmt::format("{:04}", 1 - year) + text.substr(dash);
  }
  return bc;
}

// A DATE or a TIMESTAMP_NTZ as PostgreSQL's date and timestamp write it.
std::string pgCalendarText(std::string text) {
  if (pgEraText(text)) text += " BC";
  return text;
}

}  // namespace

std::optional<std::string> pgTextOf(const Value& v) {
  if (v.isNull()) return std::nullopt;
  if (v.type() == TypeId::Boolean) return std::string(v.asBool() ? "t" : "f");
  if (v.type() == TypeId::Timestamp) return pgTimestamptzText(v.asInt(), sessionTimeZone());
  if (v.type() == TypeId::Date || v.type() == TypeId::TimestampNtz)
    return pgCalendarText(v.toString());
  return v.toString();
}

std::string pgTimestamptzText(int64_t utcMicros, const TimeZone& zone) {
  const int64_t offset = zone.offsetSeconds(utcMicros);
  std::string text = formatTimestamp(utcMicros + offset * 1000000);
  // A year past 9999 without Spark's '+', year 0 and before as 1 BC and
  // before, as PostgreSQL writes them.
  const bool bc = pgEraText(text);
  const int64_t magnitude = offset < 0 ? -offset : offset;
  text += fmt::format("{}{:02}", offset < 0 ? '-' : '+', magnitude / 3600);
  if (magnitude % 3600 != 0) text += fmt::format(":{:02}", magnitude / 60 % 60);
  if (magnitude % 60 != 0) text += fmt::format(":{:02}", magnitude % 60);
  if (bc) text += " BC";
  return text;
}

namespace {

// The offset pgTimestamptzText() writes after the wall clock, "+02",
// "+05:30", "-00:01:15", in seconds east of UTC; nullopt for other text.
std::optional<int64_t> offsetSecondsOf(std::string_view text) {
  if (text.empty() || (text[0] != '+' && text[0] != '-')) return std::nullopt;
  int64_t seconds = 0;
  size_t i = 1;
  for (int part = 0; part < 3 && i < text.size(); ++part) {
    if (part > 0 && text[i++] != ':') return std::nullopt;
    if (i + 2 > text.size() || !std::isdigit(static_cast<unsigned char>(text[i])) ||
        !std::isdigit(static_cast<unsigned char>(text[i + 1])))
      return std::nullopt;
    const int64_t n = (text[i] - '0') * 10 + (text[i + 1] - '0');
    if (part > 0 && n > 59) return std::nullopt;
    seconds += n * (part == 0 ? 3600 : part == 1 ? 60 : 1);
    i += 2;
  }
  if (i != text.size() || i == 1) return std::nullopt;
  return text[0] == '-' ? -seconds : seconds;
}

}  // namespace

bool pgTextReadable(const DataType& type) {
  switch (type.id) {
    case TypeId::Boolean:
    case TypeId::TinyInt:
    case TypeId::SmallInt:
    case TypeId::Int:
    case TypeId::BigInt:
    case TypeId::Float:
    case TypeId::Double:
    case TypeId::Decimal:
    case TypeId::String:
    case TypeId::Date:
    case TypeId::Timestamp:
    case TypeId::TimestampNtz: return true;
    default: return false;
  }
}

std::optional<Value> valueOfPgText(std::string_view text, const DataType& type) {
  if (!pgTextReadable(type)) return std::nullopt;
  // Years before 1 (" BC") are left out: no view of ours has met one yet.
  if (text.ends_with(" BC")) return std::nullopt;
  switch (type.id) {
    case TypeId::Boolean:
      if (text == "t") return Value::boolean(true);
      if (text == "f") return Value::boolean(false);
      return std::nullopt;
    case TypeId::String: return Value::string(std::string(text));
    case TypeId::Date: {
      int64_t days = 0;
      if (!parseDate(text, &days)) return std::nullopt;
      return Value::date(days);
    }
    case TypeId::TimestampNtz: {
      int64_t micros = 0;
      if (!parseTimestamp(text, &micros, false)) return std::nullopt;
      return Value::timestampNtz(micros);
    }
    case TypeId::Timestamp: {
      // pgTimestamptzText() in any zone: the wall clock there, then its
      // offset, which says which instant it is.
      const size_t space = text.find(' ');
      const size_t sign = space == std::string_view::npos
                              ? std::string_view::npos
                              : text.find_first_of("+-", space);
      if (sign == std::string_view::npos) return std::nullopt;
      const std::optional<int64_t> offset = offsetSecondsOf(text.substr(sign));
      int64_t wall = 0;
      if (!offset || !parseTimestamp(text.substr(0, sign), &wall)) return std::nullopt;
      return Value::timestamp(wall - *offset * 1000000);
    }
    default:
      // Numbers and decimals as Value::toString() writes them, which a
      // strict cast reads back whole (NaN and Infinity included).
      try {
        return castValueAnsi(Value::string(std::string(text)), type);
      } catch (const SqlError&) {
        return std::nullopt;
      }
  }
}

uint32_t pgArrayTypeOf(const DataType& type) {
  if (type.id != TypeId::Array || !type.element) return pgTypeOf(type);
  const PgType* element = pgTypeByOid(pgTypeOidOf(*type.element));
  return element && element->array != 0 ? element->array : pgTypeOf(type);
}

namespace {

// An element as PostgreSQL's array_out writes it: quoted when empty, when it
// reads as NULL or holds a character the array syntax uses, with \ and "
// escaped.
void appendElement(std::string& out, const Value& v) {
  if (v.isNull()) {
    out += "NULL";
    return;
  }
  if (v.type() == TypeId::Array) {
    out += *pgArrayTextOf(v);
    return;
  }
  const std::string text = *pgTextOf(v);
  bool quote = text.empty() || iequals(text, "NULL");
  for (char c : text) {
    quote = quote || c == '{' || c == '}' || c == ',' || c == '"' || c == '\\' || c == ' ' ||
            c == '\t' || c == '\n' || c == '\r';
  }
  if (!quote) {
    out += text;
    return;
  }
  out += '"';
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

}  // namespace

std::optional<std::string> pgArrayTextOf(const Value& v) {
  if (v.isNull() || v.type() != TypeId::Array) return pgTextOf(v);
  std::string out = "{";
  bool first = true;
  for (const Value& item : v.asList()) {
    if (!first) out += ',';
    first = false;
    appendElement(out, item);
  }
  out += '}';
  return out;
}

}  // namespace rtsql
