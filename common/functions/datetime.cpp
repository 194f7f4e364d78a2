// Timestamp functions: now/current_timestamp, unix_* and timestamp_* epoch
// conversions, to_timestamp, from_unixtime, date_format, date_trunc and field
// extraction. Datetime patterns follow Spark's (yyyy-MM-dd HH:mm:ss.SSS); a
// literal pattern is compiled once at bind time. All times are UTC.
#include <fmt/format.h>

#include "common/clock.h"
#include "common/functions/internal.h"
#include "common/json.h"
#include "common/schema.h"

namespace rtsql::expr_internal {

namespace {

const DataTypePtr& ts() {
  static const DataTypePtr t = DataType::of(TypeId::Timestamp);
  return t;
}
const DataTypePtr& bigint() {
  static const DataTypePtr t = DataType::of(TypeId::BigInt);
  return t;
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

// A compiled datetime pattern: letters repeated `count` times, or literal text.
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
        tokens_.push_back({c, static_cast<int>(j - i), {}});
        i = j;
      } else {
        tokens_.push_back({0, 0, std::string(1, c)});
        ++i;
      }
    }
  }

  std::string format(int64_t us) const {
    Fields f = split(us);
    std::string out;
    for (const auto& t : tokens_) {
      int n = t.count;
      switch (t.letter) {
        case 0: out += t.literal; break;
        case 'y':
        case 'u':
          if (n == 2)
            out += fmt::format("{:02}", floorMod(f.year, 100));
          else
            out += fmt::format("{:0{}}", f.year, n);
          break;
        case 'M':
        case 'L':
          if (n >= 4)
            out += kMonths[f.month - 1];
          else if (n == 3)
            out.append(kMonths[f.month - 1], 3);
          else
            out += fmt::format("{:0{}}", f.month, n);
          break;
        case 'd': out += fmt::format("{:0{}}", f.day, n); break;
        case 'H': out += fmt::format("{:0{}}", f.hour, n); break;
        case 'h': out += fmt::format("{:0{}}", f.hour % 12 == 0 ? 12 : f.hour % 12, n); break;
        case 'm': out += fmt::format("{:0{}}", f.minute, n); break;
        case 's': out += fmt::format("{:0{}}", f.second, n); break;
        case 'S': {
          std::string frac = fmt::format("{:06}", f.micros);
          frac.resize(static_cast<size_t>(n), '0');
          out += frac;
          break;
        }
        case 'a': out += f.hour < 12 ? "AM" : "PM"; break;
        case 'E':
          if (n >= 4)
            out += kDays[f.weekday];
          else
            out.append(kDays[f.weekday], 3);
          break;
        case 'X': out += "Z"; break;
        case 'x': out += n == 1 ? "+00" : n == 2 ? "+0000" : "+00:00"; break;
        case 'Z': out += n >= 4 ? "GMT" : "+0000"; break;
        case 'z': out += "UTC"; break;
        default: out.append(static_cast<size_t>(n), t.letter); break;
      }
    }
    return out;
  }

  bool parse(std::string_view s, int64_t* us) const {
    int64_t year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0, micros = 0, offsetMin = 0;
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
            break;
          }
          if (s.substr(i, 3) == "UTC" || s.substr(i, 3) == "GMT") {
            i += 3;
            if (i >= s.size() || (s[i] != '+' && s[i] != '-')) break;
          }
          if (i >= s.size() || (s[i] != '+' && s[i] != '-')) return false;
          int sign = s[i++] == '-' ? -1 : 1;
          int64_t oh = 0, om = 0;
          if (!num(2, &oh)) return false;
          if (i < s.size() && s[i] == ':') ++i;
          num(2, &om);
          offsetMin = sign * (oh * 60 + om);
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
    // Reject 2024-02-30 and friends: the day must survive the round trip.
    int64_t y2;
    unsigned m2, d2;
    civilFromDays(days, &y2, &m2, &d2);
    if (d2 != day) return false;
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

template <int64_t Div>
ExprPtr buildUnixOf(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argTimestamp(name, args, 0, pos);
  return fn1(name, bigint(), args, [](const Value& v) { return Value::bigint(floorDiv(v.asInt(), Div)); });
}

template <int64_t Mul>
ExprPtr buildTimestampOf(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBigInt(name, args, 0, pos);
  return fn1(name, ts(), args, [](const Value& v) {
    int64_t x = v.asInt();
    if (x > INT64_MAX / Mul || x < INT64_MIN / Mul) return Value();
    return Value::timestamp(x * Mul);
  });
}

ExprPtr buildToTimestamp(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args.size() == 1) {
    auto id = args[0]->type()->id;
    if (id == TypeId::Timestamp || id == TypeId::String || id == TypeId::Null || args[0]->type()->isNumeric())
      return castTo(args[0], ts());
    throwArgError(name, args, pos, "the first argument must be a STRING");
  }
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  FormatPtr fixed = constFormat(args[1]);
  return fn2(name, ts(), args, [fixed](const Value& s, const Value& f) {
    int64_t us;
    bool ok = fixed ? fixed->parse(s.asString(), &us) : DateFormat(f.asString()).parse(s.asString(), &us);
    return ok ? Value::timestamp(us) : Value();
  });
}

ExprPtr buildUnixTimestamp(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args.empty())
    return fnN(name, bigint(), args, false, [](const Row&, const std::vector<ExprPtr>&) {
      return Value::bigint(floorDiv(nowMicros(), kMicrosPerSecond));
    });
  if (args.size() == 1 && args[0]->type()->id == TypeId::String) {
    // Spark's default pattern for unix_timestamp(s) is yyyy-MM-dd HH:mm:ss.
    args.push_back(makeLiteral(Value::string("yyyy-MM-dd HH:mm:ss"), DataType::of(TypeId::String)));
  }
  if (args.size() == 2) {
    ExprPtr parsed = buildToTimestamp("to_timestamp", args, pos);
    std::vector<ExprPtr> a{parsed};
    return fn1(name, bigint(), a, [](const Value& v) { return Value::bigint(floorDiv(v.asInt(), kMicrosPerSecond)); });
  }
  return buildUnixOf<kMicrosPerSecond>(name, args, pos);
}

ExprPtr buildFromUnixtime(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBigInt(name, args, 0, pos);
  if (args.size() == 1)
    args.push_back(makeLiteral(Value::string("yyyy-MM-dd HH:mm:ss"), DataType::of(TypeId::String)));
  argString(name, args, 1, pos);
  FormatPtr fixed = constFormat(args[1]);
  return fn2(name, DataType::of(TypeId::String), args, [fixed](const Value& secs, const Value& f) {
    int64_t s = secs.asInt();
    if (s > INT64_MAX / kMicrosPerSecond || s < INT64_MIN / kMicrosPerSecond) return Value();
    int64_t us = s * kMicrosPerSecond;
    return Value::string(fixed ? fixed->format(us) : DateFormat(f.asString()).format(us));
  });
}

ExprPtr buildDateFormat(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argTimestamp(name, args, 0, pos);
  argString(name, args, 1, pos);
  FormatPtr fixed = constFormat(args[1]);
  return fn2(name, DataType::of(TypeId::String), args, [fixed](const Value& t, const Value& f) {
    return Value::string(fixed ? fixed->format(t.asInt()) : DateFormat(f.asString()).format(t.asInt()));
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
    return fn2(name, ts(), args, [u](const Value&, const Value& t) { return truncate(u, t.asInt()); });
  }
  // Spark gives NULL for an unknown unit computed per record.
  return fn2(name, ts(), args, [](const Value& unit, const Value& t) { return truncate(truncUnit(unit.asString()), t.asInt()); });
}

template <int Field>
ExprPtr buildExtract(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argTimestamp(name, args, 0, pos);
  return fn1(name, DataType::of(TypeId::Int), args, [](const Value& v) {
    Fields f = split(v.asInt());
    int64_t r = Field == 0 ? f.year : Field == 1 ? f.month : Field == 2 ? f.day : Field == 3 ? f.hour
              : Field == 4 ? f.minute : Field == 5 ? f.second : (f.weekday + 1) % 7 + 1;  // dayofweek: Sunday = 1
    return Value::integer(static_cast<int32_t>(r));
  });
}

}  // namespace

void registerDatetimeFunctions(FunctionTable& t) {
  t["current_timestamp"] = {0, 0, buildNow};
  t["now"] = {0, 0, buildNow};
  t["localtimestamp"] = {0, 0, buildNow};
  t["unix_millis"] = {1, 1, buildUnixOf<1000>};
  t["unix_micros"] = {1, 1, buildUnixOf<1>};
  t["unix_seconds"] = {1, 1, buildUnixOf<kMicrosPerSecond>};
  t["unix_timestamp"] = {0, 2, buildUnixTimestamp};
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
}

}  // namespace rtsql::expr_internal
