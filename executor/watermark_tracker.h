// Event time: the watermark of a source task and when a partition is idle
// (PartitionWatermarks), the watermark of a shuffle task over its producing
// tasks (InputWatermarks), and the flow's over its last tasks (FlowWatermark).
// The flow runtime only feeds them and passes on what they decide, so every
// rule about when a watermark moves lives here.
//
// A source task's watermark is the minimum over its partitions of (largest
// event time read - the source's delay). A partition that has delivered nothing
// yet holds it at "no watermark". That alone would let a partition that never
// gets records hold a flow back forever, so a partition may be left out as
// idle, but only when leaving it out cannot drop any of its records as late
// merely because they were read later than another partition's:
//
//  - It is caught up: it has been read up to the broker's end of the log
//    (SourceTask::caughtUp). A partition with unread records is slow, not idle,
//    and the watermark waits for it.
//  - It has been quiet for the source's idle timeout of *delivery time*: time
//    during which the flow's sources delivered records while this partition
//    delivered none (ActivityClock). Time in which nothing at all arrived counts
//    only up to a tenth of the timeout per pause, so after a lull of any length
//    no partition is idle when the records come back, and the first partition
//    to deliver cannot move the watermark past the others.
//  - When every partition of a task is idle the task's watermark does not move,
//    and the task tells the stages below that it is idle, so that they go on
//    with their other inputs.
//
// A partition that delivers a record, or whose broker shows records it has not
// read, is no longer idle. With these rules the rows a flow keeps depend only
// on its input, not on how fast it was read, as long as no partition stays
// without records for the idle timeout while the others deliver.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace rtsql {

// The flow's delivery clock, shared by its source tasks: it advances only
// while records are delivered. Each delivery advances it by the time since the
// previous one (of any task), but by at most `maxGapMicros`, so a pause in
// which nothing arrived counts as that much at most.
class ActivityClock {
 public:
  explicit ActivityClock(int64_t maxGapMicros) : maxGap_(maxGapMicros) {}

  // A source task delivered records at `monotonicMicros`. Called once per poll
  // that returned records, not per record.
  void delivered(int64_t monotonicMicros);
  int64_t now() const { return clock_.load(std::memory_order_acquire); }

 private:
  const int64_t maxGap_;
  std::mutex mu_;
  int64_t lastDelivery_ = INT64_MIN;  // monotonic time of the last delivery
  std::atomic<int64_t> clock_{0};
};

// One source task's partitions: their event time and whether they are idle.
// Used by the task's thread only.
class PartitionWatermarks {
 public:
  struct Partition {
    int64_t maxEventMicros = INT64_MIN;
    int64_t lastDelivery = 0;  // the ActivityClock when it last delivered
    bool deliveredInPoll = false;
    bool idle = false;
  };

  struct Result {
    // Minimum over the partitions that are not idle; INT64_MIN while one of
    // them has no event time yet or when all are idle.
    int64_t watermark = INT64_MIN;
    bool allIdle = false;  // every partition (or none at all) is idle
  };

  // What the task tells the operators below after a poll (step()).
  struct Step {
    enum class Kind : uint8_t { None, Idle, Watermark };
    Kind kind = Kind::None;
    int64_t watermark = INT64_MIN;  // Watermark: the task's watermark, INT64_MIN for none yet
  };

  // `startMicros` is the task's watermark when it starts: the one of the
  // restored checkpoint, else none.
  PartitionWatermarks(int64_t delayMicros, int64_t idleTimeoutMicros, int64_t startMicros = INT64_MIN)
      : delay_(delayMicros), idleTimeout_(idleTimeoutMicros), current_(startMicros) {}

  // The partition's entry, added when unknown; the reference stays valid.
  // A task adds the partitions it reads before any delivers, so that each
  // holds the watermark from the start. `clockNow` is the ActivityClock.
  Partition& at(int32_t partition, int64_t clockNow);

  // The per-record part: cheap, no lookup (the caller keeps the reference).
  static void record(Partition& p) { p.deliveredInPoll = true; }
  static void record(Partition& p, int64_t eventMicros) {
    p.deliveredInPoll = true;
    if (eventMicros > p.maxEventMicros) p.maxEventMicros = eventMicros;
  }

  // After each poll: partitions that delivered restart their quiet time at
  // `clockNow`, the others are idle when quiet for the idle timeout and
  // caughtUp(partition) says they have nothing left to read.
  template <typename CaughtUp>
  Result update(int64_t clockNow, CaughtUp&& caughtUp) {
    Result r;
    bool any = false, waiting = false;
    int64_t wm = INT64_MAX;
    for (auto& [id, p] : partitions_) {
      if (p.deliveredInPoll) {
        p.deliveredInPoll = false;
        p.lastDelivery = clockNow;
        p.idle = false;
      } else if (clockNow - p.lastDelivery >= idleTimeout_) {
        // The broker's end of the log is asked only of partitions quiet for
        // long, and again after every poll: records arriving make it not idle.
        p.idle = caughtUp(id);
      } else {
        p.idle = false;
      }
      if (p.idle) continue;
      any = true;
      if (p.maxEventMicros == INT64_MIN) {
        waiting = true;
      } else {
        wm = std::min(wm, p.maxEventMicros - delay_);
      }
    }
    r.allIdle = !any;
    r.watermark = (!any || waiting) ? INT64_MIN : wm;
    return r;
  }

  // After each poll: update(), then what the task tells the operators below.
  //  - Idle, once, when every partition has gone idle and `announcesIdle` (the
  //    task feeds a shuffle, whose tasks then go on without it; a task that
  //    writes the sink has nobody to tell). The watermark does not move.
  //  - Watermark when the watermark advanced, and when the task is back from
  //    idle: then its watermark, even none yet, tells the stages below to wait
  //    for it again.
  template <typename CaughtUp>
  Step step(int64_t clockNow, bool announcesIdle, CaughtUp&& caughtUp) {
    const Result r = update(clockNow, caughtUp);
    if (r.allIdle) {
      if (idle_ || !announcesIdle) return {};
      idle_ = true;
      return {Step::Kind::Idle, current_};
    }
    const bool advanced = r.watermark != INT64_MIN && r.watermark > current_;
    if (advanced) current_ = r.watermark;
    if (!advanced && !idle_) return {};
    idle_ = false;
    return {Step::Kind::Watermark, current_};
  }

  // The task's watermark: it only grows.
  int64_t current() const { return current_; }
  const std::map<int32_t, Partition>& partitions() const { return partitions_; }

 private:
  const int64_t delay_;
  const int64_t idleTimeout_;
  int64_t current_;
  bool idle_ = false;  // told the stages below that every partition is idle
  // A map: entries never move, so the task may keep a reference per record.
  std::map<int32_t, Partition> partitions_;
};

// A source task whose source gives its own watermark (SourceTask::
// ownWatermark(): a sharded flow's exchange, over its producers): what the
// task tells the operators below after each poll, by PartitionWatermarks::
// step()'s rules: Idle once when the source is all idle (and `announcesIdle`),
// Watermark when it advanced or is back from idle. Task's thread only.
class ForwardedWatermark {
 public:
  explicit ForwardedWatermark(int64_t startMicros = INT64_MIN) : current_(startMicros) {}

  PartitionWatermarks::Step step(int64_t watermark, bool allIdle, bool announcesIdle) {
    using Step = PartitionWatermarks::Step;
    if (allIdle) {
      if (idle_ || !announcesIdle) return {};
      idle_ = true;
      return {Step::Kind::Idle, current_};
    }
    const bool advanced = watermark != INT64_MIN && watermark > current_;
    if (advanced) current_ = watermark;
    if (!advanced && !idle_) return {};
    idle_ = false;
    return {Step::Kind::Watermark, current_};
  }

 private:
  int64_t current_;
  bool idle_ = false;
};

// A shuffle task's watermark: the minimum over its producing tasks that are
// not idle, with none while one of those has none yet. A producer is idle from
// its Idle message until its next watermark (which it sends when it is back).
// With every producer idle the watermark does not move. It only grows: a
// producer's watermark never goes back, and the task's starts at the restored
// checkpoint's. Used by the task's thread only.
class InputWatermarks {
 public:
  explicit InputWatermarks(size_t producers = 0, int64_t startMicros = INT64_MIN)
      : inputs_(producers), current_(startMicros) {}

  // A producer's watermark, or that it went idle. True when the task's
  // watermark advanced: current() is the new one.
  bool watermark(uint16_t producer, int64_t micros);
  bool idle(uint16_t producer);

  int64_t current() const { return current_; }

 private:
  struct Input {
    int64_t watermark = INT64_MIN;
    bool idle = false;
  };
  bool advance();

  std::vector<Input> inputs_;
  int64_t current_;
};

// The flow's watermark, as progress and checkpoints report it: the one its
// last stages act on, the minimum over the tasks that write the sink. A task
// without a watermark yet is left out (it has seen no event time), and the
// flow has none while no task has one.
class FlowWatermark {
 public:
  void add(int64_t taskWatermark) {
    if (taskWatermark != INT64_MIN) min_ = std::min(min_, taskWatermark);
  }
  int64_t value() const { return min_ == INT64_MAX ? INT64_MIN : min_; }

 private:
  int64_t min_ = INT64_MAX;
};

}  // namespace rtsql
