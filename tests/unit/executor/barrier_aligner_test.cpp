// Barrier alignment of a shuffle task: a producer whose barrier came first is
// blocked and its later messages wait, so that the task ends each epoch with
// exactly the records that came before every producer's barrier, and handles
// what waited afterwards in arrival order.
#include "executor/barrier_aligner.h"

#include <doctest/doctest.h>

#include <deque>
#include <string>
#include <vector>

using namespace rtsql;

namespace {

ShuffleMessage record(uint16_t producer, int64_t v) {
  ShuffleMessage m;
  m.kind = ShuffleMessage::Kind::Record;
  m.producer = producer;
  m.row = {Value::bigint(v)};
  return m;
}

ShuffleMessage control(ShuffleMessage::Kind kind, uint16_t producer, int64_t value) {
  ShuffleMessage m;
  m.kind = kind;
  m.producer = producer;
  m.value = value;
  return m;
}

ShuffleMessage barrier(uint16_t producer, int64_t epoch) {
  return control(ShuffleMessage::Kind::Barrier, producer, epoch);
}

// A shuffle task reduced to what alignment decides: the order in which it
// handles records ("p<producer>:<value>") and ends epochs ("end<n>").
struct AligningTask {
  explicit AligningTask(size_t producers) : aligner(producers) {}

  void deliver(ShuffleMessage msg) {
    if (aligner.hold(msg)) return;
    switch (msg.kind) {
      case ShuffleMessage::Kind::Record:
        handled.push_back("p" + std::to_string(msg.producer) + ":" +
                          std::to_string(msg.row[0].asInt()));
        return;
      case ShuffleMessage::Kind::Watermark:
        handled.push_back("wm" + std::to_string(msg.producer) + ":" + std::to_string(msg.value));
        return;
      case ShuffleMessage::Kind::Idle:
        handled.push_back("idle" + std::to_string(msg.producer));
        return;
      case ShuffleMessage::Kind::Barrier: {
        if (!aligner.barrier(msg.producer, static_cast<uint64_t>(msg.value))) return;
        handled.push_back("end" + std::to_string(aligner.aligned()));
        std::deque<ShuffleMessage> waiting;
        aligner.release(waiting);
        for (ShuffleMessage& m : waiting) deliver(std::move(m));
        return;
      }
    }
  }

  // Several messages, in arrival order.
  void deliver(std::vector<ShuffleMessage> msgs) {
    for (ShuffleMessage& m : msgs) deliver(std::move(m));
  }

  BarrierAligner aligner;
  std::vector<std::string> handled;
};

using Handled = std::vector<std::string>;

}  // namespace

TEST_CASE("with one producer every barrier ends the epoch at once") {
  AligningTask t(1);
  t.deliver({record(0, 1), barrier(0, 0), record(0, 2), barrier(0, 1), record(0, 3)});
  CHECK(t.handled == Handled{"p0:1", "end0", "p0:2", "end1", "p0:3"});
  CHECK(t.aligner.aligned() == 2);
  CHECK(t.aligner.held() == 0);
}

TEST_CASE("two producers: the first barrier blocks its producer until the second arrives") {
  AligningTask t(2);
  t.deliver({record(0, 1), barrier(0, 0)});
  CHECK(t.aligner.blocked(0));
  CHECK_FALSE(t.aligner.blocked(1));
  // Producer 0's records after its barrier belong to the next epoch: they wait.
  t.deliver({record(0, 2), control(ShuffleMessage::Kind::Watermark, 0, 50)});
  CHECK(t.aligner.held() == 2);
  // Producer 1 is not blocked: its records before its barrier are this epoch's.
  t.deliver({record(1, 10), record(1, 11)});
  CHECK(t.handled == Handled{"p0:1", "p1:10", "p1:11"});
  t.deliver({barrier(1, 0), record(1, 12)});
  CHECK(t.handled == Handled{"p0:1", "p1:10", "p1:11", "end0", "p0:2", "wm0:50", "p1:12"});
  CHECK_FALSE(t.aligner.blocked(0));
  CHECK_FALSE(t.aligner.blocked(1));
  CHECK(t.aligner.held() == 0);
}

TEST_CASE("barriers align in epoch order, whichever producer is ahead") {
  AligningTask t(2);
  // Producer 1 runs two epochs ahead of producer 0.
  t.deliver({record(1, 10), barrier(1, 0), record(1, 11), barrier(1, 1), record(1, 12)});
  CHECK(t.handled == Handled{"p1:10"});
  t.deliver({record(0, 1), barrier(0, 0)});
  // Epoch 0 ends; producer 1's held barrier of epoch 1 blocks it again, and
  // its record after that barrier waits once more.
  CHECK(t.handled == Handled{"p1:10", "p0:1", "end0", "p1:11"});
  CHECK(t.aligner.blocked(1));
  CHECK(t.aligner.held() == 1);
  t.deliver({record(0, 2), barrier(0, 1)});
  CHECK(t.handled == Handled{"p1:10", "p0:1", "end0", "p1:11", "p0:2", "end1", "p1:12"});
  CHECK(t.aligner.aligned() == 2);
}

TEST_CASE("a producer that is idle still aligns by its barrier") {
  AligningTask t(2);
  // Producer 1 went idle: it sends no records, but it ends every epoch.
  t.deliver({control(ShuffleMessage::Kind::Idle, 1, 0), barrier(0, 0), record(0, 1)});
  CHECK(t.handled == Handled{"idle1"});
  t.deliver(barrier(1, 0));
  CHECK(t.handled == Handled{"idle1", "end0", "p0:1"});
}

TEST_CASE("a barrier arriving while its producer is blocked waits with its messages") {
  AligningTask t(3);
  t.deliver({barrier(0, 0), record(0, 1)});
  t.deliver(barrier(0, 1));  // the next epoch's barrier, held while producer 0 is blocked
  t.deliver({record(0, 2), barrier(1, 0), record(1, 10)});
  CHECK(t.aligner.held() == 4);
  CHECK(t.handled.empty());
  t.deliver({record(2, 20), barrier(2, 0)});
  // Held messages go in arrival order: producer 0's barrier of epoch 1 blocks
  // it again, so its record 2 waits for the epoch after.
  CHECK(t.handled == Handled{"p2:20", "end0", "p0:1", "p1:10"});
  CHECK(t.aligner.blocked(0));
  CHECK(t.aligner.held() == 1);
  t.deliver({barrier(1, 1), barrier(2, 1)});
  CHECK(t.handled == Handled{"p2:20", "end0", "p0:1", "p1:10", "end1", "p0:2"});
  CHECK(t.aligner.held() == 0);
}
