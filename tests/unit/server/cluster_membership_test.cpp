// The placement rules every node of a cluster computes alike
// (server/cluster_membership.h): a flow's slot, and the nodes that keep a
// standby copy of a flow's state.
#include "server/cluster_membership.h"

#include <doctest/doctest.h>

using namespace rtsql;

TEST_CASE("a flow's slot ignores the case of its name and stays within the slots") {
  CHECK(flowSlot("Counts", 16) == flowSlot("counts", 16));
  for (const char* name : {"a", "counts", "windowed", "joined"}) {
    const int slot = flowSlot(name, 16);
    CHECK(slot >= 0);
    CHECK(slot < 16);
  }
}

TEST_CASE("the standbys of a flow are the nodes after its runner in name order, coming round") {
  const std::set<std::string> nodes{"a", "b", "c", "d"};
  CHECK(standbyNodes("b", nodes, 1) == std::vector<std::string>{"c"});
  CHECK(standbyNodes("b", nodes, 2) == std::vector<std::string>{"c", "d"});
  CHECK(standbyNodes("d", nodes, 2) == std::vector<std::string>{"a", "b"});
  CHECK(standbyNodes("c", nodes, 3) == std::vector<std::string>{"d", "a", "b"});
  // No more than the other nodes, never the runner itself.
  CHECK(standbyNodes("a", nodes, 9) == std::vector<std::string>{"b", "c", "d"});
  CHECK(standbyNodes("a", {"a"}, 1).empty());
  CHECK(standbyNodes("a", nodes, 0).empty());
  // A runner the view does not list yet (it just joined): the nodes after
  // where its name would be.
  CHECK(standbyNodes("bb", nodes, 2) == std::vector<std::string>{"c", "d"});
}
