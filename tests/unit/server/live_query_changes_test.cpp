// How a live query shows its rows (server/live_query.cpp): a query that
// retracts rows gets a first column "op" with each change's kind, any other
// query its own columns, as before.
#include <doctest/doctest.h>

#include "server/live_query.h"

using namespace rtsql;

namespace {

std::vector<std::string> names(const PhysicalPlan& plan) {
  std::vector<std::string> out;
  for (const ResultColumn& c : liveQueryColumns(plan)) out.push_back(c.name);
  return out;
}

}  // namespace

TEST_CASE("a live query's columns: op first only when its changelog retracts") {
  PhysicalPlan plan;
  plan.sink.input.columns.push_back({"user_id", DataType::of(TypeId::String), false});
  plan.sink.input.columns.push_back({"n", DataType::of(TypeId::BigInt), false});
  plan.sink.input.columns.push_back({"__hidden", DataType::of(TypeId::BigInt), true});
  plan.output.mode = ChangelogMode::Append;
  CHECK(names(plan) == std::vector<std::string>{"user_id", "n"});
  plan.output.mode = ChangelogMode::Updates;
  CHECK(names(plan) == std::vector<std::string>{"user_id", "n"});
  plan.output.mode = ChangelogMode::Retract;
  CHECK(names(plan) == std::vector<std::string>{"op", "user_id", "n"});
  CHECK(liveQueryColumns(plan)[0].typeOid == liveQueryColumns(plan)[1].typeOid);  // text, as STRING
}
