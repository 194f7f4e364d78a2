// Timestamp functions: now/current_timestamp, unix_* and timestamp_* epoch
// conversions, to_timestamp, from_unixtime, date_format, date_trunc and field
// extraction, and the date functions (datediff, date_add, add_months, ...).
// Datetime patterns follow Spark's (yyyy-MM-dd HH:mm:ss.SSS); a literal
// pattern is compiled once at bind time. A TIMESTAMP is an instant, read and
// printed in the session time zone (common/time_zone.h), which a function
// takes when it is bound; a DATE is a day number.
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "common/ansi_mode.h"
#include "common/clock.h"
#include "common/functions/internal.h"
#include "common/json.h"
#include "common/schema.h"
#include "common/time_zone.h"

namespace rtsql::expr_internal {

namespace {

const DataTypePtr& ts() {
  static const DataTypePtr t = DataType::of(TypeId::Timestamp);
  return t;
}
const DataTypePtr& ntz() {
  static const DataTypePtr t = DataType::of(TypeId::TimestampNtz);
  return t;
}
// A zone argument: a literal is looked up once (an unknown zone is an error at
// bind time); a zone computed per record is looked up per record, and an
// unknown one is a row error.
const TimeZone* constZone(const ExprPtr& e, size_t pos) {
  auto c = constantValue(e);
  if (!c || c->isNull()) return nullptr;
  return &findTimeZone(c->asString(), pos);
}

// Makes a TIMESTAMP argument its wall-clock time in the session zone (left as
// it is in UTC, and a TIMESTAMP_NTZ, which is one already), for the functions
// that read its day and fields.
void wallClockArg(const std::string& name, std::vector<ExprPtr>& args, size_t i) {
  const TimeZone& zone = sessionTimeZone();
  if (zone.isUtc() || args[i]->type()->id == TypeId::TimestampNtz) return;
  std::vector<ExprPtr> a{args[i]};
  args[i] = fn1(name, ts(), a, [z = &zone](const Value& v) {
    return Value::timestamp(z->localFromUtc(v.asInt()));
  });
}

const char* const kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                               "July",    "August",   "September", "October", "November", "December"};
const char* const kDays[] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};

struct Fields {
  int64_t year;
  unsigned month, day;
  int hour, minute, second, micros;
  int weekday;  // 0 = Monday
};

Fields split(int64_t us) {
  Fields f{};
  int64_t days = floorDiv(us, kMicrosPerDay);
  int64_t rest = floorMod(us, kMicrosPerDay);
  civilFromDays(days, &f.year, &f.month, &f.day);
  f.hour = static_cast<int>(rest / 3600000000LL);
  f.minute = static_cast<int>(rest / 60000000LL % 60);
  f.second = static_cast<int>(rest / 1000000 % 60);
  f.micros = static_cast<int>(rest % 1000000);
  f.weekday = static_cast<int>(floorMod(days + 3, 7));  // 1970-01-01 was a Thursday
  return f;
}

// The most letters Spark (java.time) takes for each pattern letter it knows;
// 0 for a letter it refuses (the week-based ones since Spark 3: Y w W u e c)
// or does not know at all.
int maxLetters(char c) {
  switch (c) {
    case 'G': case 'M': case 'L': case 'E': case 'Q': case 'q': case 'x': case 'X': case 'Z': return 5;
    case 'y': return 9;
    case 'D': return 3;
    case 'd': case 'h': case 'H': case 'k': case 'K': case 'm': case 's': case 'V': return 2;
    case 'S': return 9;
    case 'a': case 'F': return 1;
    case 'z': case 'O': return 4;
    default: return 0;
  }
}

// An offset as java.time's appendOffset prints it for X, x and Z (`n`
// letters): +01, +0100, +01:00, +0100 or +01:00, minutes (for n == 1) and
// seconds (n >= 4) only when not zero; `zero` for a zero offset.
std::string offsetText(int64_t offset, int n, const char* zero) {
  if (offset == 0) return zero;
  const int64_t a = offset < 0 ? -offset : offset;
  const int64_t h = a / 3600, m = a / 60 % 60, sec = a % 60;
  const bool colon = n == 3 || n == 5;
  std::string out = fmt::format("{}{:02}", offset < 0 ? '-' : '+', h);
  if (n > 1 || m != 0) out += fmt::format("{}{:02}", colon ? ":" : "", m);
  if (n >= 4 && sec != 0) out += fmt::format("{}{:02}", colon ? ":" : "", sec);
  return out;
}

// GMT+1, GMT+5:30 (O) or GMT+01:00 (OOOO, ZZZZ); GMT alone for zero.
std::string localizedOffset(int64_t offset, bool full) {
  if (offset == 0) return "GMT";
  const int64_t a = offset < 0 ? -offset : offset;
  const int64_t h = a / 3600, m = a / 60 % 60, sec = a % 60;
  std::string out = fmt::format("GMT{}", offset < 0 ? '-' : '+');
  if (full) {
    out += fmt::format("{:02}:{:02}", h, m);
  } else {
    out += std::to_string(h);
    if (m != 0 || sec != 0) out += fmt::format(":{:02}", m);
  }
  if (sec != 0) out += fmt::format(":{:02}", sec);
  return out;
}

// A compiled datetime pattern: letters repeated `count` times, or literal text.
// Spark's pattern letters (docs/sql.md lists them); a letter it does not know,
// too many of one letter, or a week-based letter is an error, never text.
class DateFormat {
 public:
  explicit DateFormat(std::string_view p) {
    for (size_t i = 0; i < p.size();) {
      char c = p[i];
      if (c == '\'') {
        size_t j = i + 1;
        std::string lit;
        while (j < p.size()) {
          if (p[j] == '\'') {
            if (j + 1 < p.size() && p[j + 1] == '\'') {
              lit += '\'';
              j += 2;
              continue;
            }
            break;
          }
          lit += p[j++];
        }
        if (i + 1 == j && j < p.size()) lit.assign(1, '\'');  // '' is a quote
        tokens_.push_back({0, 0, lit});
        i = j + 1;
      } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        size_t j = i;
        while (j < p.size() && p[j] == c) ++j;
        int n = static_cast<int>(j - i);
        int most = maxLetters(c);
        if (most == 0) {
          bool week = std::string_view("YwWuec").find(c) != std::string_view::npos;
          throw SqlError(sqlstate::kInvalidDatetimeFormat,
                         fmt::format("invalid datetime pattern '{}': {} '{}'", p,
                                     week ? "week-based pattern letters are not supported:"
                                          : "unknown pattern letter",
                                     c),
                         SqlError::npos, "see the datetime patterns in docs/sql.md");
        }
        if (n > most || (c == 'V' && n != 2))
          throw SqlError(sqlstate::kInvalidDatetimeFormat,
                         fmt::format("invalid datetime pattern '{}': too many pattern letters '{}'", p, c));
        tokens_.push_back({c, n, {}});
        i = j;
      } else if (c == '[' || c == ']') {
        ++i;  // an optional section: always printed, as Spark does
      } else if (c == '{' || c == '}' || c == '#') {
        throw SqlError(sqlstate::kInvalidDatetimeFormat,
                       fmt::format("invalid datetime pattern '{}': reserved character '{}'", p, c));
      } else {
        tokens_.push_back({0, 0, std::string(1, c)});
        ++i;
      }
    }
  }

  std::string format(int64_t utc, const TimeZone& zone) const {
    const int64_t offset = zone.isUtc() ? 0 : zone.offsetSeconds(utc);
    const int64_t us = utc + offset * kMicrosPerSecond;
    Fields f = split(us);
    std::string out;
    auto number = [&out](int64_t v, int minDigits) { out += fmt::format("{:0{}}", v, minDigits); };
    for (const auto& t : tokens_) {
      int n = t.count;
      switch (t.letter) {
        case 0: out += t.literal; break;
        case 'G': out += n == 4 ? "Anno Domini" : n == 5 ? "A" : "AD"; break;
        case 'y':
          if (n == 2) {
            number(floorMod(f.year, 100), 2);
          } else {
            // Java's yyyy writes a year of more than four digits with its sign.
            if (n == 4 && f.year > 9999) out += '+';
            number(f.year, n);
          }
          break;
        case 'D': {
          int64_t doy = floorDiv(us, kMicrosPerDay) - daysFromCivil(f.year, 1, 1) + 1;
          number(doy, n);
          break;
        }
        case 'M':
        case 'L':
          if (n == 5)
            out += kMonths[f.month - 1][0];
          else if (n == 4)
            out += kMonths[f.month - 1];
          else if (n == 3)
            out.append(kMonths[f.month - 1], 3);
          else
            number(f.month, n);
          break;
        case 'Q':
        case 'q': {
          unsigned q = (f.month - 1) / 3 + 1;
          static const char* const kQuarters[] = {"1st quarter", "2nd quarter", "3rd quarter", "4th quarter"};
          if (n <= 2)
            number(q, n);
          else if (n == 3)
            out += fmt::format("Q{}", q);
          else if (n == 4)
            out += kQuarters[q - 1];
          else
            out += std::to_string(q);
          break;
        }
        case 'd': number(f.day, n); break;
        case 'F': number((f.day - 1) % 7 + 1, n); break;
        case 'H': number(f.hour, n); break;
        case 'k': number(f.hour == 0 ? 24 : f.hour, n); break;
        case 'K': number(f.hour % 12, n); break;
        case 'h': number(f.hour % 12 == 0 ? 12 : f.hour % 12, n); break;
        case 'm': number(f.minute, n); break;
        case 's': number(f.second, n); break;
        case 'S': {
          std::string frac = fmt::format("{:06}", f.micros);
          frac.resize(static_cast<size_t>(n), '0');
          out += frac;
          break;
        }
        case 'a': out += f.hour < 12 ? "AM" : "PM"; break;
        case 'E':
          if (n == 5)
            out += kDays[f.weekday][0];
          else if (n == 4)
            out += kDays[f.weekday];
          else
            out.append(kDays[f.weekday], 3);
          break;
        // Zone letters print the session zone's id, name or offset at the instant.
        case 'V': out += zone.id(); break;
        case 'z':
          if (zone.isUtc())
            out += n == 4 ? "Coordinated Universal Time" : "UTC";
          else
            out += zone.name(utc, n == 4);
          break;
        case 'O': out += localizedOffset(offset, n == 4); break;
        case 'X': out += offsetText(offset, n, "Z"); break;
        case 'x':
          out += offsetText(offset, n, n == 1 ? "+00" : n % 2 == 0 ? "+0000" : "+00:00");
          break;
        case 'Z':
          if (n == 4)
            out += localizedOffset(offset, true);
          else if (n == 5)
            out += offsetText(offset, 5, "Z");
          else
            out += offsetText(offset, 2, "+0000");
          break;
        default: break;  // the constructor admits no other letter
      }
    }
    return out;
  }

  // Parses `s` as a wall-clock time; `*hadOffset` says whether the text
  // gave its own offset (then *us is the instant already).
  // Without `applyOffset` an offset in the text is read and left out (the
  // wall clock of a TIMESTAMP_NTZ).
  bool parse(std::string_view s, int64_t* us, bool* hadOffset = nullptr, bool applyOffset = true) const {
    int64_t year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0, micros = 0, offsetMin = 0;
    int64_t dayOfYear = 0;  // set by D: the month and day follow from it
    bool pm = false, hasAmPm = false;
    size_t i = 0;
    auto num = [&](int maxDigits, int64_t* out) {
      int k = 0;
      int64_t v = 0;
      while (i < s.size() && k < maxDigits && s[i] >= '0' && s[i] <= '9') {
        v = v * 10 + (s[i++] - '0');
        ++k;
      }
      *out = v;
      return k > 0;
    };
    for (const auto& t : tokens_) {
      int n = t.count;
      switch (t.letter) {
        case 0:
          if (s.substr(i, t.literal.size()) != t.literal) return false;
          i += t.literal.size();
          break;
        case 'y':
        case 'u':
          if (n == 2) {
            if (!num(2, &year)) return false;
            year += 2000;
          } else if (!num(n > 4 ? n : 4, &year)) {
            return false;
          }
          break;
        case 'M':
        case 'L':
          if (n >= 3) {
            bool ok = false;
            for (int m = 0; m < 12 && !ok; ++m) {
              std::string_view full = kMonths[m];
              std::string_view name = n == 3 ? full.substr(0, 3) : full;
              if (s.size() - i >= name.size() && iequals(s.substr(i, name.size()), name)) {
                month = m + 1;
                i += name.size();
                ok = true;
              }
            }
            if (!ok) return false;
          } else if (!num(2, &month)) {
            return false;
          }
          break;
        case 'd':
          if (!num(2, &day)) return false;
          break;
        case 'D':
          if (!num(3, &dayOfYear) || dayOfYear < 1) return false;
          break;
        case 'H':
        case 'h':
          if (!num(2, &hour)) return false;
          break;
        case 'm':
          if (!num(2, &minute)) return false;
          break;
        case 's':
          if (!num(2, &second)) return false;
          break;
        case 'S': {
          int k = 0;
          int64_t v = 0;
          while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
            if (k < 6) v = v * 10 + (s[i] - '0');
            ++k;
            ++i;
          }
          if (k == 0) return false;
          for (int z = k; z < 6; ++z) v *= 10;
          micros = v;
          break;
        }
        case 'a':
          if (s.size() - i < 2) return false;
          hasAmPm = true;
          if (iequals(s.substr(i, 2), "PM"))
            pm = true;
          else if (!iequals(s.substr(i, 2), "AM"))
            return false;
          i += 2;
          break;
        case 'X':
        case 'x':
        case 'Z':
        case 'z': {
          if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
            ++i;
            if (hadOffset) *hadOffset = true;
            break;
          }
          if (s.substr(i, 3) == "UTC" || s.substr(i, 3) == "GMT") {
            i += 3;
            if (hadOffset) *hadOffset = true;
            if (i >= s.size() || (s[i] != '+' && s[i] != '-')) break;
          }
          if (i >= s.size() || (s[i] != '+' && s[i] != '-')) return false;
          int sign = s[i++] == '-' ? -1 : 1;
          int64_t oh = 0, om = 0;
          if (!num(2, &oh)) return false;
          if (i < s.size() && s[i] == ':') ++i;
          num(2, &om);
          offsetMin = sign * (oh * 60 + om);
          if (hadOffset) *hadOffset = true;
          break;
        }
        case 'E': {
          while (i < s.size() && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z'))) ++i;
          break;
        }
        default:
          return false;
      }
    }
    if (i != s.size()) return false;
    if (hasAmPm) {
      if (hour < 1 || hour > 12) return false;
      hour = hour % 12 + (pm ? 12 : 0);
    }
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return false;
    int64_t days = daysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
    if (dayOfYear > 0) {
      days = daysFromCivil(year, 1, 1) + dayOfYear - 1;
      int64_t y2;
      unsigned m2, d2;
      civilFromDays(days, &y2, &m2, &d2);
      if (y2 != year) return false;  // day 366 of a common year
      day = d2;
    }
    // Reject 2024-02-30 and friends: the day must survive the round trip.
    int64_t y2;
    unsigned m2, d2;
    civilFromDays(days, &y2, &m2, &d2);
    if (d2 != day) return false;
    if (!applyOffset) offsetMin = 0;
    *us = days * kMicrosPerDay + ((hour * 60 + minute - offsetMin) * 60 + second) * 1000000 + micros;
    return true;
  }

 private:
  struct Token {
    char letter;  // 0 for literal text
    int count;
    std::string literal;
  };
  std::vector<Token> tokens_;
};

using FormatPtr = std::shared_ptr<const DateFormat>;

FormatPtr constFormat(const ExprPtr& e) {
  auto c = constantValue(e);
  if (!c || c->isNull()) return nullptr;
  return std::make_shared<const DateFormat>(c->asString());
}

ExprPtr buildNow(const std::string& name, std::vector<ExprPtr>& args, size_t) {
  return fnN(name, ts(), args, false, [](const Row&, const std::vector<ExprPtr>&) { return Value::timestamp(nowMicros()); });
}

// localtimestamp(): now as a wall-clock time in the session zone (a
// TIMESTAMP_NTZ), read per record in a flow as current_timestamp is.
ExprPtr buildLocalTimestamp(const std::string& name, std::vector<ExprPtr>& args, size_t) {
  const TimeZone* zone = &sessionTimeZone();
  return fnN(name, ntz(), args, false, [zone](const Row&, const std::vector<ExprPtr>&) {
    return Value::timestampNtz(zone->localFromUtc(nowMicros()));
  });
}

// unix_seconds, unix_millis, unix_micros: the instant's count since the epoch;
// a TIMESTAMP_NTZ counts as its wall clock in UTC, as in Spark.
template <int64_t Div>
ExprPtr buildUnixOf(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args[0]->type()->id != TypeId::TimestampNtz) argTimestamp(name, args, 0, pos);
  return fn1(name, bigIntType(), args, [](const Value& v) { return Value::bigint(floorDiv(v.asInt(), Div)); });
}

template <int64_t Mul>
ExprPtr buildTimestampOf(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (Mul == kMicrosPerSecond && args[0]->type()->id == TypeId::Double) {
    // timestamp_seconds(1.5): fractional seconds, as Spark; NaN, infinities
    // and values past the microsecond range are NULL.
    return fn1(name, ts(), args, [](const Value& v) {
      double us = v.asDouble() * static_cast<double>(kMicrosPerSecond);
      if (!std::isfinite(us) || us >= 9.2e18 || us <= -9.2e18) return Value();
      return Value::timestamp(static_cast<int64_t>(us));
    });
  }
  argBigInt(name, args, 0, pos);
  const bool ansi = ansiMode();
  return fn1(name, ts(), args, [ansi, name](const Value& v) {
    int64_t x = v.asInt();
    if (x > INT64_MAX / Mul || x < INT64_MIN / Mul) [[unlikely]] {
      if (ansi)
        ansi::raise(ansi::kDatetimeOverflow,
                    fmt::format("{}({}) is past the range of a TIMESTAMP", name, x));
      return Value();
    }
    return Value::timestamp(x * Mul);
  });
}

ExprPtr buildToTimestamp(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args.size() == 1) {
    auto id = args[0]->type()->id;
    if (id == TypeId::Timestamp || id == TypeId::Date || id == TypeId::String || id == TypeId::Null ||
        id == TypeId::TimestampNtz || args[0]->type()->isNumeric())
      return castTo(args[0], ts());
    throwArgError(name, args, pos, "the first argument must be a STRING");
  }
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  FormatPtr fixed = constFormat(args[1]);
  const TimeZone* zone = &sessionTimeZone();
  const bool ansi = ansiMode();
  return fn2(name, ts(), args, [fixed, zone, ansi](const Value& s, const Value& f) {
    int64_t us;
    bool own = false;
    bool ok = fixed ? fixed->parse(s.asString(), &us, &own)
                    : DateFormat(f.asString()).parse(s.asString(), &us, &own);
    if (!ok) [[unlikely]] {
      if (ansi)
        ansi::raise(ansi::kCannotParseTimestamp,
                    fmt::format("the text '{}' does not match the pattern '{}'",
                                s.asString().substr(0, 256), f.asString().substr(0, 256)),
                    "try_to_timestamp");
      return Value();
    }
    return Value::timestamp(own || zone->isUtc() ? us : zone->utcFromLocal(us));
  });
}

// to_timestamp_ntz(x[, fmt]): the wall clock of text (parsed with fmt when
// given; an offset in it is read and left out), of a DATE (its midnight) or of
// a TIMESTAMP (in the session zone), as a TIMESTAMP_NTZ; text that does not
// parse raises CANNOT_PARSE_TIMESTAMP in ANSI mode and is NULL in the legacy
// mode. Numbers are refused, as Spark refuses them.
ExprPtr buildToTimestampNtz(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args.size() == 1) {
    auto id = args[0]->type()->id;
    if (id == TypeId::Timestamp || id == TypeId::Date || id == TypeId::String || id == TypeId::Null ||
        id == TypeId::TimestampNtz)
      return castTo(args[0], ntz());
    throwArgError(name, args, pos, "the first argument must be a STRING", "use CAST(... AS STRING)");
  }
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  FormatPtr fixed = constFormat(args[1]);
  const bool ansi = ansiMode();
  return fn2(name, ntz(), args, [fixed, ansi](const Value& s, const Value& f) {
    int64_t us;
    bool ok = fixed ? fixed->parse(s.asString(), &us, nullptr, false)
                    : DateFormat(f.asString()).parse(s.asString(), &us, nullptr, false);
    if (!ok && ansi) [[unlikely]]
      ansi::raise(ansi::kCannotParseTimestamp,
                  fmt::format("the text '{}' does not match the pattern '{}'",
                              s.asString().substr(0, 256), f.asString().substr(0, 256)));
    return ok ? Value::timestampNtz(us) : Value();
  });
}

ExprPtr buildUnixTimestamp(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args.empty())
    return fnN(name, bigIntType(), args, false, [](const Row&, const std::vector<ExprPtr>&) {
      return Value::bigint(floorDiv(nowMicros(), kMicrosPerSecond));
    });
  if (args.size() == 1 && args[0]->type()->id == TypeId::String) {
    // Spark's default pattern for unix_timestamp(s) is yyyy-MM-dd HH:mm:ss.
    args.push_back(makeLiteral(Value::string("yyyy-MM-dd HH:mm:ss"), DataType::of(TypeId::String)));
  }
  if (args.size() == 2) {
    ExprPtr parsed = buildToTimestamp("to_timestamp", args, pos);
    std::vector<ExprPtr> a{parsed};
    return fn1(name, bigIntType(), a, [](const Value& v) { return Value::bigint(floorDiv(v.asInt(), kMicrosPerSecond)); });
  }
  return buildUnixOf<kMicrosPerSecond>(name, args, pos);
}

ExprPtr buildFromUnixtime(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBigInt(name, args, 0, pos);
  if (args.size() == 1)
    args.push_back(makeLiteral(Value::string("yyyy-MM-dd HH:mm:ss"), DataType::of(TypeId::String)));
  argString(name, args, 1, pos);
  FormatPtr fixed = constFormat(args[1]);
  const TimeZone* zone = &sessionTimeZone();
  return fn2(name, DataType::of(TypeId::String), args,
             [fixed, zone](const Value& secs, const Value& f) {
               // Spark multiplies the seconds in a Java long: past its range
               // the product wraps, and so does it here.
               const auto us = static_cast<int64_t>(static_cast<uint64_t>(secs.asInt()) *
                                                    static_cast<uint64_t>(kMicrosPerSecond));
               return Value::string(fixed ? fixed->format(us, *zone)
                                          : DateFormat(f.asString()).format(us, *zone));
             });
}

ExprPtr buildDateFormat(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argTimestamp(name, args, 0, pos);
  argString(name, args, 1, pos);
  FormatPtr fixed = constFormat(args[1]);
  const TimeZone* zone = &sessionTimeZone();
  return fn2(name, DataType::of(TypeId::String), args,
             [fixed, zone](const Value& t, const Value& f) {
               return Value::string(fixed ? fixed->format(t.asInt(), *zone)
                                          : DateFormat(f.asString()).format(t.asInt(), *zone));
             });
}

enum class TruncUnit { Invalid, Year, Quarter, Month, Week, Day, Hour, Minute, Second, Millisecond, Microsecond };

TruncUnit truncUnit(std::string_view u) {
  std::string l = toUpper(u);
  if (l == "YEAR" || l == "YYYY" || l == "YY") return TruncUnit::Year;
  if (l == "QUARTER") return TruncUnit::Quarter;
  if (l == "MONTH" || l == "MM" || l == "MON") return TruncUnit::Month;
  if (l == "WEEK") return TruncUnit::Week;
  if (l == "DAY" || l == "DD") return TruncUnit::Day;
  if (l == "HOUR") return TruncUnit::Hour;
  if (l == "MINUTE") return TruncUnit::Minute;
  if (l == "SECOND") return TruncUnit::Second;
  if (l == "MILLISECOND") return TruncUnit::Millisecond;
  if (l == "MICROSECOND") return TruncUnit::Microsecond;
  return TruncUnit::Invalid;
}

Value truncate(TruncUnit u, int64_t us);

// date_trunc in a session zone: units of a minute and more cut the wall-clock
// time in the zone (an hour of Asia/Kolkata starts at :30 in UTC), as Spark.
// Up to a day the cut keeps the instant's offset when the wall-clock time has
// it (java.time's ZonedDateTime.truncatedTo: in the hour repeated when
// clocks go back, the second 02:00 stays the second).
Value truncateIn(TruncUnit u, int64_t us, const TimeZone& zone) {
  if (zone.isUtc() || u == TruncUnit::Invalid || u == TruncUnit::Microsecond ||
      u == TruncUnit::Millisecond || u == TruncUnit::Second)
    return truncate(u, us);
  const int64_t offset = zone.offsetSeconds(us) * kMicrosPerSecond;
  Value local = truncate(u, us + offset);
  if (local.isNull()) return local;
  if (u == TruncUnit::Minute || u == TruncUnit::Hour || u == TruncUnit::Day) {
    const int64_t same = local.asInt() - offset;
    if (zone.offsetSeconds(same) * kMicrosPerSecond == offset) return Value::timestamp(same);
  }
  return Value::timestamp(zone.utcFromLocal(local.asInt()));
}

Value truncate(TruncUnit u, int64_t us) {
  auto down = [&](int64_t step) { return Value::timestamp(floorDiv(us, step) * step); };
  switch (u) {
    case TruncUnit::Microsecond: return Value::timestamp(us);
    case TruncUnit::Millisecond: return down(1000);
    case TruncUnit::Second: return down(kMicrosPerSecond);
    case TruncUnit::Minute: return down(60 * kMicrosPerSecond);
    case TruncUnit::Hour: return down(3600 * kMicrosPerSecond);
    case TruncUnit::Day: return down(kMicrosPerDay);
    case TruncUnit::Week: {
      int64_t days = floorDiv(us, kMicrosPerDay);
      days -= floorMod(days + 3, 7);  // back to Monday
      return Value::timestamp(days * kMicrosPerDay);
    }
    case TruncUnit::Month:
    case TruncUnit::Quarter:
    case TruncUnit::Year: {
      Fields f = split(us);
      unsigned m = u == TruncUnit::Year ? 1 : u == TruncUnit::Quarter ? (f.month - 1) / 3 * 3 + 1 : f.month;
      return Value::timestamp(daysFromCivil(f.year, m, 1) * kMicrosPerDay);
    }
    case TruncUnit::Invalid: break;
  }
  return {};
}

ExprPtr buildDateTrunc(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argTimestamp(name, args, 1, pos);
  if (auto c = constantValue(args[0]); c && !c->isNull()) {
    TruncUnit u = truncUnit(c->asString());
    if (u == TruncUnit::Invalid)
      throw SqlError(sqlstate::kInvalidParameterValue, fmt::format("unknown date_trunc unit '{}'", c->asString()), pos,
                     "units: YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND");
    const TimeZone* zone = &sessionTimeZone();
    return fn2(name, ts(), args,
               [u, zone](const Value&, const Value& t) { return truncateIn(u, t.asInt(), *zone); });
  }
  // Spark gives NULL for an unknown unit computed per record.
  const TimeZone* zone = &sessionTimeZone();
  return fn2(name, ts(), args, [zone](const Value& unit, const Value& t) {
    return truncateIn(truncUnit(unit.asString()), t.asInt(), *zone);
  });
}

template <int Field>
ExprPtr buildExtract(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  const TimeZone* zone = &argWallClock(name, args, 0, pos);
  return fn1(name, DataType::of(TypeId::Int), args, [zone](const Value& v) {
    Fields f = split(zone->isUtc() ? v.asInt() : zone->localFromUtc(v.asInt()));
    int64_t r = Field == 0 ? f.year : Field == 1 ? f.month : Field == 2 ? f.day : Field == 3 ? f.hour
              : Field == 4 ? f.minute : Field == 5 ? f.second : (f.weekday + 1) % 7 + 1;  // dayofweek: Sunday = 1
    return Value::integer(static_cast<int32_t>(r));
  });
}

// ---- date functions ---------------------------------------------------------
// A DATE is a day number (days since 1970-01-01). Functions that take a date
// accept a DATE, a TIMESTAMP (its day in UTC, the session time zone) or text
// that casts to a DATE (argDate), and return a DATE, as in Spark.

const DataTypePtr& dateType() {
  static const DataTypePtr t = DataType::of(TypeId::Date);
  return t;
}
// The day of a DATE, or of a TIMESTAMP.
int64_t dayOf(const Value& v) {
  return v.type() == TypeId::Date ? v.asInt() : floorDiv(v.asInt(), kMicrosPerDay);
}
Value dateValue(int64_t days) {
  // Spark's DATE holds a 32-bit day number; past it there is no date.
  if (days > INT32_MAX || days < INT32_MIN) return {};
  return Value::date(days);
}
const DataTypePtr& int32() {
  static const DataTypePtr t = DataType::of(TypeId::Int);
  return t;
}

// datediff(end, start): whole days from start to end.
ExprPtr buildDateDiff(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argDate(name, args, 0, pos);
  argDate(name, args, 1, pos);
  return fn2(name, int32(), args, [](const Value& e, const Value& s) {
    return Value::integer(static_cast<int32_t>(dayOf(e) - dayOf(s)));
  });
}

// date_add(start, n) / date_sub(start, n): the date n days after (before).
// Spark adds the day numbers as Java ints, in both modes: past a DATE's range
// the day number wraps (date_add('2024-02-29', 2147483647) is -5877587-08-19),
// and so does it here.
template <int Sign>
ExprPtr buildDateAdd(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argDate(name, args, 0, pos);
  argInt(name, args, 1, pos);
  return fn2(name, dateType(), args, [](const Value& s, const Value& n) {
    const auto days = static_cast<uint32_t>(dayOf(s)) + static_cast<uint32_t>(Sign * n.asInt());
    return Value::date(static_cast<int32_t>(days));
  });
}

Value addMonths(int64_t days, int64_t months) { return dateValue(dayAfterMonths(days, months)); }

// add_months(start, n): the same day n months later, clamped to the month's
// last day (2024-01-31 + 1 month is 2024-02-29). Past a DATE's range it is
// ARITHMETIC_OVERFLOW in ANSI mode, NULL in the legacy mode.
ExprPtr buildAddMonths(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argDate(name, args, 0, pos);
  argInt(name, args, 1, pos);
  const bool ansi = ansiMode();
  return fn2(name, dateType(), args, [ansi](const Value& s, const Value& n) {
    Value r = addMonths(dayOf(s), n.asInt());
    if (r.isNull() && ansi) [[unlikely]]
      ansi::raise(ansi::kArithmeticOverflow,
                  fmt::format("add_months({}, {}) is past the range of a DATE",
                              s.toString(), n.asInt()));
    return r;
  });
}

// months_between(t1, t2[, roundOff]): Spark's: whole months when both days of
// month are equal or both are month ends, else the difference in seconds over
// 31-day months, rounded to 8 digits unless roundOff is false.
double monthsBetween(int64_t t1, int64_t t2, bool roundOff) {
  Fields a = split(t1), b = split(t2);
  int64_t monthDiff = (a.year * 12 + a.month) - (b.year * 12 + b.month);
  bool lastA = a.day == daysInMonth(a.year, a.month), lastB = b.day == daysInMonth(b.year, b.month);
  if (a.day == b.day || (lastA && lastB)) return static_cast<double>(monthDiff);
  int64_t secA = floorMod(t1, kMicrosPerDay) / kMicrosPerSecond;
  int64_t secB = floorMod(t2, kMicrosPerDay) / kMicrosPerSecond;
  int64_t secondsDiff =
      (static_cast<int64_t>(a.day) - static_cast<int64_t>(b.day)) * 86400 + secA - secB;
  double diff = static_cast<double>(monthDiff) + static_cast<double>(secondsDiff) / (31.0 * 86400);
  if (!roundOff) return diff;
  return std::floor(diff * 1e8 + 0.5) / 1e8;
}

ExprPtr buildMonthsBetween(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argTimestamp(name, args, 0, pos);
  argTimestamp(name, args, 1, pos);
  if (args.size() == 2)
    args.push_back(makeLiteral(Value::boolean(true), DataType::of(TypeId::Boolean)));
  argBoolean(name, args, 2, pos);
  wallClockArg(name, args, 0);
  wallClockArg(name, args, 1);
  return fn3(name, DataType::of(TypeId::Double), args,
             [](const Value& a, const Value& b, const Value& r) {
               return Value::float64(monthsBetween(a.asInt(), b.asInt(), r.asBool()));
             });
}

ExprPtr buildLastDay(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argDate(name, args, 0, pos);
  return fn1(name, dateType(), args, [](const Value& v) {
    int64_t y;
    unsigned m, d;
    civilFromDays(v.asInt(), &y, &m, &d);
    return dateValue(daysFromCivil(y, m, daysInMonth(y, m)));
  });
}

// A day-of-week name as Spark reads it ("MO", "MON", "MONDAY", any case):
// 0 = Monday, -1 when unknown.
int weekdayOf(std::string_view s) {
  std::string u = toUpper(s);
  for (int i = 0; i < 7; ++i) {
    std::string full = toUpper(kDays[i]);
    if (u == full || u == full.substr(0, 3) || u == full.substr(0, 2)) return i;
  }
  return -1;
}

// next_day(start, 'TU'): the first such weekday after start; an unknown name
// is ILLEGAL_DAY_OF_WEEK in ANSI mode, NULL in the legacy mode.
ExprPtr buildNextDay(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argDate(name, args, 0, pos);
  argString(name, args, 1, pos);
  const bool ansi = ansiMode();
  return fn2(name, dateType(), args, [ansi](const Value& s, const Value& d) {
    int want = weekdayOf(d.asString());
    if (want < 0) {
      if (ansi) [[unlikely]]
        ansi::raise(ansi::kIllegalDayOfWeek,
                    fmt::format("next_day: '{}' is not a day of the week",
                                d.asString().substr(0, 64)));
      return Value();
    }
    int64_t days = dayOf(s);
    auto have = static_cast<int>(floorMod(days + 3, 7));
    int step = (want - have + 7) % 7;
    return dateValue(days + (step == 0 ? 7 : step));
  });
}

// ISO 8601 week number: weeks start on Monday, week 1 holds the year's first
// Thursday.
int isoWeek(int64_t days) {
  int64_t wd = floorMod(days + 3, 7);  // 0 = Monday
  int64_t thursday = days - wd + 3;
  int64_t y;
  unsigned m, d;
  civilFromDays(thursday, &y, &m, &d);
  return static_cast<int>((thursday - daysFromCivil(y, 1, 1)) / 7 + 1);
}

template <int Field>  // 0 dayofyear, 1 weekofyear, 2 weekday, 3 quarter
ExprPtr buildDateField(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argWallClock(name, args, 0, pos);
  wallClockArg(name, args, 0);
  return fn1(name, int32(), args, [](const Value& v) {
    int64_t days = dayOf(v);
    if (Field == 1) return Value::integer(isoWeek(days));
    if (Field == 2) return Value::integer(static_cast<int32_t>(floorMod(days + 3, 7)));
    Fields f = split(v.asInt());
    if (Field == 3) return Value::integer(static_cast<int32_t>((f.month - 1) / 3 + 1));
    return Value::integer(static_cast<int32_t>(days - daysFromCivil(f.year, 1, 1) + 1));
  });
}

template <bool Month>
ExprPtr buildDayMonthName(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argWallClock(name, args, 0, pos);
  wallClockArg(name, args, 0);
  return fn1(name, DataType::of(TypeId::String), args, [](const Value& v) {
    Fields f = split(v.asInt());
    return Value::string(std::string(Month ? kMonths[f.month - 1] : kDays[f.weekday], 3));
  });
}

// A valid civil date's day number, or nullopt (2023-02-29, month 13...).
std::optional<int64_t> civilDay(int64_t y, int64_t m, int64_t d) {
  if (y < -290000 || y > 290000 || m < 1 || m > 12 || d < 1) return std::nullopt;
  if (d > daysInMonth(y, static_cast<unsigned>(m))) return std::nullopt;
  return daysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
}

// make_date(y, m, d): NULL for a date that does not exist.
ExprPtr buildMakeDate(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  for (size_t i = 0; i < 3; ++i) argInt(name, args, i, pos);
  const bool ansi = ansiMode();
  return fn3(name, dateType(), args, [ansi](const Value& y, const Value& m, const Value& d) {
    auto day = civilDay(y.asInt(), m.asInt(), d.asInt());
    if (!day && ansi)
      ansi::raise(ansi::kDatetimeFieldOutOfBounds,
                  fmt::format("make_date({}, {}, {}): no such date", y.asInt(), m.asInt(),
                              d.asInt()));
    return day ? dateValue(*day) : Value();
  });
}

// make_timestamp(y, mo, d, h, mi, sec[, zone]): sec may carry a fraction; 60
// is the next minute when it has none (Spark's rule); anything invalid is
// NULL. The wall-clock time is read in `zone`, else in the session zone.
ExprPtr buildMakeTimestamp(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  for (size_t i = 0; i < 5; ++i) argInt(name, args, i, pos);
  argDouble(name, args, 5, pos);
  // make_timestamp_ntz's answer is the wall-clock time itself (a
  // TIMESTAMP_NTZ, never converted).
  const bool wallClock = name == "make_timestamp_ntz";
  const TimeZone* fixed = wallClock ? &utcTimeZone() : &sessionTimeZone();
  if (args.size() == 7) {
    argString(name, args, 6, pos);
    fixed = constZone(args[6], pos);
  }
  const DataTypePtr result = wallClock ? ntz() : ts();
  if (nullOfConstants(args)) return makeLiteral(Value(), result);
  const bool ansi = ansiMode();
  return fnN(name, result, args, true,
             [fixed, wallClock, ansi](const Row& row, const std::vector<ExprPtr>& a) {
    const TimeZone* zone = fixed;
    if (!zone) {
      Value z = a[6]->eval(row);
      if (z.isNull()) return Value();
      zone = &findTimeZone(z.asString());
    }
    int64_t f[5];
    for (size_t i = 0; i < 5; ++i) {
      Value v = a[i]->eval(row);
      if (v.isNull()) return Value();
      f[i] = v.asInt();
    }
    Value sv = a[5]->eval(row);
    if (sv.isNull()) return Value();
    double sec = sv.asDouble();
    auto invalid = [&] {
      if (ansi)
        ansi::raise(ansi::kDatetimeFieldOutOfBounds,
                    fmt::format("{}-{}-{} {}:{}:{}: no such time", f[0], f[1], f[2], f[3], f[4],
                                formatDouble(sec)));
      return Value();
    };
    if (!(sec >= 0 && sec <= 60) || f[3] < 0 || f[3] > 23 || f[4] < 0 || f[4] > 59) return invalid();
    auto micros = static_cast<int64_t>(std::llround(sec * 1e6));
    if (micros > 60 * kMicrosPerSecond ||
        (micros >= 60 * kMicrosPerSecond && micros % kMicrosPerSecond != 0))
      return invalid();
    auto day = civilDay(f[0], f[1], f[2]);
    if (!day) return invalid();
    const int64_t local = *day * kMicrosPerDay + (f[3] * 3600 + f[4] * 60) * kMicrosPerSecond + micros;
    return wallClock ? Value::timestampNtz(local) : Value::timestamp(zone->utcFromLocal(local));
  });
}

// to_date(x[, fmt]): the date of a timestamp or of text (parsed with fmt when
// given); NULL when the text does not parse.
ExprPtr buildToDate(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  ExprPtr parsed = args.size() == 2 ? buildToTimestamp("to_timestamp", args, pos) : nullptr;
  if (!parsed) {
    argDate(name, args, 0, pos);
    return args[0];
  }
  std::vector<ExprPtr> a{parsed};
  wallClockArg(name, a, 0);
  return fn1(name, dateType(), a, [](const Value& v) { return dateValue(dayOf(v)); });
}

ExprPtr buildDateFromUnixDate(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argInt(name, args, 0, pos);
  return fn1(name, dateType(), args, [](const Value& v) { return dateValue(v.asInt()); });
}

ExprPtr buildUnixDate(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argDate(name, args, 0, pos);
  return fn1(name, int32(), args,
             [](const Value& v) { return Value::integer(static_cast<int32_t>(dayOf(v))); });
}

// trunc(date, fmt): the date cut to its year, quarter, month or week; NULL for
// any other unit, as in Spark.
ExprPtr buildTrunc(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argDate(name, args, 0, pos);
  argString(name, args, 1, pos);
  // A literal unit trunc does not take is NULL whatever the date (which is
  // then not read: ANSI mode would raise for text that is no date).
  if (auto u = constantValue(args[1]); u && !u->isNull()) {
    TruncUnit unit = truncUnit(u->asString());
    if (unit != TruncUnit::Year && unit != TruncUnit::Quarter && unit != TruncUnit::Month &&
        unit != TruncUnit::Week)
      return makeLiteral(Value(), dateType());
  }
  return fn2(name, dateType(), args, [](const Value& t, const Value& unit) {
    TruncUnit u = truncUnit(unit.asString());
    if (u != TruncUnit::Year && u != TruncUnit::Quarter && u != TruncUnit::Month &&
        u != TruncUnit::Week)
      return Value();
    Value cut = truncate(u, t.asInt() * kMicrosPerDay);
    return cut.isNull() ? cut : dateValue(dayOf(cut));
  });
}

// current_date(): today's date, read per record in a flow (Spark reads it once
// per query).
ExprPtr buildCurrentDate(const std::string& name, std::vector<ExprPtr>& args, size_t) {
  return fnN(name, dateType(), args, false, [](const Row&, const std::vector<ExprPtr>&) {
    return dateValue(floorDiv(nowMicros(), kMicrosPerDay));
  });
}

// date_part(field, source) / datepart: a field named by a literal string.
ExprPtr buildDatePart(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  auto c = constantValue(args[0]);
  if (!c) throwArgError(name, args, pos, "the field must be a string literal");
  // A NULL field gives NULL, as in Spark (typed DOUBLE, as Spark types it).
  if (c->isNull()) return makeLiteral(Value(), DataType::of(TypeId::Double));
  std::string f = toUpper(c->asString());
  if (args[1]->type()->id == TypeId::YearMonthInterval) return yearMonthIntervalField(name, f, args[1], pos);
  std::vector<ExprPtr> a{args[1]};
  auto field = [&](const char* fn) { return makeCall(fn, a, pos); };
  if (f == "YEAR" || f == "Y" || f == "YEARS" || f == "YR" || f == "YRS") return field("year");
  if (f == "QUARTER" || f == "QTR") return field("quarter");
  if (f == "MONTH" || f == "MON" || f == "MONS" || f == "MONTHS") return field("month");
  if (f == "WEEK" || f == "W" || f == "WEEKS") return field("weekofyear");
  if (f == "DAY" || f == "D" || f == "DAYS") return field("day");
  if (f == "DAYOFWEEK" || f == "DOW") return field("dayofweek");
  if (f == "DAYOFWEEK_ISO" || f == "DOW_ISO") {
    argWallClock(name, a, 0, pos);
    wallClockArg(name, a, 0);
    return fn1(name, int32(), a, [](const Value& v) {
      return Value::integer(static_cast<int32_t>(floorMod(dayOf(v) + 3, 7) + 1));
    });
  }
  if (f == "DOY") return field("dayofyear");
  if (f == "HOUR" || f == "H" || f == "HOURS" || f == "HR" || f == "HRS") return field("hour");
  if (f == "MINUTE" || f == "M" || f == "MIN" || f == "MINS" || f == "MINUTES")
    return field("minute");
  if (f == "SECOND" || f == "S" || f == "SEC" || f == "SECONDS" || f == "SECS") {
    // Seconds with their fraction, exactly: a DECIMAL(8, 6), as in Spark.
    argWallClock(name, a, 0, pos);
    return fn1(name, DataType::decimal(8, 6), a, [](const Value& v) {
      return Value::decimal(floorMod(v.asInt(), 60 * kMicrosPerSecond), 8, 6);
    });
  }
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("unknown date_part field '{}'", c->asString()), pos,
                 "fields: YEAR, QUARTER, MONTH, WEEK, DAY, DAYOFWEEK, DAYOFWEEK_ISO, DOY, HOUR, "
                 "MINUTE, SECOND");
}

// make_dt_interval(days, hours, mins, secs): an INTERVAL.
ExprPtr buildMakeDtInterval(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  while (args.size() < 4)
    args.push_back(makeLiteral(args.size() < 3 ? Value::integer(0) : Value::float64(0),
                               args.size() < 3 ? int32() : DataType::of(TypeId::Double)));
  for (size_t i = 0; i < 3; ++i) argBigInt(name, args, i, pos);
  argDouble(name, args, 3, pos);
  return fnN(name, DataType::of(TypeId::Interval), args, true,
             [](const Row& row, const std::vector<ExprPtr>& a) {
               Value v[4];
               for (size_t i = 0; i < 4; ++i) {
                 v[i] = a[i]->eval(row);
                 if (v[i].isNull()) return Value();
               }
               double us = (static_cast<double>(v[0].asInt()) * 86400.0 +
                            static_cast<double>(v[1].asInt()) * 3600.0 +
                            static_cast<double>(v[2].asInt()) * 60.0 + v[3].asDouble()) *
                           1e6;
               if (!(std::fabs(us) < 9.2e18)) return Value();
               return Value::interval(std::llround(us));
             });
}

// current_timezone(): the session time zone.
ExprPtr buildCurrentTimezone(const std::string&, std::vector<ExprPtr>&, size_t) {
  return makeLiteral(Value::string(sessionTimeZone().id()), DataType::of(TypeId::String));
}

// ---- time zone conversions ----------------------------------------------------

// from_utc_timestamp(ts, zone): the instant whose UTC wall-clock time is the
// wall-clock time of `ts` in `zone`; to_utc_timestamp the other way round (a
// time in a gap or overlap resolved as java.time does), as Spark.
template <bool FromUtc>
ExprPtr buildUtcShift(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argTimestamp(name, args, 0, pos);
  argString(name, args, 1, pos);
  const TimeZone* fixed = constZone(args[1], pos);
  return fn2(name, ts(), args, [fixed](const Value& t, const Value& z) {
    const TimeZone& zone = fixed ? *fixed : findTimeZone(z.asString());
    return Value::timestamp(FromUtc ? zone.localFromUtc(t.asInt()) : zone.utcFromLocal(t.asInt()));
  });
}

// convert_timezone([source, ] target, ts): the wall-clock time `ts` in
// `source` (the session zone without it) as a wall-clock time in `target`.
ExprPtr buildConvertTimezone(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args.size() == 2)
    args.insert(args.begin(),
                makeLiteral(Value::string(sessionTimeZone().id()), DataType::of(TypeId::String)));
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  // Spark takes and gives a TIMESTAMP_NTZ: a TIMESTAMP comes in as its wall
  // clock in the session zone (castTo), text and a DATE as theirs.
  auto id = args[2]->type()->id;
  if (id != TypeId::TimestampNtz && id != TypeId::Timestamp && id != TypeId::Date &&
      id != TypeId::String && id != TypeId::Null)
    throwArgError(name, args, pos, "the third argument must be a TIMESTAMP_NTZ",
                  "use CAST(... AS TIMESTAMP_NTZ)");
  args[2] = castTo(args[2], ntz());
  const TimeZone* from = constZone(args[0], pos);
  const TimeZone* to = constZone(args[1], pos);
  return fn3(name, ntz(), args, [from, to](const Value& f, const Value& t, const Value& v) {
    const TimeZone& a = from ? *from : findTimeZone(f.asString());
    const TimeZone& b = to ? *to : findTimeZone(t.asString());
    return Value::timestampNtz(b.localFromUtc(a.utcFromLocal(v.asInt())));
  });
}

// window_time(window): the last instant of a time window (its end minus one
// microsecond), the event time of a windowed aggregate's row.
ExprPtr buildWindowTime(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  const auto& t = args[0]->type();
  int end = t->id == TypeId::Struct ? t->fieldIndex("end") : -1;
  if (end < 0 || t->fields[static_cast<size_t>(end)].type->id != TypeId::Timestamp)
    throwArgError(name, args, pos,
                  "the argument must be a window (a STRUCT with a TIMESTAMP field end)");
  return fn1(name, ts(), args, [end](const Value& w) {
    const Value& e = w.asList()[static_cast<size_t>(end)];
    return e.isNull() ? Value() : Value::timestamp(e.asInt() - 1);
  });
}

}  // namespace

int64_t dayAfterMonths(int64_t days, int64_t months) {
  int64_t y;
  unsigned m, d;
  civilFromDays(days, &y, &m, &d);
  int64_t total = y * 12 + (m - 1) + months;
  int64_t ny = floorDiv(total, 12);
  auto nm = static_cast<unsigned>(floorMod(total, 12) + 1);
  return daysFromCivil(ny, nm, std::min(d, daysInMonth(ny, nm)));
}

void registerDatetimeFunctions(FunctionTable& t) {
  t["current_timestamp"] = {0, 0, buildNow, kNotDeterministic};
  t["now"] = {0, 0, buildNow, kNotDeterministic};
  t["localtimestamp"] = {0, 0, buildLocalTimestamp, kNotDeterministic};
  t["unix_millis"] = {1, 1, buildUnixOf<1000>};
  t["unix_micros"] = {1, 1, buildUnixOf<1>};
  t["unix_seconds"] = {1, 1, buildUnixOf<kMicrosPerSecond>};
  t["unix_timestamp"] = {0, 2, buildUnixTimestamp, kNotDeterministic};
  t["timestamp_millis"] = {1, 1, buildTimestampOf<1000>};
  t["timestamp_micros"] = {1, 1, buildTimestampOf<1>};
  t["timestamp_seconds"] = {1, 1, buildTimestampOf<kMicrosPerSecond>};
  t["to_timestamp"] = {1, 2, buildToTimestamp};
  t["from_unixtime"] = {1, 2, buildFromUnixtime};
  t["date_format"] = {2, 2, buildDateFormat};
  t["date_trunc"] = {2, 2, buildDateTrunc};
  t["year"] = {1, 1, buildExtract<0>};
  t["month"] = {1, 1, buildExtract<1>};
  t["day"] = {1, 1, buildExtract<2>};
  t["dayofmonth"] = {1, 1, buildExtract<2>};
  t["hour"] = {1, 1, buildExtract<3>};
  t["minute"] = {1, 1, buildExtract<4>};
  t["second"] = {1, 1, buildExtract<5>};
  t["dayofweek"] = {1, 1, buildExtract<6>};
  t["datediff"] = {2, 2, buildDateDiff};
  t["date_diff"] = {2, 2, buildDateDiff};
  t["date_add"] = {2, 2, buildDateAdd<1>};
  t["dateadd"] = {2, 2, buildDateAdd<1>};
  t["date_sub"] = {2, 2, buildDateAdd<-1>};
  t["add_months"] = {2, 2, buildAddMonths};
  t["make_ym_interval"] = {0, 2, buildMakeYmInterval};
  t["months_between"] = {2, 3, buildMonthsBetween};
  t["last_day"] = {1, 1, buildLastDay};
  t["next_day"] = {2, 2, buildNextDay};
  t["dayofyear"] = {1, 1, buildDateField<0>};
  t["weekofyear"] = {1, 1, buildDateField<1>};
  t["weekday"] = {1, 1, buildDateField<2>};
  t["quarter"] = {1, 1, buildDateField<3>};
  t["dayname"] = {1, 1, buildDayMonthName<false>};
  t["monthname"] = {1, 1, buildDayMonthName<true>};
  t["make_date"] = {3, 3, buildMakeDate};
  t["make_timestamp"] = {6, 7, buildMakeTimestamp};
  t["from_utc_timestamp"] = {2, 2, buildUtcShift<true>};
  t["to_utc_timestamp"] = {2, 2, buildUtcShift<false>};
  t["convert_timezone"] = {2, 3, buildConvertTimezone};
  t["to_date"] = {1, 2, buildToDate};
  t["date"] = {1, 1, buildToDate};
  t["to_unix_timestamp"] = {1, 2, buildUnixTimestamp};
  t["try_to_timestamp"] = {1, 2, buildToTimestamp};
  t["to_timestamp_ntz"] = {1, 2, buildToTimestampNtz};
  t["to_timestamp_ltz"] = {1, 2, buildToTimestamp};
  t["date_from_unix_date"] = {1, 1, buildDateFromUnixDate};
  t["unix_date"] = {1, 1, buildUnixDate};
  t["trunc"] = {2, 2, buildTrunc};
  t["current_date"] = {0, 0, buildCurrentDate, kNotDeterministic};
  t["curdate"] = {0, 0, buildCurrentDate, kNotDeterministic};
  t["date_part"] = {2, 2, buildDatePart};
  t["datepart"] = {2, 2, buildDatePart};
  t["make_dt_interval"] = {0, 4, buildMakeDtInterval};
  t["make_timestamp_ntz"] = {6, 6, buildMakeTimestamp};
  t["make_timestamp_ltz"] = {6, 7, buildMakeTimestamp};
  t["current_timezone"] = {0, 0, buildCurrentTimezone, kNotDeterministic};
  t["window_time"] = {1, 1, buildWindowTime};
}

}  // namespace rtsql::expr_internal
