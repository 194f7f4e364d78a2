#include "executor/metrics/cluster_progress_json.h"

#include <doctest/doctest.h>
#include <simdjson.h>

#include "common/json.h"
#include "executor/metrics/histogram.h"
#include "executor/metrics/recent_latency.h"

using namespace rtsql;

namespace {

// A node's progress JSON as FlowRuntime::progressJson writes it, reduced to
// the fields the merge reads.
std::string progressOf(int64_t in, double rate, int64_t out, const std::string& partitions) {
  return "{\"id\":\"x\",\"name\":\"f\",\"batchId\":3,\"live\":true,\"numInputRows\":" +
         std::to_string(in) + ",\"inputRowsPerSecond\":" + std::to_string(rate) +
         ",\"processedRowsPerSecond\":" + std::to_string(rate) +
         ",\"eventTime\":{\"watermark\":\"2026-12-03T10:00:00.000Z\"}"
         ",\"sources\":[{\"description\":\"k\",\"endOffset\":{\"t\":{" +
         partitions +
         "}}}],\"sink\":{\"description\":\"s\",\"numOutputRows\":" + std::to_string(out) + "}}";
}

NodeProgress node(const std::string& name, int64_t index, const LatencyHistogram& e2e,
                  std::string progress) {
  NodeProgress p;
  p.node = name;
  p.flow = "f";
  p.reportedMicros = 1'000'000'000;
  p.progressJson = std::move(progress);
  p.recentIndex = index;
  p.recentE2e = e2e.toText();
  p.recentProcessing = e2e.toText();
  return p;
}

}  // namespace

TEST_CASE("a node's published progress decodes to what it was") {
  LatencyHistogram h;
  h.record(1500);
  h.record(90000);
  NodeProgress p = node("n-1", 42, h, progressOf(10, 2.5, 7, "\"0\":5,\"3\":9"));
  std::optional<NodeProgress> back = decodeNodeProgress(encodeNodeProgress(p));
  REQUIRE(back);
  CHECK(back->node == "n-1");
  CHECK(back->flow == "f");
  CHECK(back->reportedMicros == p.reportedMicros);
  CHECK(back->recentIndex == 42);
  CHECK(back->recentE2e == p.recentE2e);
  CHECK(back->recentProcessing == p.recentProcessing);
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  REQUIRE(parser.parse(back->progressJson).get(e) == simdjson::SUCCESS);
  CHECK(int64_t(e["numInputRows"]) == 10);

  for (const char* bad :
       {"", "{", "[]", "{\"node\":\"a\"}",
        // Each of these lacks one thing: a node's name, a number, a named progress.
        "{\"node\":\"\",\"flow\":\"f\",\"reportedMicros\":1,\"recentIndex\":1,"
        "\"recentE2e\":\"\",\"recentProcessing\":\"\",\"progress\":{\"name\":\"f\"}}",
        "{\"node\":\"a\",\"flow\":\"f\",\"reportedMicros\":\"1\",\"recentIndex\":1,"
        "\"recentE2e\":\"\",\"recentProcessing\":\"\",\"progress\":{\"name\":\"f\"}}",
        "{\"node\":\"a\",\"flow\":\"f\",\"reportedMicros\":1,\"recentIndex\":1,"
        "\"recentE2e\":\"\",\"recentProcessing\":\"\",\"progress\":{}}"}) {
    CHECK_MESSAGE(!decodeNodeProgress(bad), bad);
  }
  CHECK(decodeNodeProgress(
      "{\"node\":\"a\",\"flow\":\"f\",\"reportedMicros\":1,\"recentIndex\":1,"
      "\"recentE2e\":\"\",\"recentProcessing\":\"\",\"progress\":{\"name\":\"f\"}}"));
}

TEST_CASE("the cluster's progress sums the nodes and merges their latencies over one interval") {
  // Node a's rows all took 1 ms, node b's 100 ms, three times as many: the
  // merged median is b's, and the merged P0 a's.
  LatencyHistogram fast, slow, stale;
  for (int i = 0; i < 100; ++i) fast.record(1000);
  for (int i = 0; i < 300; ++i) slow.record(100000);
  for (int i = 0; i < 1000; ++i) stale.record(5000000);
  std::vector<NodeProgress> nodes = {
      node("a", 7, fast, progressOf(100, 20.0, 100, "\"0\":50,\"2\":50")),
      node("b", 7, slow, progressOf(300, 60.0, 300, "\"1\":300")),
      // A node that reported the interval before: summed, but not merged.
      node("c", 6, stale, progressOf(5, 1.0, 5, "\"3\":5")),
  };
  std::string json = clusterProgressJson(nodes, "a", 1'000'000'000 + 2'500'000);
  simdjson::dom::parser parser;
  simdjson::dom::element c;
  REQUIRE(parser.parse(json).get(c) == simdjson::SUCCESS);
  CHECK(int64_t(c["numInputRows"]) == 405);
  CHECK(double(c["inputRowsPerSecond"]) == doctest::Approx(81.0));
  CHECK(int64_t(c["numOutputRows"]) == 405);

  simdjson::dom::array list = c["nodes"];
  REQUIRE(list.size() == 3);
  simdjson::dom::element a = list.at(0);
  CHECK(std::string_view(a["node"]) == "a");
  CHECK(std::string_view(a["flow"]) == "f");
  CHECK(bool(a["here"]));
  CHECK(int64_t(a["ageMs"]) == 2500);
  CHECK(int64_t(a["numInputRows"]) == 100);
  simdjson::dom::array aParts = a["partitions"]["t"];
  REQUIRE(aParts.size() == 2);
  CHECK(int64_t(aParts.at(0)) == 0);
  CHECK(int64_t(aParts.at(1)) == 2);
  CHECK(double(a["recentMetrics"]["e2eLatencyMs"]["P50"]) == doctest::Approx(1.0).epsilon(0.05));
  simdjson::dom::element b = list.at(1);
  CHECK(!bool(b["here"]));
  CHECK(std::string_view(b["watermark"]) == "2026-12-03T10:00:00.000Z");

  simdjson::dom::element recent = c["recentMetrics"];
  CHECK(int64_t(recent["nodes"]) == 2);
  CHECK(int64_t(recent["numOutputRows"]) == 400);
  CHECK(std::string_view(recent["intervalStart"]) ==
        formatTimestamp(7 * RecentLatency::kIntervalMicros, true));
  CHECK(double(recent["e2eLatencyMs"]["P0"]) == doctest::Approx(1.0));
  CHECK(double(recent["e2eLatencyMs"]["P50"]) == doctest::Approx(100.0).epsilon(0.05));
  CHECK(double(recent["e2eLatencyMs"]["P99"]) == doctest::Approx(100.0).epsilon(0.05));
}

TEST_CASE("the cluster's progress of no node: zeros and no recent figures") {
  std::string json = clusterProgressJson({}, "a", 0);
  simdjson::dom::parser parser;
  simdjson::dom::element c;
  REQUIRE(parser.parse(json).get(c) == simdjson::SUCCESS);
  CHECK(simdjson::dom::array(c["nodes"]).size() == 0);
  CHECK(int64_t(c["numInputRows"]) == 0);
  CHECK(c["recentMetrics"].is_null());
}

TEST_CASE("the copies of a sharded flow: one entry per copy, each naming its copy, summed") {
  LatencyHistogram h;
  h.record(2000);
  NodeProgress copy0 = node("a", 7, h, progressOf(10, 1.0, 4, "\"0\":10"));
  copy0.flow = "cnt";
  NodeProgress copy1 = node("a", 7, h, progressOf(30, 3.0, 6, "\"1\":30"));
  copy1.flow = "cnt#1";
  NodeProgress copy2 = node("b", 7, h, progressOf(20, 2.0, 5, "\"2\":20"));
  copy2.flow = "cnt#2";
  const std::string json = clusterProgressJson({copy0, copy1, copy2}, "a", 1'000'000'000);
  simdjson::dom::parser parser;
  simdjson::dom::element c;
  REQUIRE(parser.parse(json).get(c) == simdjson::SUCCESS);
  simdjson::dom::array list = c["nodes"];
  REQUIRE(list.size() == 3);
  CHECK(std::string_view(list.at(0)["flow"]) == "cnt");
  CHECK(std::string_view(list.at(1)["flow"]) == "cnt#1");
  CHECK(std::string_view(list.at(1)["node"]) == "a");
  CHECK(std::string_view(list.at(2)["flow"]) == "cnt#2");
  CHECK(int64_t(c["numInputRows"]) == 60);
  CHECK(int64_t(c["numOutputRows"]) == 15);
  CHECK(int64_t(c["recentMetrics"]["nodes"]) == 3);
}
