// Epoch barrier alignment for a task fed by a shuffle. It is its own home
// because it is the one rule that makes a shuffle task's state at an epoch
// end exact, and it is tested on its own (tests/unit/executor/
// barrier_aligner_test.cpp) without threads or connectors.
//
// Every producing task sends, in order with its records, a barrier when it
// ends an epoch. The consuming task must end its own epoch with exactly the
// records that came before the barrier of every producer. So once a
// producer's barrier for the epoch has arrived, that producer is blocked: its
// later messages are held here, in arrival order, until the barrier has
// arrived from every producer. Then the task ends its epoch and takes the held
// messages back (release()) to handle them as if they had arrived now; a
// barrier of the next epoch among them blocks its producer again.
//
// Idle producers still send barriers (a source task ends every epoch), so
// alignment never waits on a producer that cannot send one. Used by the task's
// thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "executor/shuffle.h"

namespace rtsql {

class BarrierAligner {
 public:
  explicit BarrierAligner(size_t producers = 0)
      : barriers_(producers, 0), blocked_(producers, false) {}

  // The per-message check, before the message is handled: true when its
  // producer is blocked, and then the message has been moved in here to wait.
  // Inline and without allocation while nobody is blocked.
  bool hold(ShuffleMessage& msg) {
    if (!blocked_[msg.producer]) return false;
    held_.push_back(std::move(msg));
    return true;
  }

  // `producer`'s barrier of `epoch` (the producer's epoch count, from 0 at the
  // start of the run) arrived and was not held. True when the barrier of the
  // epoch being aligned is now in from every producer: the task ends its
  // epoch, then calls release(). False when the producer is now blocked.
  bool barrier(uint16_t producer, uint64_t epoch);

  // After the task ended the aligned epoch: unblocks every producer and moves
  // the held messages to the end of `out` in arrival order, to be handled
  // again through hold().
  void release(std::deque<ShuffleMessage>& out);

  // Epochs aligned (and released) so far.
  uint64_t aligned() const { return aligned_; }
  bool blocked(uint16_t producer) const { return blocked_[producer]; }
  size_t held() const { return held_.size(); }

 private:
  std::vector<uint64_t> barriers_;   // per producer: epochs whose barrier arrived
  std::vector<bool> blocked_;        // producers whose barrier came before the others'
  std::deque<ShuffleMessage> held_;  // their messages since, in arrival order
  uint64_t aligned_ = 0;
};

}  // namespace rtsql
