// Two members of one cluster's group on the embedded broker
// (server/cluster/membership.h): how they split the slots, when a member is
// called back, and the holders each names. Not in the TSan build: Debian's
// librdkafka is not built with TSan, and its threads crash inside TSan's
// allocator (scripts/sanitize.sh).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "connectors/embedded/broker.h"
#include "server/cluster/membership.h"
#include "server/cluster/node_record.h"
#include "tests/unit/server/server_test_util.h"

using namespace rtsql;
using rtsql::testing::eventually;
using std::chrono::seconds;

namespace {

bool disjoint(const std::set<int>& a, const std::set<int>& b) {
  return std::none_of(a.begin(), a.end(), [&](int s) { return b.count(s) > 0; });
}

}  // namespace

TEST_CASE("two nodes split the slots: a node is called back only for slots it gives up") {
  EmbeddedKafka broker;
  // The session timeout of the cluster tests (--node-timeout 6): a loaded
  // machine must not drop a member while the slots move.
  ClusterMembership a({"split", broker.bootstrap(), "a", 6000});
  ClusterMembership b({"split", broker.bootstrap(), "b", 6000});
  const int slots = a.slots();
  REQUIRE(slots > 1);

  std::mutex mu;
  std::vector<std::set<int>> aAfterRelease;  // what a held after each callback
  a.start([&] {
    std::lock_guard lock(mu);
    aAfterRelease.push_back(a.held());
  });
  REQUIRE(eventually([&] { return static_cast<int>(a.held().size()) == slots; }, seconds(60)));
  {
    // Taking slots is not a release: nothing to stop.
    std::lock_guard lock(mu);
    CHECK(aAfterRelease.empty());
  }

  b.start([] {});
  REQUIRE(eventually(
      [&] {
        std::set<int> ha = a.held(), hb = b.held();
        return !ha.empty() && !hb.empty() && disjoint(ha, hb) &&
               static_cast<int>(ha.size() + hb.size()) == slots;
      },
      seconds(90)));
  {
    // a gave b its share, and was called back with the slots already gone.
    std::lock_guard lock(mu);
    REQUIRE(!aAfterRelease.empty());
    CHECK(static_cast<int>(aAfterRelease.back().size()) < slots);
  }

  // Each names the other as the holder of its slots (claims in the holders
  // group, read every few seconds).
  CHECK(eventually(
      [&] {
        for (int s : b.held())
          if (a.holderOfSlot(s) != std::optional<std::string>("b")) return false;
        for (int s : a.held())
          if (b.holderOfSlot(s) != std::optional<std::string>("a")) return false;
        return true;
      },
      seconds(60)));
  CHECK(a.nodes() == std::set<std::string>{"a", "b"});
  a.stop();
  b.stop();
}

TEST_CASE("each node of a group learns the address the other advertises") {
  EmbeddedKafka broker;
  ClusterOptions oa{"adv", broker.bootstrap(), "a", 6000};
  ClusterOptions ob{"adv", broker.bootstrap(), "b", 6000};
  oa.advertised = std::make_shared<AdvertisedAddress>();
  ob.advertised = std::make_shared<AdvertisedAddress>();
  ob.advertised->set("127.0.0.1:6001");
  ClusterMembership a(oa);
  ClusterMembership b(ob);
  a.start([] {});
  b.start([] {});
  REQUIRE(eventually([&] { return !a.held().empty() && !b.held().empty(); },
                              seconds(90)));
  CHECK(eventually(
      [&] { return a.addressOf("b") == std::optional<std::string>("127.0.0.1:6001"); },
      seconds(60)));
  // a's address is set after it claimed its slots (a listener bound late):
  // it claims them again, and b learns it.
  CHECK_FALSE(b.addressOf("a"));
  oa.advertised->set("127.0.0.1:6000");
  CHECK(eventually(
      [&] { return b.addressOf("a") == std::optional<std::string>("127.0.0.1:6000"); },
      seconds(60)));
  CHECK(a.addressOf("a") == std::optional<std::string>("127.0.0.1:6000"));
  CHECK_FALSE(a.addressOf("nobody"));
  a.stop();
  b.stop();
}
