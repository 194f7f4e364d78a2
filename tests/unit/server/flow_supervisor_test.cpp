// The flow supervisor sleeps while no flow needs it, and wakes when one does:
// a server with no flow costs nothing, and a flow that fails is restarted
// with backoff all the same; and a server that stops does not wait for a
// start the supervisor has in progress.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/error.h"
#include "common/interrupt.h"
#include "server/engine.h"
#include "../proc_threads.h"
#include "server_test_util.h"

using namespace rtsql;
using rtsql::testing::RestoredEngine;

namespace {

// Sources that read nothing and sinks that drop rows; a source's poll fails
// once each time `failures` is raised, as a broker that goes away would.
// With `slowOpens`, opening a source waits (half a minute at most) as a
// metadata lookup of a broker that does not answer does, asking the opening
// thread's stop between two tries as a start's waits do.
class FailingProvider final : public ConnectorProvider {
 public:
  std::atomic<int> failures{0};
  std::atomic<int> opened{0};
  std::atomic<bool> slowOpens{false};
  std::atomic<bool> inSlowOpen{false};
  std::atomic<bool> openInterrupted{false};

  int sourcePartitions(const ScanSpec&) override { return 1; }
  std::unique_ptr<SourceTask> openSource(const ScanSpec&, const std::string&, int, int) override {
    ++opened;
    if (slowOpens) {
      inSlowOpen = true;
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (std::chrono::steady_clock::now() < until) {
        try {
          throwIfInterrupted();
        } catch (const Interrupted&) {
          openInterrupted = true;
          throw;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    return std::make_unique<Source>(*this);
  }
  std::unique_ptr<SinkWriter> openSink(const SinkSpec&, const std::string&, int) override {
    return std::make_unique<Sink>();
  }

 private:
  class Source final : public SourceTask {
   public:
    explicit Source(FailingProvider& provider) : provider_(provider) {}
    void poll(std::vector<SourceRecord>&, size_t, int timeoutMs) override {
      int n = provider_.failures.load();
      if (n > 0 && provider_.failures.compare_exchange_strong(n, n - 1)) {
        throw SqlError(sqlstate::kConnectionFailure, "broker 127.0.0.1:1 went away");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(timeoutMs));
    }
    void commit() override {}
    std::vector<PartitionProgress> progress() const override { return {}; }
    int64_t decodeErrors() const override { return 0; }
    std::string description() const override { return "Failing"; }

   private:
    FailingProvider& provider_;
  };
  class Sink final : public SinkWriter {
   public:
    void write(const Row&, int64_t) override {}
    void flush(int) override {}
    int64_t deliveryErrors() const override { return 0; }
    std::string description() const override { return "Null"; }
  };
};


FlowState stateOf(Engine& engine, const std::string& name) {
  for (const auto& info : engine.flowInfos(false)) {
    if (info.name == name) return info.state;
  }
  return FlowState::Stopped;
}

struct Fixture : rtsql::testing::EngineFixture<FailingProvider> {
  // Flow f, from a datagen source into a file, running on `server`.
  void runFlowF(RestoredEngine& server) {
    const std::string out = (tmp.path / "out.jsonl").string();
    server.runAll({"CREATE SOURCE s (a BIGINT) WITH (connector = 'datagen', rowsPerSecond = '1')",
                   "CREATE SINK out WITH (connector = 'file', path = '" + out + "')",
                   "CREATE FLOW f INTO out AS SELECT a FROM s"});
    REQUIRE(stateOf(server.engine, "f") == FlowState::Running);
  }
};

}  // namespace

TEST_CASE_FIXTURE(Fixture, "the supervisor of a server with no flow sleeps") {
  RestoredEngine server(options, connectors);
  REQUIRE(rtsql::testing::threadsNamed("flow-supervisor") == 1);
  // Its first round (the restored flows: none) comes at once; then it sleeps.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const long before = rtsql::testing::voluntarySwitches("flow-supervisor");
  std::this_thread::sleep_for(std::chrono::seconds(3));
  // A supervisor that polled would have woken 15 times (once each 200 ms).
  CHECK(rtsql::testing::voluntarySwitches("flow-supervisor") - before <= 2);
  server.engine.shutdown();
}

TEST_CASE_FIXTURE(Fixture, "a flow that fails is restarted after its backoff, and the supervisor sleeps again") {
  RestoredEngine server(options, connectors);
  Engine& engine = server.engine;
  runFlowF(server);
  const int opened = connectors.opened.load();

  connectors.failures = 1;
  // The failure wakes the supervisor, which starts the flow again once its
  // first backoff (half a second) has passed.
  CHECK(rtsql::testing::eventually(
      [&] { return connectors.opened.load() > opened && stateOf(engine, "f") == FlowState::Running; },
      std::chrono::milliseconds(20000)));

  // Running again, with a failure behind it: the supervisor has nothing to
  // do until the flow has run steadily for a minute.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const long before = rtsql::testing::voluntarySwitches("flow-supervisor");
  std::this_thread::sleep_for(std::chrono::seconds(3));
  CHECK(rtsql::testing::voluntarySwitches("flow-supervisor") - before <= 2);
  engine.shutdown();
}

TEST_CASE_FIXTURE(Fixture, "a server that stops does not wait for the start in progress") {
  RestoredEngine server(options, connectors);
  Engine& engine = server.engine;
  runFlowF(server);

  // The flow fails; the supervisor's start of it again waits in the
  // source's open.
  connectors.slowOpens = true;
  connectors.failures = 1;
  REQUIRE(rtsql::testing::eventually([&] { return connectors.inSlowOpen.load(); },
                                     std::chrono::milliseconds(20000)));

  // The stop ends the start at its wait instead of waiting the half minute
  // out; the bound leaves room for a loaded machine.
  const auto t0 = std::chrono::steady_clock::now();
  engine.shutdown();
  const auto took = std::chrono::steady_clock::now() - t0;
  CHECK(took < std::chrono::seconds(10));
  CHECK(connectors.openInterrupted.load());
  // Nothing of the abandoned start runs on: neither the supervisor nor a
  // task of the flow.
  CHECK(rtsql::testing::threadsNamed("flow-supervisor") == 0);
  CHECK(rtsql::testing::threadStats("f/").empty());
  CHECK(rtsql::testing::threadStats("f:epochs").empty());
  CHECK(stateOf(engine, "f") != FlowState::Running);
}
