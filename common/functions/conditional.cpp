// Conditional and miscellaneous functions: coalesce, ifnull/nvl, nvl2, nullif,
// if, isnull, equal_null, greatest, least, typeof, and the non-deterministic
// rand/random/randn and uuid.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <random>

#include "common/ansi_mode.h"
#include "common/functions/internal.h"

namespace rtsql::expr_internal {

namespace {

// The common type of coalesce's, nvl's, nvl2's and if's values in ANSI mode,
// as Spark's: text meets a number, a BOOLEAN or a BINARY as that type (an
// integer as BIGINT, a fractional number as DOUBLE), and is cast to it only
// when its value is reached ('a' is then CAST_INVALID_INPUT). The legacy mode
// takes the other types only (argsCommon).
DataTypePtr valuesCommon(const std::string& name, std::vector<ExprPtr>& args, size_t from,
                         size_t pos) {
  if (ansiMode()) {
    DataTypePtr other;
    bool text = false;
    for (size_t i = from; i < args.size(); ++i) {
      const DataTypePtr& t = args[i]->type();
      if (t->id == TypeId::String) {
        text = true;
      } else if (!isNullType(t)) {
        auto c = other ? commonType(other, t) : t;
        if (!c) break;  // argsCommon reports the mix
        other = c;
      }
    }
    if (text && other) {
      DataTypePtr wider;
      if (other->isIntegral()) wider = DataType::of(TypeId::BigInt);
      else if (other->isNumeric()) wider = DataType::of(TypeId::Double);
      else if (other->id == TypeId::Boolean || other->id == TypeId::Binary) wider = other;
      if (wider) {
        for (size_t i = from; i < args.size(); ++i) args[i] = castTo(args[i], wider);
        return wider;
      }
    }
  }
  return argsCommon(name, args, from, pos);
}

ExprPtr buildCoalesce(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  DataTypePtr t = valuesCommon(name, args, 0, pos);
  return fnN(name, t, args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    for (const auto& e : a) {
      Value v = e->eval(row);
      if (!v.isNull()) return v;
    }
    return Value();
  });
}

// nullif(x, y): the type is x's, as Spark's (nullif(255, 0.0) is the INT 255);
// the two compare in their common type.
ExprPtr buildNullif(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  // nullif(NULL, y) is NULL of no type (void), as Spark's.
  if (isNullType(args[0]->type()) && args[0]->isConstant()) {
    argsCommon(name, args, 0, pos);
    return makeLiteral(Value(), nullType());
  }
  ExprPtr first = args[0];
  DataTypePtr t = argsCommon(name, args, 0, pos);
  if (!isNullType(first->type()) && !first->type()->equals(*t)) {
    std::vector<ExprPtr> kept{first, args[1]};
    return fnN(name, first->type(), kept, true, [t](const Row& row, const std::vector<ExprPtr>& a) {
      Value x = a[0]->eval(row);
      if (x.isNull()) return x;
      Value y = a[1]->eval(row);
      return (!y.isNull() && castValue(x, *t).compare(y) == 0) ? Value() : x;
    });
  }
  return fnN(name, t, args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    Value x = a[0]->eval(row);
    if (x.isNull()) return x;
    Value y = a[1]->eval(row);
    return (!y.isNull() && x.compare(y) == 0) ? Value() : x;
  });
}

ExprPtr buildIf(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBoolean(name, args, 0, pos);
  DataTypePtr t = valuesCommon(name, args, 1, pos);
  (void)t;
  return fnN(name, args[1]->type(), args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    Value c = a[0]->eval(row);
    return (!c.isNull() && c.asBool()) ? a[1]->eval(row) : a[2]->eval(row);
  });
}

template <bool Greatest>
ExprPtr buildExtreme(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  DataTypePtr t = argsCommon(name, args, 0, pos);
  if (t->id == TypeId::Array || t->id == TypeId::Struct)
    throwArgError(name, args, pos, "the arguments must be scalar values");
  // NULL arguments are skipped; the result is NULL only when all are NULL.
  return fnN(name, t, args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    Value best;
    for (const auto& e : a) {
      Value v = e->eval(row);
      if (v.isNull()) continue;
      if (best.isNull() || (Greatest ? v.compare(best) > 0 : v.compare(best) < 0)) best = std::move(v);
    }
    return best;
  });
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The random DOUBLEs of rand([seed]) and randn([seed]). Each node draws from
// its own counter-based sequence (an atomic counter through splitmix64), so
// concurrent tasks need no lock and a seeded call is reproducible.
class RandomSequenceExpr : public CallExpr {
 public:
  RandomSequenceExpr(std::string name, std::vector<ExprPtr> args, uint64_t seed)
      : CallExpr(std::move(name), DataType::of(TypeId::Double), std::move(args), false),
        seed_(seed) {}

 protected:
  // The number of this evaluation: 0, 1, 2, ... across all threads.
  uint64_t next() const { return counter_.fetch_add(1, std::memory_order_relaxed); }
  // The k-th 64 random bits of the sequence.
  uint64_t bits(uint64_t k) const { return splitmix64(seed_ ^ splitmix64(k)); }
  uint64_t seed() const { return seed_; }

 private:
  uint64_t seed_;
  mutable std::atomic<uint64_t> counter_{0};
};

// The seed of rand([seed]) and randn([seed]): the constant argument (NULL is
// 0), or a random one without it.
uint64_t seedArgument(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args.empty()) return randomSeed();
  argBigInt(name, args, 0, pos);
  auto c = constantValue(args[0]);
  if (!c) throwArgError(name, args, pos, "the seed must be a constant");
  return c->isNull() ? 0 : static_cast<uint64_t>(c->asInt());
}

// rand([seed]): a uniform DOUBLE in [0, 1).
class RandExpr final : public RandomSequenceExpr {
 public:
  using RandomSequenceExpr::RandomSequenceExpr;
  // The same sequence: the seed is the node's, whatever its constant child.
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<RandExpr>(name_, std::move(c), seed());
  }
  Value eval(const Row&) const override {
    return Value::float64(static_cast<double>(bits(next()) >> 11) * (1.0 / 9007199254740992.0));
  }
};

ExprPtr buildRand(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  const uint64_t seed = seedArgument(name, args, pos);
  return std::make_shared<RandExpr>(name, args, seed);
}

// nvl2(x, a, b): a when x is not NULL, else b.
ExprPtr buildNvl2(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  DataTypePtr t = valuesCommon(name, args, 1, pos);
  return fnN(name, t, args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    return a[0]->eval(row).isNull() ? a[2]->eval(row) : a[1]->eval(row);
  });
}

template <bool Negated>
ExprPtr buildIsNullFn(const std::string&, std::vector<ExprPtr>& args, size_t) {
  return makeIsNull(args[0], Negated);
}

// equal_null(a, b): a <=> b, TRUE when both are NULL.
ExprPtr buildEqualNull(const std::string&, std::vector<ExprPtr>& args, size_t pos) {
  return makeCall("<=>", {args[0], args[1]}, pos);
}

// zeroifnull(x): 0 for NULL; nullifzero(x): NULL for 0.
ExprPtr buildZeroIfNull(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  // A DECIMAL keeps its digits: coalesce widens it with the INT 0, as Spark.
  if (args[0]->type()->id != TypeId::Decimal) argNumeric(name, args, 0, pos);
  args.push_back(makeLiteral(Value::integer(0), DataType::of(TypeId::Int)));
  return buildCoalesce(name, args, pos);
}

ExprPtr buildNullIfZero(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args[0]->type()->id != TypeId::Decimal) argNumeric(name, args, 0, pos);
  args.push_back(makeLiteral(Value::integer(0), DataType::of(TypeId::Int)));
  return buildNullif(name, args, pos);
}

// The type as Spark's typeof() spells it: int, bigint, array<string>,
// struct<a:int,b:string>.
std::string sparkTypeName(const DataType& t) {
  switch (t.id) {
    case TypeId::Null:
      return "void";
    case TypeId::Boolean:
      return "boolean";
    case TypeId::Int:
      return "int";
    case TypeId::TinyInt:
      return "tinyint";
    case TypeId::SmallInt:
      return "smallint";
    case TypeId::Float:
      return "float";
    case TypeId::BigInt:
      return "bigint";
    case TypeId::Double:
      return "double";
    case TypeId::String:
      return "string";
    case TypeId::Binary:
      return "binary";
    case TypeId::Timestamp:
      return "timestamp";
    case TypeId::Interval:
      return "interval day to second";
    case TypeId::YearMonthInterval:
      return t.ymStart == t.ymEnd ? (t.ymStart == YmField::Year ? "interval year" : "interval month")
                                  : "interval year to month";
    case TypeId::Decimal:
      return "decimal(" + std::to_string(t.precision) + "," + std::to_string(t.scale) + ")";
    case TypeId::Date:
      return "date";
    case TypeId::TimestampNtz:
      return "timestamp_ntz";
    case TypeId::Array:
      return "array<" + (t.element ? sparkTypeName(*t.element) : std::string("void")) + ">";
    case TypeId::Struct: {
      std::string s = "struct<";
      for (size_t i = 0; i < t.fields.size(); ++i) {
        if (i) s += ',';
        s += t.fields[i].name + ':' + sparkTypeName(*t.fields[i].type);
      }
      return s + '>';
    }
    case TypeId::Map:
      return "map<" + (t.key ? sparkTypeName(*t.key) : std::string("void")) + ',' +
             (t.value ? sparkTypeName(*t.value) : std::string("void")) + '>';
  }
  return "void";
}

// typeof(x): known when the statement is planned, so it is a constant.
ExprPtr buildTypeof(const std::string&, std::vector<ExprPtr>& args, size_t) {
  return makeLiteral(Value::string(sparkTypeName(*args[0]->type())), DataType::of(TypeId::String));
}

// uuid(): a random (version 4) UUID per call; non-deterministic, as in Spark.
ExprPtr buildUuid(const std::string& name, std::vector<ExprPtr>& args, size_t) {
  return fnN(
      name, DataType::of(TypeId::String), args, false, [](const Row&, const std::vector<ExprPtr>&) {
        thread_local std::mt19937_64 gen{randomSeed()};
        uint64_t hi = gen(), lo = gen();
        hi = (hi & ~0xF000ULL) | 0x4000ULL;                  // version 4
        lo = (lo & ~(0xC000ULL << 48)) | (0x8000ULL << 48);  // IETF variant
        char buf[37];
        std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx",
                      static_cast<unsigned>(hi >> 32), static_cast<unsigned>((hi >> 16) & 0xFFFF),
                      static_cast<unsigned>(hi & 0xFFFF), static_cast<unsigned>(lo >> 48),
                      static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFULL));
        return Value::string(buf);
      });
}

// randn([seed]): a standard normal DOUBLE (Box-Muller over two rand() draws).
class RandnExpr final : public RandomSequenceExpr {
 public:
  using RandomSequenceExpr::RandomSequenceExpr;
  // The same sequence: the seed is the node's, whatever its constant child.
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<RandnExpr>(name_, std::move(c), seed());
  }
  Value eval(const Row&) const override {
    const uint64_t n = next();
    double u1 = (static_cast<double>(bits(2 * n) >> 11) + 1.0) * (1.0 / 9007199254740993.0);
    double u2 = static_cast<double>(bits(2 * n + 1) >> 11) * (1.0 / 9007199254740992.0);
    return Value::float64(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2));
  }
};

ExprPtr buildRandn(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  const uint64_t seed = seedArgument(name, args, pos);
  return std::make_shared<RandnExpr>(name, args, seed);
}

// raise_error(msg) fails the evaluation with SQLSTATE P0001 (as Spark's
// USER_RAISED_EXCEPTION); assert_true(cond[, msg]) is NULL when cond is TRUE
// and raises otherwise. In a flow, the error stops the flow.
[[noreturn]] void raise(const std::string& msg) {
  throw SqlError("P0001", msg);
}

ExprPtr buildRaiseError(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fnN(name, nullType(), args, false,
             [](const Row& row, const std::vector<ExprPtr>& a) -> Value {
               Value m = a[0]->eval(row);
               raise(m.isNull() ? std::string("null") : m.asString());
             });
}

ExprPtr buildAssertTrue(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  std::string text = args[0]->toString();
  argBoolean(name, args, 0, pos);
  if (args.size() == 2) argString(name, args, 1, pos);
  return fnN(name, nullType(), args, false,
             [text](const Row& row, const std::vector<ExprPtr>& a) -> Value {
               Value c = a[0]->eval(row);
               if (!c.isNull() && c.asBool()) return Value();
               if (a.size() == 2) {
                 Value m = a[1]->eval(row);
                 raise(m.isNull() ? std::string("null") : m.asString());
               }
               raise("'" + text + "' is not true!");
             });
}

}  // namespace

uint64_t randomSeed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

void registerConditionalFunctions(FunctionTable& t) {
  t["coalesce"] = {1, -1, buildCoalesce};
  t["ifnull"] = {2, 2, buildCoalesce};
  t["nvl"] = {2, 2, buildCoalesce};
  t["nullif"] = {2, 2, buildNullif};
  t["if"] = {3, 3, buildIf};
  t["iff"] = {3, 3, buildIf};
  t["greatest"] = {1, -1, buildExtreme<true>};
  t["least"] = {1, -1, buildExtreme<false>};
  t["rand"] = {0, 1, buildRand, kNotDeterministic};
  t["random"] = {0, 1, buildRand, kNotDeterministic};
  t["nvl2"] = {3, 3, buildNvl2};
  t["isnull"] = {1, 1, buildIsNullFn<false>};
  t["isnotnull"] = {1, 1, buildIsNullFn<true>};
  t["equal_null"] = {2, 2, buildEqualNull};
  t["zeroifnull"] = {1, 1, buildZeroIfNull};
  t["nullifzero"] = {1, 1, buildNullIfZero};
  t["typeof"] = {1, 1, buildTypeof};
  t["uuid"] = {0, 0, buildUuid, kNotDeterministic};
  t["randn"] = {0, 1, buildRandn, kNotDeterministic};
  t["raise_error"] = {1, 1, buildRaiseError};
  t["assert_true"] = {1, 2, buildAssertTrue};
}

}  // namespace rtsql::expr_internal
