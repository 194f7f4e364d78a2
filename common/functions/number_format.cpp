// Spark's number format patterns, the one home of their parser, and the
// functions over them: to_char / to_varchar (a number as text in a format, or a
// DATE/TIMESTAMP/BINARY as Spark's to_char writes those) and to_number /
// try_to_number (text in a format as a DECIMAL).
//
// The format grammar is Spark's (case-insensitive; the order is fixed):
//   [MI | S] [$] [0 | 9 | G | ,]* [. | D] [0 | 9]* [$] [PR | MI | S]
// - `0` and `9` are digits. A run of them before the point that starts with `0`
//   must match exactly that many digits (and to_char pads it with zeros);
//   otherwise a run matches at most that many (to_char pads with spaces).
// - `.` or `D` is the decimal point; `,` or `G` a thousands separator, with a
//   digit on each side, before the point only.
// - `$` a dollar sign; `S` an optional `+` or `-`; `MI` an optional `-` (to_char
//   writes a space for a positive number); `PR` (last) wraps a negative number
//   in angle brackets, `<12>`.
// The result of to_number is DECIMAL(digits in the format, digits after its
// point). A format breaking a rule is refused when the query is bound with
// 42601 naming the rule (Spark's INVALID_FORMAT); text that does not match is
// 42601 at run time (Spark's INVALID_FORMAT.MISMATCH_INPUT), NULL from
// try_to_number. to_char writes '#' for every digit of a number too wide for
// the format, as Spark does.
#include <fmt/format.h>

#include <cmath>

#include <algorithm>

#include "common/functions/internal.h"
#include "common/schema.h"

namespace rtsql::expr_internal {
namespace {

// One element of a compiled format. A Group is a run of digits and thousands
// separators; `digits` holds the lengths of its digit runs from right to left
// (the order in which text is matched against it) and `exact` whether each run
// must be matched exactly.
struct Token {
  enum Kind { Group, Point, Dollar, Sign, Minus, OpenPr, ClosePr, Invalid } kind;
  std::string items;  // Group: '0' or '9' per digit, ',' per separator, in format order
  std::vector<int> digits;
  std::vector<bool> exact;
  char ch = 0;  // Invalid: the character
};

// How a token is named in an error message.
std::string tokenName(const Token& t) {
  switch (t.kind) {
    case Token::Group: return "digit sequence";
    case Token::Point: return ". or D";
    case Token::Dollar: return "$";
    case Token::Sign: return "S";
    case Token::Minus: return "MI";
    case Token::OpenPr:
    case Token::ClosePr: return "PR";
    case Token::Invalid: return fmt::format("character '{}'", t.ch);
  }
  return {};
}

class NumberFormat {
 public:
  // Compiles `format`; throws 42601 (22003 for more than 38 digits) at `pos`.
  NumberFormat(const std::string& format, size_t pos) : text_(format) {
    tokenize(toUpper(format));
    check(pos);
  }

  decimal::Type type() const { return {precision_, scale_}; }

  // The number `input` spells in this format (unscaled, at scale()), or
  // nullopt when it does not match.
  std::optional<Int128> parse(std::string_view in) const {
    std::string before, after;
    bool point = false, opened = false, closed = false, negate = false;
    size_t i = 0;
    for (const Token& t : tokens_) {
      bool more = i < in.size();
      char c = more ? in[i] : '\0';
      switch (t.kind) {
        case Token::Group:
          if (!parseGroup(t, in, &i, point ? after : before)) return std::nullopt;
          break;
        case Token::Point:
          if (more && c == '.') point = true, ++i;
          break;
        case Token::Dollar:
          if (more && c != '$') return std::nullopt;
          if (more) ++i;
          break;
        case Token::Sign:
          if (more && (c == '+' || c == '-')) negate ^= c == '-', ++i;
          break;
        case Token::Minus:
          if (more && c == '-') negate = !negate, ++i;
          break;
        case Token::OpenPr:
          if (more && c == '<') {
            if (opened) return std::nullopt;
            opened = true, ++i;
          }
          break;
        case Token::ClosePr:
          if (more && c == '>') {
            if (!opened) return std::nullopt;
            closed = true, negate = !negate, ++i;
          }
          break;
        case Token::Invalid: return std::nullopt;
      }
    }
    if (i < in.size() || opened != closed || (before.empty() && after.empty()))
      return std::nullopt;
    after.resize(static_cast<size_t>(scale_), '0');
    Int128 v = 0;
    for (char d : before + after) v = v * 10 + (d - '0');
    return negate ? -v : v;
  }

  // `v` at `scale` written in this format; nullopt when digits are left over.
  std::optional<std::string> format(Int128 v, int scale) const {
    std::string plain = decimal::toString(v, scale);
    size_t dot = plain.find('.');
    std::string before = plain.substr(0, dot);
    std::string after = dot == std::string::npos ? "" : plain.substr(dot + 1);
    before.erase(0, before.find_first_not_of("-0") == std::string::npos
                        ? before.size()
                        : before.find_first_not_of("-0"));
    while (!after.empty() && after.back() == '0') after.pop_back();
    auto nb = static_cast<size_t>(precision_ - scale_), na = static_cast<size_t>(scale_);
    if (before.size() > nb || after.size() > na) {
      before.assign(nb, '#');
      after.assign(na, '#');
    }
    before.insert(0, nb - before.size(), ' ');
    after.append(na - after.size(), '0');

    bool negative = v < 0, point = false;
    size_t bi = 0, ai = 0;
    std::string r;
    for (const Token& t : tokens_) {
      switch (t.kind) {
        case Token::Group: {
          // The digits of one run are exact when the run is (a leading '0').
          size_t run = t.digits.size();
          bool runExact = false;
          char prev = ',';
          for (char item : t.items) {
            if (item == ',') {
              if (!r.empty() && r.back() >= '0' && r.back() <= '9')
                r += ',';
              else
                addSpace(r);
              prev = ',';
              continue;
            }
            if (prev == ',') runExact = t.exact[--run];
            prev = item;
            if (point) {
              r += after[ai++];
            } else {
              char c = before[bi++];
              if (c == ' ' && runExact)
                r += '0';
              else if (c == ' ')
                addSpace(r);
              else
                r += c;
            }
          }
          break;
        }
        case Token::Point:
          if (!r.empty() && r.back() == ' ') r.back() = '0';
          r += '.';
          point = true;
          break;
        case Token::Dollar: r += '$'; break;
        case Token::Sign:
          stripLonePoint(r);
          addChar(r, negative ? '-' : '+');
          break;
        case Token::Minus:
          if (negative) {
            stripLonePoint(r);
            addChar(r, '-');
          } else {
            r += ' ';
          }
          break;
        case Token::OpenPr:
          if (negative) r += '<';
          break;
        case Token::ClosePr:
          stripLonePoint(r);
          if (negative)
            addChar(r, '>');
          else
            r += "  ";
          break;
        case Token::Invalid: break;
      }
    }
    if (bi < before.size() || ai < after.size()) return std::nullopt;
    stripLonePoint(r);
    if (r.empty() || r == "+" || r == "-") return "0";
    return r;
  }

  const std::string& text() const { return text_; }

 private:
  void tokenize(const std::string& f) {
    std::vector<Token> flat;
    bool point = false;
    for (size_t i = 0; i < f.size();) {
      char c = f[i];
      Token t{Token::Invalid, {}, {}, {}, c};
      if (c == '0' || c == '9') {
        size_t start = i;
        while (i < f.size() && (f[i] == '0' || f[i] == '9')) ++i;
        t.kind = Token::Group;
        t.items = f.substr(start, i - start);
        t.exact = {c == '0' && !point};
        flat.push_back(t);
        continue;
      }
      ++i;
      if (c == '.' || c == 'D') {
        t.kind = Token::Point, point = true;
      } else if (c == ',' || c == 'G') {
        t.kind = Token::Group, t.items = ",";
      } else if (c == '$') {
        t.kind = Token::Dollar;
      } else if (c == 'S') {
        t.kind = Token::Sign;
      } else if (c == 'M' && i < f.size() && f[i] == 'I') {
        t.kind = Token::Minus, ++i;
      } else if (c == 'P' && i < f.size() && f[i] == 'R') {
        ++i;
        flat.insert(flat.begin(), Token{Token::OpenPr, {}, {}, {}, 0});
        t.kind = Token::ClosePr;
      }
      flat.push_back(t);
    }
    // Consecutive digit runs and separators form one group.
    for (Token& t : flat) {
      if (t.kind != Token::Group) {
        tokens_.push_back(std::move(t));
        continue;
      }
      if (tokens_.empty() || tokens_.back().kind != Token::Group) {
        tokens_.push_back(Token{Token::Group, {}, {}, {}, 0});
      }
      Token& g = tokens_.back();
      g.items += t.items;
      if (t.items != ",") {
        g.digits.insert(g.digits.begin(), static_cast<int>(t.items.size()));
        g.exact.insert(g.exact.begin(), t.exact[0]);
      }
    }
    bool afterPoint = false;
    for (const Token& t : tokens_) {
      if (t.kind == Token::Point) afterPoint = true;
      if (t.kind != Token::Group) continue;
      for (int d : t.digits) {
        precision_ += d;
        if (afterPoint) scale_ += d;
      }
    }
  }

  [[noreturn]] void refuse(const std::string& why, size_t pos) const {
    throw SqlError(sqlstate::kSyntaxError,
                   fmt::format("the number format '{}' is invalid: {}", text_, why), pos,
                   "a format is [MI|S] [$] [0|9|G|,]* [.|D] [0|9]* [$] [PR|MI|S]");
  }

  void check(size_t pos) const {
    auto index = [&](auto pred) {
      auto it = std::find_if(tokens_.begin(), tokens_.end(), pred);
      return it == tokens_.end() ? -1 : static_cast<int>(it - tokens_.begin());
    };
    auto is = [](Token::Kind k) { return [k](const Token& t) { return t.kind == k; }; };
    int dollar = index(is(Token::Dollar)), digit = index(is(Token::Group)),
        point = index(is(Token::Point));
    if (text_.empty()) refuse("the number format must not be empty", pos);
    if (digit < 0) refuse("the format string requires at least one number digit", pos);
    if (digit < dollar) refuse("currency characters must appear before any digit", pos);
    if (point >= 0 && point < dollar)
      refuse("currency characters must appear before any decimal point", pos);
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const Token& t = tokens_[i];
      if (t.kind != Token::Group) continue;
      bool afterPoint = point >= 0 && static_cast<int>(i) > point;
      if (afterPoint && t.items.find(',') != std::string::npos)
        refuse("thousands separators (, or G) may not appear after the decimal point", pos);
      if (!afterPoint && (t.items.front() == ',' || t.items.back() == ',' ||
                          t.items.find(",,") != std::string::npos))
        refuse("thousands separators (, or G) must have digits in between them", pos);
    }
    for (Token::Kind k : {Token::Point, Token::Sign, Token::Minus, Token::Dollar, Token::ClosePr}) {
      if (std::count_if(tokens_.begin(), tokens_.end(), is(k)) > 1)
        refuse(fmt::format("at most one {} is allowed", tokenName(Token{k, {}, {}, {}, 0})), pos);
    }
    // The fixed order of the grammar: each slot takes at most one token.
    static const std::vector<std::vector<Token::Kind>> kSlots = {
        {Token::OpenPr},
        {Token::Minus, Token::Sign},
        {Token::Dollar},
        {Token::Group},
        {Token::Point},
        {Token::Group},
        {Token::Dollar},
        {Token::Minus, Token::Sign, Token::ClosePr}};
    size_t next = 0;
    for (const auto& slot : kSlots) {
      if (next < tokens_.size() &&
          std::find(slot.begin(), slot.end(), tokens_[next].kind) != slot.end())
        ++next;
    }
    if (next < tokens_.size())
      refuse(fmt::format("found the unexpected {}", tokenName(tokens_[next])), pos);
    if (precision_ > decimal::kMaxPrecision)
      throw SqlError(sqlstate::kNumericOutOfRange,
                     fmt::format("the number format '{}' has {} digits: a DECIMAL has at most {}",
                                 text_, precision_, decimal::kMaxPrecision),
                     pos);
  }

  // Matches the digits and separators of `in` from `*i` against group `g`,
  // appending the digits to `digits`; false when the counts do not fit.
  static bool parseGroup(const Token& g, std::string_view in, size_t* i, std::string& digits) {
    std::vector<int> sizes;  // digits per input group, right to left
    int current = 0;
    size_t j = *i;
    for (; j < in.size(); ++j) {
      char c = in[j];
      if (c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f')) continue;
      if (c >= '0' && c <= '9') {
        ++current;
        digits += c;
      } else if (c == ',') {
        sizes.insert(sizes.begin(), current);
        current = 0;
      } else {
        break;
      }
    }
    sizes.insert(sizes.begin(), current);
    if (sizes.size() > g.digits.size()) return false;
    for (size_t k = 0; k < g.digits.size(); ++k) {
      int got = k < sizes.size() ? sizes[k] : 0;
      if (g.exact[k] ? got != g.digits[k] : got > g.digits[k]) return false;
    }
    *i = j;
    return true;
  }

  // Appends `c`, moving it left over the spaces before it ("  -12" not "-  12").
  static void addChar(std::string& r, char c) {
    r += c;
    for (size_t i = r.size() - 1; i >= 1 && r[i - 1] == ' ' && r[i] == c; --i)
      std::swap(r[i - 1], r[i]);
  }
  // Appends a space, moving it left of a sign or '<' before it.
  static void addSpace(std::string& r) {
    r += ' ';
    for (size_t i = r.size() - 1;
         i >= 1 && (r[i - 1] == '+' || r[i - 1] == '-' || r[i - 1] == '<') && r[i] == ' '; --i)
      std::swap(r[i - 1], r[i]);
  }
  // A decimal point with no digit after it becomes a space.
  static void stripLonePoint(std::string& r) {
    size_t i = r.find('.');
    if (i != std::string::npos && (i + 1 == r.size() || r[i + 1] == ' ')) r[i] = ' ';
  }

  std::string text_;
  std::vector<Token> tokens_;
  int precision_ = 0, scale_ = 0;
};

// The compiled format of a literal format argument, or nullptr for NULL; a
// format that is not a literal is 42601, as in Spark.
std::shared_ptr<const NumberFormat> constFormat(const std::string& name,
                                                const std::vector<ExprPtr>& args, size_t pos) {
  auto c = constantValue(args[1]);
  if (!c)
    throw SqlError(sqlstate::kSyntaxError,
                   fmt::format("{}: the format must be a constant string", name), pos);
  if (c->isNull()) return nullptr;
  return std::make_shared<const NumberFormat>(c->asString(), pos);
}

[[noreturn]] void throwMismatch(std::string_view type, std::string_view input,
                                const NumberFormat& f) {
  throw SqlError(sqlstate::kSyntaxError,
                 fmt::format("the input {} '{}' does not match the number format '{}'", type,
                             input, f.text()));
}

// to_number(text, fmt) and try_to_number: DECIMAL(p, s) as the format implies.
ExprPtr buildToNumber(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  auto f = constFormat(name, args, pos);
  if (!f) return makeLiteral(Value(), DataType::decimal(10, 0));
  decimal::Type t = f->type();
  bool raise = name == "to_number";
  return fn1(name, decimalType(t), {args[0]}, [f, t, raise](const Value& s) {
    auto v = f->parse(s.asString());
    if (v) return Value::decimal(*v, t.precision, t.scale);
    if (raise) throwMismatch("STRING", s.asString(), *f);
    return Value();
  });
}

// to_char(x, fmt) / to_varchar: a number in a number format (INT, BIGINT and
// DOUBLE as the DECIMAL Spark converts them to), a DATE or TIMESTAMP as
// date_format writes it, BINARY as 'base64', 'hex' or 'utf-8' text.
ExprPtr buildToChar(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  TypeId id = args[0]->type()->id;
  if (id == TypeId::Date || id == TypeId::Timestamp)
    return functionTable().at("date_format").build(name, args, pos);
  argString(name, args, 1, pos);
  if (id == TypeId::Binary) {
    auto c = constantValue(args[1]);
    if (!c)
      throw SqlError(sqlstate::kSyntaxError,
                     fmt::format("{}: the format must be a constant string", name), pos);
    if (c->isNull()) return makeLiteral(Value(), DataType::of(TypeId::String));
    std::string f = toLower(c->asString());
    if (f == "base64" || f == "hex") {
      std::vector<ExprPtr> one{args[0]};
      return functionTable().at(f).build(f, one, pos);
    }
    if (f == "utf-8") {
      std::vector<ExprPtr> two{args[0], makeLiteral(Value::string("UTF-8"),
                                                    DataType::of(TypeId::String))};
      return functionTable().at("decode").build("decode", two, pos);
    }
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("{}: the binary format '{}' is not one of 'base64', 'hex', 'utf-8'",
                               name, c->asString()),
                   pos);
  }
  if (id == TypeId::Int || id == TypeId::BigInt || id == TypeId::Null)
    args[0] = castTo(args[0], decimalType(decimalTypeOf(*args[0]->type())));
  else if (id == TypeId::Double) {
    // NaN and the infinities are no number to write: NULL, as Spark answers
    // (in ANSI mode too), where a finite double too large still raises.
    ExprPtr finite = fn1("to_char", DataType::of(TypeId::Double), {args[0]}, [](const Value& x) {
      return std::isfinite(x.asDouble()) ? x : Value();
    });
    args[0] = makeCast(finite, DataType::decimal(30, 15), pos);
  }
  else if (id == TypeId::String)
    args[0] = makeCast(args[0], DataType::decimal(38, 18), pos);
  else if (id != TypeId::Decimal)
    throwArgError(name, args, pos,
                  "the first argument must be a number, DATE, TIMESTAMP or BINARY");
  auto f = constFormat(name, args, pos);
  if (!f) return makeLiteral(Value(), DataType::of(TypeId::String));
  return fn1(name, DataType::of(TypeId::String), {args[0]}, [f](const Value& x) {
    auto s = f->format(x.asDecimal(), x.decimalScale());
    if (!s)
      throwMismatch(fmt::format("DECIMAL({},{})", x.decimalPrecision(), x.decimalScale()),
               decimal::toString(x.asDecimal(), x.decimalScale()), *f);
    return Value::string(std::move(*s));
  });
}

}  // namespace

void registerNumberFormatFunctions(FunctionTable& t) {
  t["to_char"] = {2, 2, buildToChar};
  t["to_varchar"] = {2, 2, buildToChar};
  t["to_number"] = {2, 2, buildToNumber};
  t["try_to_number"] = {2, 2, buildToNumber};
}

}  // namespace rtsql::expr_internal
