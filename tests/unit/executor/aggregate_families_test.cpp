// Spark's aggregate families (executor/operators/aggregates/): each
// accumulator adds, takes retractions where it can, merges, and round-trips
// through its state encoding; the results follow Spark's NULL and empty-group
// rules; collect_list refuses to grow past the cap on one value.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/expr.h"
#include "executor/operators/aggregate_common.h"
#include "executor/operators/aggregates/family.h"

using namespace rtsql;

namespace {

AggregateCall callOf(AggregateFunction f, DataTypePtr argType) {
  AggregateCall c;
  c.function = f;
  c.arg = makeColumnRef(0, std::move(argType), "x");
  return c;
}

DataTypePtr T(TypeId id) {
  return DataType::of(id);
}

Value B(bool b) {
  return Value::boolean(b);
}
Value I(int64_t v) {
  return Value::bigint(v);
}
Value D(double d) {
  return Value::float64(d);
}
Value S(const char* s) {
  return Value::string(s);
}
Value Row2(Value x, Value ord) {
  return Value::structure({std::move(x), std::move(ord)});
}
Value Row1(Value x) {
  return Value::structure({std::move(x)});
}

// Encodes `a`, decodes it into a fresh accumulator and checks that the
// decoded one encodes to the same bytes and consumed them all.
Accumulator roundTrip(const AggregateFamily& f, const Accumulator& a) {
  std::string bytes;
  f.encode(bytes, a);
  std::string_view in = bytes;
  Accumulator back;
  f.decode(in, back);
  CHECK(in.empty());
  std::string again;
  f.encode(again, back);
  CHECK(again == bytes);
  return back;
}

}  // namespace

TEST_CASE("count_if counts TRUE, takes retractions, merges and round-trips") {
  auto f = makeAggregateFamily(callOf(AggregateFunction::CountIf, T(TypeId::Boolean)));
  REQUIRE(f);
  Accumulator a;
  CHECK(f->result(a) == I(0));  // no row: 0, as Spark
  for (bool b : {true, false, true, true}) f->add(a, B(b));
  CHECK(f->result(a) == I(3));
  f->retract(a, B(true));
  f->retract(a, B(false));
  CHECK(f->result(a) == I(2));
  Accumulator other;
  f->add(other, B(true));
  f->merge(a, other);
  CHECK(f->result(roundTrip(*f, a)) == I(3));
}

TEST_CASE("bool_and and bool_or are NULL without a value and follow retractions") {
  auto andF = makeAggregateFamily(callOf(AggregateFunction::BoolAnd, T(TypeId::Boolean)));
  auto orF = makeAggregateFamily(callOf(AggregateFunction::BoolOr, T(TypeId::Boolean)));
  Accumulator a, o;
  CHECK(andF->result(a).isNull());
  CHECK(orF->result(o).isNull());
  for (bool b : {true, false}) {
    andF->add(a, B(b));
    orF->add(o, B(!b));
  }
  CHECK(andF->result(a) == B(false));
  CHECK(orF->result(o) == B(true));
  // The FALSE leaves bool_and, the TRUE leaves bool_or.
  andF->retract(a, B(false));
  orF->retract(o, B(true));
  CHECK(andF->result(roundTrip(*andF, a)) == B(true));
  CHECK(orF->result(roundTrip(*orF, o)) == B(false));
  andF->retract(a, B(true));
  CHECK(andF->result(a).isNull());
  Accumulator m;
  andF->add(m, B(false));
  andF->merge(m, o);  // o: one FALSE
  CHECK(andF->result(m) == B(false));
}

TEST_CASE("stddev and variance: Spark's Welford update, NULL for too few rows, retraction") {
  auto samp = makeAggregateFamily(callOf(AggregateFunction::StddevSamp, T(TypeId::Double)));
  auto pop = makeAggregateFamily(callOf(AggregateFunction::VarPop, T(TypeId::Double)));
  auto vs = makeAggregateFamily(callOf(AggregateFunction::VarSamp, T(TypeId::Double)));
  Accumulator a;
  CHECK(samp->result(a).isNull());
  CHECK(pop->result(a).isNull());
  samp->add(a, D(2.0));
  CHECK(samp->result(a).isNull());  // one row: the sample forms are NULL
  CHECK(pop->result(a) == D(0.0));
  samp->add(a, I(1));  // integers read as DOUBLE
  samp->add(a, D(4.0));
  // The exact doubles of Spark's update on 2, 1, 4 in this order.
  CHECK(samp->result(a) == D(1.5275252316519465));
  CHECK(pop->result(a) == D(1.5555555555555554));
  CHECK(vs->result(roundTrip(*vs, a)) == D(2.333333333333333));
  // Taking 4 out leaves 2 and 1: variance 0.5 (within rounding).
  samp->retract(a, D(4.0));
  CHECK(std::abs(vs->result(a).asDouble() - 0.5) < 1e-12);
  samp->retract(a, D(2.0));
  samp->retract(a, D(1.0));
  CHECK(pop->result(a).isNull());
  CHECK(a.m2 == 0.0);  // an emptied group keeps no residue
  // Merging {1, 2} with {3, 5}: the variance of 1, 2, 3, 5.
  Accumulator l, r;
  samp->add(l, D(1));
  samp->add(l, D(2));
  samp->add(r, D(3));
  samp->add(r, D(5));
  samp->merge(l, r);
  CHECK(std::abs(pop->result(l).asDouble() - 2.1875) < 1e-12);
}

TEST_CASE("max_by and min_by skip NULL orderings, keep the last of ties, answer a NULL x") {
  auto t = DataType::structOf({{"x", T(TypeId::String)}, {"o", T(TypeId::BigInt)}});
  auto maxBy = makeAggregateFamily(callOf(AggregateFunction::MaxBy, t));
  auto minBy = makeAggregateFamily(callOf(AggregateFunction::MinBy, t));
  Accumulator mx, mn;
  CHECK(maxBy->result(mx).isNull());
  for (const Value& v : {Row2(S("a"), I(3)), Row2(S("b"), I(5)), Row2(Value(), I(5)),
                         Row2(S("c"), Value()), Row2(S("d"), I(1)), Row2(S("e"), I(1))}) {
    maxBy->add(mx, v);
    minBy->add(mn, v);
  }
  CHECK(maxBy->result(roundTrip(*maxBy, mx)).isNull());  // the last row with o = 5
  CHECK(minBy->result(roundTrip(*minBy, mn)) == S("e"));
  Accumulator other;
  maxBy->add(other, Row2(S("z"), I(9)));
  maxBy->merge(mx, other);
  CHECK(maxBy->result(mx) == S("z"));
  CHECK_THROWS_AS(maxBy->retract(mx, Row2(S("z"), I(9))), InternalError);
}

TEST_CASE("first and last, with and without ignoreNulls") {
  auto t = DataType::structOf({{"x", T(TypeId::BigInt)}});
  AggregateCall c = callOf(AggregateFunction::First, t);
  auto first = makeAggregateFamily(c);
  c.ignoreNulls = true;
  auto firstIgnoring = makeAggregateFamily(c);
  c.function = AggregateFunction::Last;
  auto lastIgnoring = makeAggregateFamily(c);
  c.ignoreNulls = false;
  auto last = makeAggregateFamily(c);
  Accumulator f, fi, l, li;
  CHECK(first->result(f).isNull());
  for (const Value& v : {Row1(Value()), Row1(I(1)), Row1(I(2)), Row1(Value())}) {
    first->add(f, v);
    firstIgnoring->add(fi, v);
    last->add(l, v);
    lastIgnoring->add(li, v);
  }
  CHECK(first->result(roundTrip(*first, f)).isNull());
  CHECK(firstIgnoring->result(roundTrip(*firstIgnoring, fi)) == I(1));
  CHECK(last->result(roundTrip(*last, l)).isNull());
  CHECK(lastIgnoring->result(roundTrip(*lastIgnoring, li)) == I(2));
  Accumulator later;
  last->add(later, Row1(I(7)));
  last->merge(l, later);
  CHECK(last->result(l) == I(7));
  first->merge(f, later);
  CHECK(first->result(f).isNull());  // the first row stays first
}

TEST_CASE("collect_list, collect_set and string_agg keep values and take retractions") {
  auto list = makeAggregateFamily(callOf(AggregateFunction::CollectList, T(TypeId::BigInt)));
  auto set = makeAggregateFamily(callOf(AggregateFunction::CollectSet, T(TypeId::BigInt)));
  AggregateCall sc = callOf(AggregateFunction::StringAgg, T(TypeId::String));
  sc.separator = ", ";
  auto agg = makeAggregateFamily(sc);
  Accumulator l, s, g;
  CHECK(list->result(l) == Value::array({}));
  CHECK(set->result(s) == Value::array({}));
  CHECK(agg->result(g).isNull());
  for (int64_t v : {3, 1, 3, 2}) {
    list->add(l, I(v));
    set->add(s, I(v));
  }
  for (const char* v : {"x", "y", "x"}) agg->add(g, S(v));
  CHECK(list->result(l) == Value::array({I(3), I(1), I(3), I(2)}));
  CHECK(set->result(s) == Value::array({I(1), I(2), I(3)}));
  CHECK(agg->result(g) == S("x, y, x"));
  // One 3 leaves: the list loses its last 3, the set keeps 3 (one row left).
  list->retract(l, I(3));
  set->retract(s, I(3));
  agg->retract(g, S("x"));
  CHECK(list->result(roundTrip(*list, l)) == Value::array({I(3), I(1), I(2)}));
  CHECK(set->result(roundTrip(*set, s)) == Value::array({I(1), I(2), I(3)}));
  CHECK(agg->result(roundTrip(*agg, g)) == S("x, y"));
  set->retract(s, I(3));
  CHECK(set->result(s) == Value::array({I(1), I(2)}));
  Accumulator more;
  set->add(more, I(0));
  set->add(more, I(2));
  set->merge(s, more);
  CHECK(set->result(s) == Value::array({I(0), I(1), I(2)}));
  list->merge(l, more);  // a set's accumulator holds its values the same way
  CHECK(list->result(l) == Value::array({I(3), I(1), I(2), I(0), I(2)}));
}

TEST_CASE("collect_list fails the row that would pass the cap on one value") {
  auto list = makeAggregateFamily(callOf(AggregateFunction::CollectList, T(TypeId::String)));
  Accumulator a;
  const Value big = Value::string(std::string(size_t{20} << 20, 'x'));  // 20 MiB
  list->add(a, big);
  list->add(a, big);
  list->add(a, big);
  try {
    list->add(a, big);
    FAIL("a fourth 20 MiB value was kept");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == std::string("54000"));
    CHECK(std::string(e.what()).find("collect_list()") != std::string::npos);
  }
  CHECK(a.items.size() == 3);  // the refused row changed nothing
}

TEST_CASE("approx_count_distinct: Spark's HyperLogLog++ estimate, merge and state") {
  AggregateCall c = callOf(AggregateFunction::ApproxCountDistinct, T(TypeId::BigInt));
  CHECK(hyperLogLogPrecision(0.05) == 9);
  CHECK(hyperLogLogPrecision(0.39) == 4);
  auto hll = makeAggregateFamily(c);
  Accumulator all, low, high;
  CHECK(hll->result(all) == I(0));
  for (int64_t v = 0; v < 3; ++v) hll->add(all, I(v));
  hll->add(all, I(1));  // a repeated value changes nothing
  CHECK(hll->result(all) == I(3));  // linear counting is exact this small
  all = Accumulator();
  for (int64_t v = 0; v < 20000; ++v) {
    hll->add(all, I(v));
    hll->add(v % 2 ? low : high, I(v));
  }
  const int64_t estimate = hll->result(all).asInt();
  CHECK(std::abs(estimate - 20000) < 20000 * 3 * 0.05);  // within three standard errors
  hll->merge(low, high);
  CHECK(low.sketch == all.sketch);  // registers merge by their maximum
  CHECK(hll->result(roundTrip(*hll, all)) == I(estimate));
  CHECK(all.sketch.size() == 512);
}

TEST_CASE("percentile and percentile_approx: ranks, interpolation, retractions, merge and state") {
  AggregateCall exact = callOf(AggregateFunction::Percentile, T(TypeId::BigInt));
  exact.percentages = {0.5};
  exact.resultType = T(TypeId::Double);
  AggregateCall many = exact;
  many.percentages = {0.0, 0.25, 1.0};
  many.percentagesArray = true;
  many.resultType = DataType::arrayOf(T(TypeId::Double));
  AggregateCall approx = callOf(AggregateFunction::PercentileApprox, T(TypeId::BigInt));
  approx.percentages = {0.5};
  approx.resultType = T(TypeId::BigInt);
  auto p = makeAggregateFamily(exact);
  auto ps = makeAggregateFamily(many);
  auto pa = makeAggregateFamily(approx);
  Accumulator a, b, c;
  CHECK(p->result(a).isNull());
  CHECK(pa->result(c).isNull());
  for (int64_t v : {4, 1, 3, 2, 3}) {
    p->add(a, I(v));
    ps->add(b, I(v));
    pa->add(c, I(v));
  }
  // Sorted 1, 2, 3, 3, 4: the median at position 2 is 3; 0.25 at 1 is 2;
  // percentile_approx's rank ceil(2.5) = 3 holds 3.
  CHECK(p->result(a) == D(3.0));
  CHECK(ps->result(b) == Value::array({D(1.0), D(2.0), D(4.0)}));
  CHECK(pa->result(c) == I(3));
  CHECK(a.items.size() == 4);  // the two 3s are one value counted twice
  // One 3 and the 4 leave: 1, 2, 3, whose median is 2; a value never added
  // changes nothing.
  p->retract(a, I(3));
  p->retract(a, I(4));
  p->retract(a, I(99));
  CHECK(p->result(roundTrip(*p, a)) == D(2.0));
  CHECK(a.count == 3);
  // 1, 2, 3, 7: position 1.5, between 2 and 3.
  Accumulator more;
  p->add(more, I(7));
  p->merge(a, more);
  CHECK(p->result(a) == D(2.5));
  // Everything retracted: NULL again.
  for (int64_t v : {1, 2, 3, 7}) p->retract(a, I(v));
  CHECK(p->result(a).isNull());
  CHECK(a.items.empty());
}

TEST_CASE("percentile_approx answers as Spark's quantile summary of the group") {
  // 1..200 at accuracy 100 (Spark: percentile_approx(id, array(0.25, 0.5,
  // 0.9, 0.02), 100) over range(1, 201)): the summary merges rows, so the
  // answers are within 1% of the rank but not the rank's own values.
  AggregateCall c = callOf(AggregateFunction::PercentileApprox, T(TypeId::BigInt));
  c.percentages = {0.25, 0.5, 0.9, 0.02};
  c.percentagesArray = true;
  c.accuracy = 100;
  c.resultType = DataType::arrayOf(T(TypeId::BigInt));
  auto pa = makeAggregateFamily(c);
  Accumulator a;
  for (int64_t v = 200; v >= 1; --v) pa->add(a, I(v));
  CHECK(pa->result(a) == Value::array({I(49), I(99), I(178), I(4)}));
  // The default accuracy keeps every row this small: the rank's own values.
  c.accuracy = 10000;
  auto exact = makeAggregateFamily(c);
  CHECK(exact->result(a) == Value::array({I(50), I(100), I(180), I(4)}));
  // A value repeated: 300 rows of 0..6 at accuracy 50.
  AggregateCall r = callOf(AggregateFunction::PercentileApprox, T(TypeId::BigInt));
  r.percentages = {0.5, 0.1};
  r.percentagesArray = true;
  r.accuracy = 50;
  auto repeated = makeAggregateFamily(r);
  Accumulator b;
  for (int64_t v = 0; v < 300; ++v) repeated->add(b, I(v % 7));
  CHECK(repeated->result(b) == Value::array({I(3), I(0)}));
}

TEST_CASE("the original aggregates have no family: their state bytes are unchanged") {
  for (AggregateFunction f : {AggregateFunction::CountStar, AggregateFunction::Count,
                              AggregateFunction::Sum, AggregateFunction::Min,
                              AggregateFunction::Max, AggregateFunction::Avg}) {
    CHECK_FALSE(makeAggregateFamily(callOf(f, T(TypeId::BigInt))));
  }
}
