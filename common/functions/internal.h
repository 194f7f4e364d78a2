// Building blocks shared by the expression factories (common/expr.cpp) and the
// function implementations (common/functions/*.cpp). This header is private to
// the common layer: other folders see expressions only through common/expr.h.
//
// A function is registered by name with its arity and a builder. The builder
// runs once, at bind time: it checks and coerces the argument types, compiles
// whatever can be compiled (regular expressions, LIKE patterns, date formats when
// they are literals) and returns a node whose eval() does only the per-record
// work. Most nodes are instances of the Fn1/Fn2/Fn3 templates below, which
// implement "NULL in, NULL out" once and call a lambda with the non-null values.
// They read their arguments through Expr::evalRef, so the lambda sees a column's
// own Value, never a copy of it.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/expr.h"

namespace rtsql {
class TimeZone;
}

namespace rtsql::expr_internal {

// ---- text helpers ---------------------------------------------------------

// A double as Spark (Java) prints it: "1.0", "0.5", "1.0E20", "NaN", "Infinity".
std::string formatDouble(double d);
void appendDouble(std::string& out, double d);
// A FLOAT as Spark (Java's Float.toString) prints it: the shortest digits that
// read back as the same float, so 0.1f is "0.1", not "0.10000000149011612".
std::string formatFloat(float f);
void appendFloat(std::string& out, float f);
// An interval (microseconds) as PostgreSQL prints it: "00:00:10", "1 day 02:00:00.5".
std::string formatInterval(int64_t micros);
// A timestamp as Spark's JSON and CSV writers print it by default
// (yyyy-MM-dd'T'HH:mm:ss.SSSXXX, UTC): 2024-02-29T13:45:07.123Z, always
// milliseconds.
std::string formatSparkTimestamp(int64_t micros);
std::string toBase64(std::string_view bytes);
bool fromBase64(std::string_view text, std::string* out);
// Whether Spark's to_binary(text, 'base64') takes the text: the alphabet
// without spaces (line breaks are skipped), '=' padding only at the end and
// completing a 4-character unit, or no padding and no lone last character.
bool sparkBase64Valid(std::string_view text);
// Why Java's MIME base64 decoder (Spark's unbase64) refuses the text, or
// nullptr when it takes it: it skips characters outside the alphabet, and
// refuses misplaced padding, a lone last character and data after padding.
const char* javaMimeBase64Error(std::string_view text);
// Number of UTF-8 code points (continuation bytes are not counted).
size_t utf8Length(std::string_view s);
// Appends code point `cp` encoded as UTF-8 (1 to 4 bytes).
void appendUtf8(std::string& out, uint32_t cp);
// The first occurrence of `needle` in `text` at or after `from`, or npos, in
// time linear in both lengths (glibc's memmem, the two-way algorithm), where
// std::string::find can take their product: a record of 'aaa...' and a long
// 'aaa...b' would keep a core busy for minutes.
size_t findSubstring(std::string_view text, std::string_view needle, size_t from = 0);

// ---- value size -------------------------------------------------------------

// The largest string, binary or array value a function builds, in bytes. A
// function whose result grows with its arguments (concat, replace, hex...)
// checks it before it allocates, so no record and no nesting of calls can make
// one evaluation allocate without bound. docs/sql.md states the limit.
inline constexpr size_t kMaxValueBytes = size_t{64} << 20;
// Throws 54000 (program_limit_exceeded) naming `fn` when `bytes` is over
// kMaxValueBytes.
void checkValueSize(std::string_view fn, size_t bytes);

// ---- comparison -------------------------------------------------------------

// -1, 0 or 1 as `a` is less than, equal to or greater than `b`.
template <typename T>
int cmp3(T a, T b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}
// Doubles in SQL's order: NaN equals NaN and is above every other value, and
// -0.0 equals 0.0.
inline int compareDoubles(double a, double b) {
  bool an = std::isnan(a), bn = std::isnan(b);
  if (an || bn) return an == bn ? 0 : (an ? 1 : -1);
  return cmp3(a, b);
}

// ---- calendar helpers (proleptic Gregorian, UTC) --------------------------

int64_t daysFromCivil(int64_t y, unsigned m, unsigned d);
void civilFromDays(int64_t days, int64_t* y, unsigned* m, unsigned* d);
inline bool isLeapYear(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
// The number of days of month `m` (1..12) of year `y`.
inline unsigned daysInMonth(int64_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && isLeapYear(y) ? 29 : kDays[m - 1];
}
inline int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int64_t floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }
// The day `months` months after day `days`, on the same day of the month or
// the month's last (2024-01-31 and 1 month is 2024-02-29), as Java's
// LocalDate.plusMonths; not limited to a DATE's range.
int64_t dayAfterMonths(int64_t days, int64_t months);
constexpr int64_t kMicrosPerSecond = 1000000;
constexpr int64_t kMicrosPerDay = 86400LL * kMicrosPerSecond;

// ---- types and coercion ---------------------------------------------------

inline const DataTypePtr& nullType() {
  static const DataTypePtr t = DataType::of(TypeId::Null);
  return t;
}
inline const DataTypePtr& stringType() {
  static const DataTypePtr t = DataType::of(TypeId::String);
  return t;
}
inline const DataTypePtr& boolType() {
  static const DataTypePtr t = DataType::of(TypeId::Boolean);
  return t;
}
inline const DataTypePtr& bigIntType() {
  static const DataTypePtr t = DataType::of(TypeId::BigInt);
  return t;
}
inline bool isNullType(const DataTypePtr& t) { return !t || t->id == TypeId::Null; }

// The DECIMAL an operand of type `t` takes beside a DECIMAL: its own precision
// and scale, DECIMAL(10, 0) for INT and NULL, DECIMAL(20, 0) for BIGINT.
decimal::Type decimalTypeOf(const DataType& t);
inline DataTypePtr decimalType(decimal::Type t) { return DataType::decimal(t.precision, t.scale); }
// Whether an explicit CAST from `from` to `to` can ever succeed.
bool canCast(const DataType& from, const DataType& to);
// The type both sides are implicitly converted to for comparison, CASE, IN,
// COALESCE...: NULL adapts, INT widens to BIGINT to DOUBLE, a STRING meets a
// TIMESTAMP as a TIMESTAMP. Returns nullptr when there is none.
DataTypePtr commonType(const DataTypePtr& a, const DataTypePtr& b);
// An integer narrowed to TINYINT or SMALLINT (`to`) by a cast, as Spark 4's
// ANSI mode narrows it: out of the range it raises CAST_OVERFLOW (22003),
// naming `from`, the value cast. narrowIntegralWrapping is Spark's legacy
// (non-ANSI) cast, which keeps the low bits as Java's (byte) and (short) do;
// casts use narrowIntegral, and the ANSI mode setting is what chooses between
// the two.
Value narrowIntegral(int64_t n, TypeId to, const Value& from);
Value narrowIntegralWrapping(int64_t n, TypeId to);
[[noreturn]] void throwCastOverflow(const Value& from, TypeId to);
// The result `r` of TINYINT or SMALLINT arithmetic (`op`, for the message) in
// type `t`: out of its range Spark 4 (ANSI mode) raises ARITHMETIC_OVERFLOW
// (22003); Spark's legacy mode wraps it (narrowIntegralWrapping), which the
// ANSI mode setting chooses.
Value checkedSmallIntegral(int64_t r, TypeId t, const std::string& op);
// Wraps `e` in a cast to `target` when its type differs; a NULL literal becomes a
// typed NULL literal. No checking: callers decide what is allowed.
ExprPtr castTo(ExprPtr e, const DataTypePtr& target);

// A constant node as a literal computed now; a node whose value raises is
// kept as it is, to raise for the record that reaches it.
ExprPtr foldConstant(const ExprPtr& e);

// "foo(STRING, INT)", for error messages.
std::string signature(const std::string& name, const std::vector<ExprPtr>& args);
// Throws 42804 "invalid argument for f(...): <what>" at pos.
[[noreturn]] void throwArgError(const std::string& name, const std::vector<ExprPtr>& args,
                                size_t pos, const std::string& what, std::string hint = {});

// Argument coercions used by builders. Each replaces args[i] by a node of the
// wanted type or throws 42804 naming the function and the argument.
void argString(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos);
void argBinary(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos);
void argDouble(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos);
void argBigInt(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos);
void argInt(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos);
void argBoolean(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos);
void argTimestamp(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos);
// A TIMESTAMP or TIMESTAMP_NTZ argument whose wall clock a function reads
// (its fields, its text): a TIMESTAMP_NTZ is left as it is and read in UTC,
// anything else is made a TIMESTAMP (argTimestamp) read in the session zone,
// the zone returned.
const TimeZone& argWallClock(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos);
// A DATE argument: a DATE, a TIMESTAMP (its day) or text that casts to one.
void argDate(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos);
// Numeric argument kept in its own type (NULL becomes INT; DECIMAL and FLOAT
// become DOUBLE, TINYINT and SMALLINT INT).
void argNumeric(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos);
// Converts all args to their common type; returns it.
DataTypePtr argsCommon(const std::string& fn, std::vector<ExprPtr>& args, size_t from,
                       size_t pos);

// The value of a constant expression, computed once at bind time.
std::optional<Value> constantValue(const ExprPtr& e);

// 64 bits from the system's random device: the seed of an unseeded rand(),
// randn(), and of the generators behind uuid() and shuffle()
// (conditional.cpp).
uint64_t randomSeed();

// ---- node classes -----------------------------------------------------------

class ColumnRefExpr final : public Expr {
 public:
  ColumnRefExpr(int index, DataTypePtr type, std::string name)
      : Expr(std::move(type)), index_(index), name_(std::move(name)) {}
  Value eval(const Row& row) const override {
    return static_cast<size_t>(index_) < row.size() ? row[static_cast<size_t>(index_)] : Value();
  }
  const Value& evalRef(const Row& row, Value&) const override {
    return static_cast<size_t>(index_) < row.size() ? row[static_cast<size_t>(index_)]
                                                    : Value::null();
  }
  std::string toString() const override {
    return name_.empty() ? "#" + std::to_string(index_) : name_;
  }
  void forEachChild(const std::function<void(const Expr&)>&) const override {}
  ExprPtr withChildren(std::vector<ExprPtr>) const override {
    return std::make_shared<ColumnRefExpr>(index_, type(), name_);
  }
  int index() const { return index_; }
  const std::string& name() const { return name_; }

 private:
  int index_;
  std::string name_;
};

class FieldAccessExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override { fn(*base_); }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<FieldAccessExpr>(std::move(c[0]), index_, field_, type());
  }
  FieldAccessExpr(ExprPtr base, int index, std::string field, DataTypePtr type)
      : Expr(std::move(type)), base_(std::move(base)), index_(index), field_(std::move(field)) {}
  Value eval(const Row& row) const override;
  const Value& evalRef(const Row& row, Value& scratch) const override;
  std::string toString() const override { return base_->toString() + "." + field_; }
  bool isConstant() const override { return base_->isConstant(); }
  const std::string& field() const { return field_; }

 private:
  ExprPtr base_;
  int index_;
  std::string field_;
};

// A call of a named function with evaluated-once argument nodes.
class CallExpr : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    for (const ExprPtr& a : args_) fn(*a);
  }
  CallExpr(std::string name, DataTypePtr type, std::vector<ExprPtr> args, bool deterministic)
      : Expr(std::move(type)),
        name_(std::move(name)),
        args_(std::move(args)),
        deterministic_(deterministic) {
    constant_ = deterministic;
    for (const auto& a : args_) constant_ = constant_ && a->isConstant();
  }
  std::string toString() const override;
  bool isConstant() const override { return constant_; }

 protected:
  std::string name_;
  std::vector<ExprPtr> args_;
  bool deterministic_;
  bool constant_;
};

template <typename F>
class Fn1 final : public CallExpr {
 public:
  Fn1(std::string n, DataTypePtr t, std::vector<ExprPtr> a, F f)
      : CallExpr(std::move(n), std::move(t), std::move(a), true), f_(std::move(f)) {}
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<Fn1>(name_, type(), std::move(c), f_);
  }
  Value eval(const Row& row) const override {
    Value sa;
    const Value& a = args_[0]->evalRef(row, sa);
    if (a.isNull()) return {};
    return f_(a);
  }

 private:
  F f_;
};

template <typename F>
class Fn2 final : public CallExpr {
 public:
  Fn2(std::string n, DataTypePtr t, std::vector<ExprPtr> a, F f)
      : CallExpr(std::move(n), std::move(t), std::move(a), true), f_(std::move(f)) {}
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<Fn2>(name_, type(), std::move(c), f_);
  }
  Value eval(const Row& row) const override {
    Value sa, sb;
    const Value& a = args_[0]->evalRef(row, sa);
    if (a.isNull()) return {};
    const Value& b = args_[1]->evalRef(row, sb);
    if (b.isNull()) return {};
    return f_(a, b);
  }

 private:
  F f_;
};

template <typename F>
class Fn3 final : public CallExpr {
 public:
  Fn3(std::string n, DataTypePtr t, std::vector<ExprPtr> a, F f)
      : CallExpr(std::move(n), std::move(t), std::move(a), true), f_(std::move(f)) {}
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<Fn3>(name_, type(), std::move(c), f_);
  }
  Value eval(const Row& row) const override {
    Value sa, sb, sc;
    const Value& a = args_[0]->evalRef(row, sa);
    if (a.isNull()) return {};
    const Value& b = args_[1]->evalRef(row, sb);
    if (b.isNull()) return {};
    const Value& c = args_[2]->evalRef(row, sc);
    if (c.isNull()) return {};
    return f_(a, b, c);
  }

 private:
  F f_;
};

// Full control: f(row, args) evaluates what it needs (for NULL-skipping
// functions such as coalesce and concat_ws, and for non-deterministic ones).
template <typename F>
class FnN final : public CallExpr {
 public:
  FnN(std::string n, DataTypePtr t, std::vector<ExprPtr> a, bool det, F f)
      : CallExpr(std::move(n), std::move(t), std::move(a), det), f_(std::move(f)) {}
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<FnN>(name_, type(), std::move(c), deterministic_, f_);
  }
  Value eval(const Row& row) const override { return f_(row, args_); }

 private:
  F f_;
};

template <typename F>
ExprPtr fn1(std::string name, DataTypePtr type, std::vector<ExprPtr> args, F f) {
  return std::make_shared<Fn1<F>>(std::move(name), std::move(type), std::move(args), std::move(f));
}
// Whether a call of constant arguments, one of them NULL, of a function that
// gives NULL for any NULL argument: NULL at once, as Spark's NullPropagation
// makes it, without computing another argument that would raise (ANSI mode:
// date_sub('x', NULL) is NULL). A call over columns is left as it is.
bool nullOfConstants(const std::vector<ExprPtr>& args);

template <typename F>
ExprPtr fn2(std::string name, DataTypePtr type, std::vector<ExprPtr> args, F f) {
  if (nullOfConstants(args)) return makeLiteral(Value(), type);
  return std::make_shared<Fn2<F>>(std::move(name), std::move(type), std::move(args), std::move(f));
}
template <typename F>
ExprPtr fn3(std::string name, DataTypePtr type, std::vector<ExprPtr> args, F f) {
  if (nullOfConstants(args)) return makeLiteral(Value(), type);
  return std::make_shared<Fn3<F>>(std::move(name), std::move(type), std::move(args), std::move(f));
}
template <typename F>
ExprPtr fnN(std::string name, DataTypePtr type, std::vector<ExprPtr> args, bool deterministic,
            F f) {
  return std::make_shared<FnN<F>>(std::move(name), std::move(type), std::move(args),
                                  deterministic, std::move(f));
}

// ---- YEAR-MONTH INTERVAL (year_month_interval.cpp) -------------------------

// `l op r` where one side is a YEAR-MONTH INTERVAL, as Spark computes it
// (sym is + - * /); throws 42804 for a pair Spark has no operator for.
ExprPtr makeYearMonthIntervalArith(const std::string& sym, ExprPtr l, ExprPtr r, size_t pos);
// -x and abs(x) of a YEAR-MONTH INTERVAL.
ExprPtr makeYearMonthIntervalNegate(ExprPtr e);
ExprPtr yearMonthIntervalAbs(std::vector<ExprPtr>& args);
// A cast to or from a YEAR-MONTH INTERVAL type (canCast allowed it).
ExprPtr castYearMonthInterval(ExprPtr e, const DataTypePtr& target);
// extract(field FROM x) / date_part(field, x) of a YEAR-MONTH INTERVAL x:
// YEAR (INT) or MONTH (TINYINT), `field` in upper case.
ExprPtr yearMonthIntervalField(const std::string& fn, const std::string& field, const ExprPtr& e,
                               size_t pos);
// make_ym_interval([years[, months]]).
ExprPtr buildMakeYmInterval(const std::string& name, std::vector<ExprPtr>& args, size_t pos);

// ---- the function table -----------------------------------------------------

using Builder = ExprPtr (*)(const std::string& name, std::vector<ExprPtr>& args, size_t pos);
struct FunctionDef {
  int minArgs;
  int maxArgs;  // -1: any number
  Builder build;
  // What isDeterministicFunction() (common/function_determinism.h)
  // answers: false for a function of chance, of the clock, or of who and
  // where the statement runs, registered with kNotDeterministic.
  bool deterministic = true;
};
inline constexpr bool kNotDeterministic = false;
using FunctionTable = std::unordered_map<std::string, FunctionDef>;

void registerMathFunctions(FunctionTable& t);
void registerStringFunctions(FunctionTable& t);
void registerRegexFunctions(FunctionTable& t);
void registerHashFunctions(FunctionTable& t);
void registerDatetimeFunctions(FunctionTable& t);
void registerJsonFunctions(FunctionTable& t);
void registerNestedFunctions(FunctionTable& t);
void registerConditionalFunctions(FunctionTable& t);
void registerConversionFunctions(FunctionTable& t);
void registerUrlFunctions(FunctionTable& t);
void registerCsvFunctions(FunctionTable& t);
void registerEncryptionFunctions(FunctionTable& t);
void registerNumberFormatFunctions(FunctionTable& t);
// Puts Spark's plan-time DATATYPE_MISMATCH checks in front of the builders of
// the functions they concern (spark_type_checks.cpp); called last.
void registerSparkTypeChecks(FunctionTable& t);

const FunctionTable& functionTable();

// Spark's Murmur3_x86_32 hash of a value with a seed (see hash.cpp).
int32_t sparkHash(const Value& v, int32_t seed);

}  // namespace rtsql::expr_internal
