// The state copies of dropped flows that no node could delete at the drop.
//
// A dropped stateful flow's copy (a topic of the cluster's Kafka) is deleted
// by the node that ran the flow, once it has stopped it: no node writes the
// copy after that. But at the drop no node may run the flow: its runner is
// dead or cut off (the group has not given its slot away yet), or the slot is
// between two nodes in a rebalance. Every node that applies the drop without
// running the flow keeps the copy here instead, and the node that holds the
// flow's slot next deletes it: the slot's last holder stopped the flow before
// the group gave the slot away, so nothing writes the copy then. A CREATE
// FLOW of the name takes the copy back (forget), and a node that could not
// delete it tries again at its next look, a few times. A copy is kept for
// kKeepMicros at most: long enough for the group to give a dead node's slots
// away, and no longer, so that what a node keeps stays small and a node far
// behind the catalog cannot delete the copy of a flow created again since.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "executor/state_copy.h"

namespace rtsql {

class DroppedCopies {
 public:
  // How many looks at which a deletion fails before the copy is let go
  // (logged: it stays on the broker).
  static constexpr int kMaxAttempts = 5;
  static constexpr int64_t kKeepMicros = 15 * 60 * 1'000'000LL;

  // Keeps the copy of dropped flow `name` (lower-cased) for the slot's next
  // holder, from `nowMicros` (monotonic) on.
  void add(const std::string& name, std::shared_ptr<StateCopy> copy, int64_t nowMicros);
  // A flow named `name` exists again: its copy is its own.
  void forget(const std::string& name);
  // Deletes (StateCopy::destroy) the kept copies whose flow `holds` says
  // this node holds the slot of; returns how many were deleted. A failure
  // is logged and tried again at the next call, kMaxAttempts times at most.
  // Called under the statement lock (the supervisor's round), as forget is.
  // Copies kept longer than kKeepMicros at `nowMicros` are let go (logged).
  int deleteHeld(const std::function<bool(const std::string&)>& holds, int64_t nowMicros);
  size_t size() const;

 private:
  struct Kept {
    std::shared_ptr<StateCopy> copy;
    int64_t sinceMicros = 0;
    int attempts = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Kept> kept_;
};

}  // namespace rtsql
