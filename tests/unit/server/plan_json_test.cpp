// A plan's JSON (server/http/plan_json.h): a sharded copy's front says where
// its own rows go in process, so that the console draws that edge too.
#include "server/http/plan_json.h"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <string>

#include "common/expr.h"

using namespace rtsql;

namespace {

// Copy 0 of 2: stage 0 the front, stage 1 the stateful stage, stage 2 the back.
PhysicalPlan copyPlan(bool local) {
  PhysicalPlan plan;
  plan.flowName = "cnt";
  plan.sink.name = "out";
  ExchangeSpec exchange;
  exchange.topic = "x-0";
  exchange.partitions = 2;
  exchange.producers = 2;
  exchange.local = local;
  StageSpec front;
  front.id = 0;
  front.output.kind = StageOutput::Kind::Exchange;
  front.output.targetStage = local ? 1 : -1;
  front.output.keys = {makeColumnRef(0, DataType::of(TypeId::BigInt), "k")};
  front.output.exchange = exchange;
  StageSpec stateful;
  stateful.id = 1;
  stateful.inputs = 1;
  StageSpec back;
  back.id = 2;
  back.output.kind = StageOutput::Kind::Shuffle;
  back.output.targetStage = 1;
  back.output.keys = front.output.keys;
  plan.stages = {front, stateful, back};
  return plan;
}

}  // namespace

TEST_CASE("a copy's front names the stage its own rows go to; an older flow's does not") {
  simdjson::dom::parser parser;
  simdjson::dom::element plan;
  const std::string local = http::planJson(copyPlan(true));
  REQUIRE(parser.parse(local).get(plan) == simdjson::SUCCESS);
  simdjson::dom::element out = plan["stages"].at(0)["output"];
  CHECK(std::string_view(out["kind"]) == "exchange");
  CHECK(std::string_view(out["topic"]) == "x-0");
  CHECK(int64_t(out["targetStage"]) == 1);
  CHECK(int64_t(out["targetInput"]) == 0);
  CHECK(int64_t(plan["stages"].at(2)["output"]["targetStage"]) == 1);

  const std::string all = http::planJson(copyPlan(false));
  REQUIRE(parser.parse(all).get(plan) == simdjson::SUCCESS);
  CHECK(plan["stages"].at(0)["output"]["targetStage"].error() == simdjson::NO_SUCH_FIELD);
}
