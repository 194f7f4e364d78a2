// Conditional and miscellaneous functions: coalesce, ifnull/nvl, nullif, if,
// greatest, least, and the non-deterministic rand/random.
#include <atomic>
#include <random>

#include "common/functions/internal.h"

namespace rtsql::expr_internal {

namespace {

ExprPtr buildCoalesce(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  DataTypePtr t = argsCommon(name, args, 0, pos);
  return fnN(name, t, args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    for (const auto& e : a) {
      Value v = e->eval(row);
      if (!v.isNull()) return v;
    }
    return Value();
  });
}

ExprPtr buildNullif(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  DataTypePtr t = argsCommon(name, args, 0, pos);
  return fnN(name, t, args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    Value x = a[0]->eval(row);
    if (x.isNull()) return x;
    Value y = a[1]->eval(row);
    return (!y.isNull() && x.compare(y) == 0) ? Value() : x;
  });
}

ExprPtr buildIf(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBoolean(name, args, 0, pos);
  DataTypePtr t = argsCommon(name, args, 1, pos);
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

// rand([seed]): a uniform DOUBLE in [0, 1). Each node draws from its own
// counter-based sequence (an atomic counter through splitmix64), so concurrent
// tasks need no lock and a seeded rand() is reproducible.
class RandExpr final : public CallExpr {
 public:
  RandExpr(std::string name, std::vector<ExprPtr> args, uint64_t seed)
      : CallExpr(std::move(name), DataType::of(TypeId::Double), std::move(args), false), seed_(seed) {}
  Value eval(const Row&) const override {
    uint64_t n = counter_.fetch_add(1, std::memory_order_relaxed);
    uint64_t r = splitmix64(seed_ ^ splitmix64(n));
    return Value::float64(static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0));
  }

 private:
  uint64_t seed_;
  mutable std::atomic<uint64_t> counter_{0};
};

ExprPtr buildRand(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  uint64_t seed;
  if (args.empty()) {
    std::random_device rd;
    seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  } else {
    argBigInt(name, args, 0, pos);
    auto c = constantValue(args[0]);
    if (!c) throwArgError(name, args, pos, "the seed must be a constant");
    seed = c->isNull() ? 0 : static_cast<uint64_t>(c->asInt());
  }
  return std::make_shared<RandExpr>(name, args, seed);
}

}  // namespace

void registerConditionalFunctions(FunctionTable& t) {
  t["coalesce"] = {1, -1, buildCoalesce};
  t["ifnull"] = {2, 2, buildCoalesce};
  t["nvl"] = {2, 2, buildCoalesce};
  t["nullif"] = {2, 2, buildNullif};
  t["if"] = {3, 3, buildIf};
  t["iff"] = {3, 3, buildIf};
  t["greatest"] = {1, -1, buildExtreme<true>};
  t["least"] = {1, -1, buildExtreme<false>};
  t["rand"] = {0, 1, buildRand};
  t["random"] = {0, 1, buildRand};
}

}  // namespace rtsql::expr_internal
