// Broadcast hash join of a stream with a static table: inner and left outer,
// several matches per key, NULL keys on either side, a residual condition,
// compound keys and rows without any match.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/expr.h"
#include "executor/operators/broadcast_join.h"
#include "capture_operator.h"

using namespace rtsql;

namespace {

using testing::Capture;

DataTypePtr bigint() { return DataType::of(TypeId::BigInt); }
DataTypePtr integer() { return DataType::of(TypeId::Int); }
DataTypePtr str() { return DataType::of(TypeId::String); }
Value I(int64_t v) { return Value::bigint(v); }
Value S(const char* v) { return Value::string(v); }
Value N() { return Value(); }

// Stream rows: (id BIGINT, v STRING). Table rows: (k INT, name STRING).
BroadcastJoinSpec spec(bool leftOuter, ExprPtr residual = nullptr) {
  BroadcastJoinSpec s;
  s.tableSchema.columns = {{"k", integer()}, {"name", str()}};
  s.output.columns = {{"id", bigint()}, {"v", str()}, {"k", integer()}, {"name", str()}};
  s.tableRows = std::make_shared<const std::vector<Row>>(std::vector<Row>{
      {Value::integer(1), S("one")},
      {Value::integer(2), S("two")},
      {Value::integer(2), S("deux")},
      {N(), S("null")},
  });
  s.probeKeys = {makeColumnRef(0, bigint(), "id")};
  s.buildKeys = {makeColumnRef(0, integer(), "k")};
  s.leftOuter = leftOuter;
  s.residual = std::move(residual);
  return s;
}

struct Fixture {
  explicit Fixture(const BroadcastJoinSpec& s) : op(makeBroadcastJoin(s)) { op->setNext(&out); }
  void push(Row r) { op->push(r, RecordContext{}); }
  OperatorPtr op;
  Capture out;
};

}  // namespace

TEST_CASE("broadcast inner join emits one row per matching table row") {
  Fixture f(spec(false));
  CHECK_FALSE(f.op->stateful());
  f.push({I(1), S("x")});
  REQUIRE(f.out.rows.size() == 1);
  CHECK(f.out.rows[0] == Row{I(1), S("x"), Value::integer(1), S("one")});

  f.push({I(2), S("y")});  // two table rows with key 2
  REQUIRE(f.out.rows.size() == 3);
  CHECK(f.out.rows[1] == Row{I(2), S("y"), Value::integer(2), S("two")});
  CHECK(f.out.rows[2] == Row{I(2), S("y"), Value::integer(2), S("deux")});

  f.push({I(3), S("z")});  // no table row
  f.push({N(), S("w")});   // NULL matches nothing, not even the NULL-keyed table row
  CHECK(f.out.rows.size() == 3);
  CHECK(f.op->stats().rowsIn == 4);
  CHECK(f.op->stats().rowsOut == 3);
}

TEST_CASE("broadcast left join emits unmatched stream rows once with NULL table columns") {
  Fixture f(spec(true));
  f.push({I(3), S("z")});
  f.push({N(), S("w")});
  f.push({I(2), S("y")});
  REQUIRE(f.out.rows.size() == 4);
  CHECK(f.out.rows[0] == Row{I(3), S("z"), N(), N()});
  CHECK(f.out.rows[1] == Row{N(), S("w"), N(), N()});
  CHECK(f.out.rows[2] == Row{I(2), S("y"), Value::integer(2), S("two")});
  CHECK(f.out.rows[3] == Row{I(2), S("y"), Value::integer(2), S("deux")});
}

TEST_CASE("broadcast join applies the residual condition to the joined row") {
  // name <> 'deux'
  auto residual = makeCall("<>", {makeColumnRef(3, str(), "name"), makeLiteral(S("deux"), str())},
                           SqlError::npos);
  SUBCASE("inner") {
    Fixture f(spec(false, residual));
    f.push({I(2), S("y")});
    REQUIRE(f.out.rows.size() == 1);
    CHECK(f.out.rows[0] == Row{I(2), S("y"), Value::integer(2), S("two")});
  }
  SUBCASE("left: a row whose matches all fail the residual gets the NULL row") {
    // v = name: only true for stream row (1, 'one').
    auto eq = makeCall("=", {makeColumnRef(1, str(), "v"), makeColumnRef(3, str(), "name")},
                       SqlError::npos);
    Fixture f(spec(true, eq));
    f.push({I(1), S("nope")});
    f.push({I(1), S("one")});
    f.push({I(2), S("two")});
    REQUIRE(f.out.rows.size() == 3);
    CHECK(f.out.rows[0] == Row{I(1), S("nope"), N(), N()});
    CHECK(f.out.rows[1] == Row{I(1), S("one"), Value::integer(1), S("one")});
    CHECK(f.out.rows[2] == Row{I(2), S("two"), Value::integer(2), S("two")});
  }
}

TEST_CASE("broadcast join on a compound key and on an empty table") {
  BroadcastJoinSpec s = spec(false);
  s.probeKeys = {makeColumnRef(0, bigint(), "id"), makeColumnRef(1, str(), "v")};
  s.buildKeys = {makeColumnRef(0, integer(), "k"), makeColumnRef(1, str(), "name")};
  Fixture f(s);
  f.push({I(2), S("deux")});
  f.push({I(2), S("one")});
  f.push({I(1), S("one")});
  REQUIRE(f.out.rows.size() == 2);
  CHECK(f.out.rows[0] == Row{I(2), S("deux"), Value::integer(2), S("deux")});
  CHECK(f.out.rows[1] == Row{I(1), S("one"), Value::integer(1), S("one")});

  BroadcastJoinSpec empty = spec(true);
  empty.tableRows = std::make_shared<const std::vector<Row>>();
  Fixture g(empty);
  g.push({I(1), S("x")});
  REQUIRE(g.out.rows.size() == 1);
  CHECK(g.out.rows[0] == Row{I(1), S("x"), N(), N()});
}

TEST_CASE(
    "broadcast join on one string key, and on an integer key with negative and large values") {
  BroadcastJoinSpec s;
  s.tableSchema.columns = {{"code", str()}, {"n", bigint()}};
  s.output.columns = {{"code", str()}, {"code", str()}, {"n", bigint()}};
  s.tableRows = std::make_shared<const std::vector<Row>>(
      std::vector<Row>{{S("https://example.com/a/long/key"), I(1)}, {S("b"), I(2)}, {N(), I(3)}});
  s.probeKeys = {makeColumnRef(0, str(), "code")};
  s.buildKeys = {makeColumnRef(0, str(), "code")};
  Fixture f(s);
  f.push({S("https://example.com/a/long/key")});
  f.push({S("B")});  // string keys compare exactly
  f.push({N()});
  REQUIRE(f.out.rows.size() == 1);
  CHECK(f.out.rows[0] ==
        Row{S("https://example.com/a/long/key"), S("https://example.com/a/long/key"), I(1)});

  BroadcastJoinSpec ints;
  ints.tableSchema.columns = {{"k", bigint()}, {"name", str()}};
  ints.output.columns = {{"id", integer()}, {"k", bigint()}, {"name", str()}};
  ints.tableRows = std::make_shared<const std::vector<Row>>(std::vector<Row>{
      {I(-5), S("minus five")}, {I(int64_t{1} << 40), S("big")}, {I(7), S("seven")}});
  ints.probeKeys = {makeColumnRef(0, integer(), "id")};
  ints.buildKeys = {makeColumnRef(0, bigint(), "k")};
  Fixture g(ints);
  g.push({Value::integer(-5)});
  g.push({Value::integer(7)});
  g.push({Value::integer(8)});
  g.push({N()});
  REQUIRE(g.out.rows.size() == 2);
  CHECK(g.out.rows[0] == Row{Value::integer(-5), I(-5), S("minus five")});
  CHECK(g.out.rows[1] == Row{Value::integer(7), I(7), S("seven")});
}
