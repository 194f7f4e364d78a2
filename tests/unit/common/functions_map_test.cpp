// The MAP type's functions (common/functions/map_funcs.cpp) and the
// higher-order functions over maps: values, Spark's key rules (NULL and
// duplicate keys raise), the text and JSON of a map, and the refusals.
#include <doctest/doctest.h>

#include "common/json.h"
#include "common/lambda.h"
#include "expr_test_util.h"

using namespace rtsql;
using namespace rtsql::test;

namespace {

ExprPtr abMap() { return makeCall("map", {litS("a"), litI(1), litS("b"), litI(2)}, 0); }

}  // namespace

TEST_CASE("map: construction, text, type and lookup") {
  ExprPtr m = abMap();
  CHECK(m->type()->toString() == "MAP<STRING, INT>");
  Value v = evalAll(m, {});
  CHECK(v.type() == TypeId::Map);
  CHECK(v.toString() == "{a -> 1, b -> 2}");
  CHECK(call("element_at", {abMap(), litS("b")}).asInt() == 2);
  CHECK(call("element_at", {abMap(), litS("z")}).isNull());
  CHECK(evalAll(makeSubscript(abMap(), litS("a"), 0), {}).asInt() == 1);
  CHECK(call("size", {abMap()}).asInt() == 2);
  CHECK(call("cardinality", {makeCall("map", {}, 0)}).asInt() == 0);
  CHECK(call("map_keys", {abMap()}).toString() == "[a, b]");
  CHECK(call("map_values", {abMap()}).toString() == "[1, 2]");
  CHECK(call("map_entries", {abMap()}).toString() == "[{a, 1}, {b, 2}]");
  CHECK(call("map_contains_key", {abMap(), litS("a")}).asBool());
  CHECK_FALSE(call("map_contains_key", {abMap(), litS("c")}).asBool());
  CHECK(call("map_concat", {abMap(), makeCall("map", {litS("c"), litI(3)}, 0)}).toString() ==
        "{a -> 1, b -> 2, c -> 3}");
  CHECK(call("str_to_map", {litS("a:1,b")}).toString() == "{a -> 1, b -> null}");
  CHECK(call("str_to_map", {litS("x=1&y=2"), litS("&"), litS("=")}).toString() == "{x -> 1, y -> 2}");
  CHECK(call("to_json", {abMap()}).asString() == R"({"a":1,"b":2})");
  CHECK(call("map_from_arrays", {makeCall("array", {litS("k")}, 0), makeCall("array", {litD(1.5)}, 0)})
            .toString() == "{k -> 1.5}");
}

TEST_CASE("map: a NULL or repeated key raises, as Spark's default dedup policy") {
  CHECK(sqlErrorOf([] { call("map", {nulOf(TypeId::String), litI(1)}); }).sqlstate() ==
        std::string("2200E"));
  CHECK(sqlErrorOf([] { call("map", {litS("a"), litI(1), litS("a"), litI(2)}); }).sqlstate() ==
        std::string("23505"));
  CHECK(sqlErrorOf([] { call("map_concat", {abMap(), abMap()}); }).sqlstate() ==
        std::string("23505"));
  CHECK(sqlErrorOf([] { call("str_to_map", {litS("a:1,a:2")}); }).sqlstate() ==
        std::string("23505"));
  CHECK(sqlErrorOf([] {
          call("map_from_arrays",
               {makeCall("array", {litS("a"), litS("b")}, 0), makeCall("array", {litI(1)}, 0)});
        }).sqlstate() == std::string("22023"));
}

TEST_CASE("map: no comparison, and arguments that are no map are 42804") {
  CHECK(sqlErrorOf([] { makeCall("=", {abMap(), abMap()}, 0); }).sqlstate() ==
        std::string("42804"));
  CHECK(sqlErrorOf([] { makeCall("map_keys", {litI(1)}, 0); }).sqlstate() == std::string("42804"));
  CHECK(sqlErrorOf([] { makeCall("map", {litS("a")}, 0); }).sqlstate() == std::string("42804"));
  CHECK(sqlErrorOf([] { makeCall("str_to_map", {litS("a.b"), litS(".")}, 0); }).sqlstate() ==
        std::string("0A000"));
  // An untyped NULL where Spark wants a typed one, as Spark refuses it.
  CHECK(sqlErrorOf([] { makeCall("map_concat", {abMap(), nul()}, 0); }).sqlstate() ==
        std::string("42804"));
  CHECK(sqlErrorOf([] { makeCall("map_contains_key", {abMap(), nul()}, 0); }).sqlstate() ==
        std::string("42804"));
  CHECK(call("element_at", {abMap(), nul()}).isNull());
}

TEST_CASE("map: CAST to other key and value types, and JSON both ways") {
  auto t = DataType::mapOf(T(TypeId::Int), T(TypeId::BigInt));
  Value v = evalAll(makeCast(makeCall("map", {litS("1"), litS("2")}, 0), t, 0), {});
  CHECK(v.toString() == "{1 -> 2}");
  CHECK(v.asList()[0].type() == TypeId::Int);
  CHECK(v.asList()[1].type() == TypeId::BigInt);
  Value parsed = call("from_json", {litS(R"({"a":1,"b":null})"), litS("MAP<STRING, INT>")});
  CHECK(parsed.toString() == "{a -> 1, b -> null}");
}

TEST_CASE("map: higher-order functions over maps") {
  auto kv = [](TypeId k, TypeId v) {
    return std::vector<ExprPtr>{makeLambdaVariable(0, T(k), "k"), makeLambdaVariable(1, T(v), "v")};
  };
  auto p = kv(TypeId::String, TypeId::Int);
  Value f = call("map_filter", {abMap(), makeLambda({0, 1}, {"k", "v"}, makeCall(">", {p[1], litI(1)}, 0))});
  CHECK(f.toString() == "{b -> 2}");
  Value tv = call("transform_values",
                  {abMap(), makeLambda({0, 1}, {"k", "v"}, makeCall("*", {p[1], litI(10)}, 0))});
  CHECK(tv.toString() == "{a -> 10, b -> 20}");
  Value tk = call("transform_keys", {abMap(), makeLambda({0, 1}, {"k", "v"}, makeCall("upper", {p[0]}, 0))});
  CHECK(tk.toString() == "{A -> 1, B -> 2}");
  CHECK(sqlErrorOf([&] {
          call("transform_keys", {abMap(), makeLambda({0, 1}, {"k", "v"}, litS("same"))});
        }).sqlstate() == std::string("23505"));
  ExprPtr k = makeLambdaVariable(0, T(TypeId::String), "k");
  ExprPtr x = makeLambdaVariable(1, T(TypeId::Int), "x");
  ExprPtr y = makeLambdaVariable(2, T(TypeId::Int), "y");
  ExprPtr other = makeCall("map", {litS("b"), litI(20), litS("c"), litI(30)}, 0);
  Value z = call("map_zip_with",
                 {abMap(), other,
                  makeLambda({0, 1, 2}, {"k", "x", "y"},
                             makeCall("+", {makeCall("coalesce", {x, litI(0)}, 0),
                                            makeCall("coalesce", {y, litI(0)}, 0)},
                                      0))});
  CHECK(z.toString() == "{a -> 1, b -> 22, c -> 30}");
}
