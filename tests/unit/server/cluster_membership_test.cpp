// The placement rules every node of a cluster computes alike
// (server/cluster/membership.h): a flow's slot, the slots CREATE FLOW
// chooses for a flow's copies or partitions, and the nodes that keep a
// standby copy of a flow's state.
#include "server/cluster/membership.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

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

namespace {

// Slots as the group's cooperative-sticky assignor gave them to three nodes
// that joined one after the other (a run of them to the first, the rest
// interleaved between the two others).
std::map<int, std::string> threeNodes() {
  std::map<int, std::string> out;
  for (int s : {10, 11, 12, 13, 14, 15}) out[s] = "a";
  for (int s : {3, 5, 7, 8, 9}) out[s] = "b";
  for (int s : {0, 1, 2, 4, 6}) out[s] = "c";
  return out;
}

std::map<std::string, int> piecesPerNode(const std::vector<int>& slots,
                                         const std::map<int, std::string>& holders) {
  std::map<std::string, int> out;
  for (int s : slots) ++out[holders.at(s)];
  return out;
}

}  // namespace

TEST_CASE("a flow's copies go to as many nodes as hold slots, whatever its own slot") {
  const std::map<int, std::string> holders = threeNodes();
  for (int first = 0; first < 16; ++first) {
    CAPTURE(first);
    for (int pieces = 1; pieces <= 16; ++pieces) {
      CAPTURE(pieces);
      const std::vector<int> slots = placeFlowSlots(first, pieces, 16, holders);
      REQUIRE(slots.size() == static_cast<size_t>(pieces));
      CHECK(slots.front() == first);  // copy 0 keeps the flow's own slot
      // No two pieces share a slot, and each node has its fair share.
      CHECK(std::set<int>(slots.begin(), slots.end()).size() == slots.size());
      const std::map<std::string, int> per = piecesPerNode(slots, holders);
      CHECK(per.size() == static_cast<size_t>(std::min(pieces, 3)));
      int least = pieces, most = 0;
      for (const auto& [node, n] : per) {
        least = std::min(least, n);
        most = std::max(most, n);
      }
      CHECK(most - least <= 1);
    }
  }
  // Piece 1 goes to the node after piece 0's in name order; the same input
  // gives the same slots on every node.
  const std::vector<int> slots = placeFlowSlots(3, 3, 16, holders);
  CHECK(slots == std::vector<int>{3, 4, 10});
  CHECK(placeFlowSlots(3, 3, 16, holders) == slots);
}

TEST_CASE("a flow's pieces take the slots of no known holder after the nodes known") {
  // A node that has just joined knows its own slots, maybe not the others'.
  const std::map<int, std::string> holders{{2, "a"}, {9, "b"}};
  CHECK(placeFlowSlots(2, 5, 16, holders) == std::vector<int>{2, 9, 3, 4, 5});
  // Piece 0's slot has no known holder: it stays the flow's own, and the
  // others go to the nodes known first.
  CHECK(placeFlowSlots(5, 4, 16, holders) == std::vector<int>{5, 2, 9, 6});
  // The known nodes come first also when piece 0's holder is not the first
  // of them in name order: b's, then a's, then the unknown ones.
  CHECK(placeFlowSlots(9, 4, 16, holders) == std::vector<int>{9, 2, 10, 11});
  // Every partition of a spread flow of 16 gets a slot of its own.
  const std::vector<int> spread = placeFlowSlots(7, 16, 16, holders);
  CHECK(std::set<int>(spread.begin(), spread.end()).size() == 16);
}

TEST_CASE("a flow's pieces come round the slots when there are more of them than slots") {
  const std::vector<int> slots = placeFlowSlots(3, 20, 16, threeNodes());
  REQUIRE(slots.size() == 20);
  CHECK(std::set<int>(slots.begin(), slots.begin() + 16).size() == 16);
  CHECK(std::vector<int>(slots.begin() + 16, slots.end()) ==
        std::vector<int>(slots.begin(), slots.begin() + 4));
}

TEST_CASE("with no holder known, a flow's pieces are spaced evenly over the slots") {
  CHECK(placeFlowSlots(5, 4, 16, {}) == std::vector<int>{5, 9, 13, 1});
  CHECK(placeFlowSlots(0, 3, 16, {}) == std::vector<int>{0, 5, 10});
  CHECK(placeFlowSlots(7, 1, 16, {}) == std::vector<int>{7});
  CHECK(placeFlowSlots(7, 0, 16, {}).empty());
  CHECK(placeFlowSlots(7, 3, 0, {}).empty());
}
