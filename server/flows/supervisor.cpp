// The flow supervisor: starts restored flows and restarts failed ones with
// backoff; and the release of the flows whose placement moved elsewhere
// (server/flows/flow_registry.h). It sleeps until something needs it: a
// wakeSupervisor() (a flow added, failed, asked to start or stop, the
// placement moved) or the end of a flow's backoff; a server whose flows all
// run, or that has none, never wakes it.
#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>

#include "common/clock.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "server/flows/flow_registry.h"

namespace rtsql {

namespace {

// When a round could not look at every flow (a statement held the lock, or
// the cluster's group waited for a release), the next comes this much later.
constexpr int64_t kRoundAgainMicros = 200'000;
// The bounds of the backoff.
constexpr int64_t kFirstRetryMicros = 500'000;
constexpr int64_t kMaxRetryMicros = 60'000'000;
// A flow that has run this long without failing has recovered: its backoff
// starts over.
constexpr int64_t kSteadyMicros = 60'000'000;

int64_t backoffMicros(int attempts) {
  int64_t d = kFirstRetryMicros;
  for (int i = 1; i < attempts && d < kMaxRetryMicros; ++i) d *= 2;
  return std::min(d, kMaxRetryMicros);
}

}  // namespace

bool FlowRegistry::retryable(const std::string& sqlstate) {
  // Bad data (class 22), a plan that no longer binds (42), a feature that
  // is not there (0A), checkpoints that cannot be read (XX001) or a Python
  // call past its time limit (57014: it meets the same record again) fail the
  // same way on every retry: the user must act. The rest (a broker away, a
  // full disk, no free slots, an internal error) may pass.
  return !(sqlstate.starts_with("22") || sqlstate.starts_with("42") || sqlstate.starts_with("0A") ||
           sqlstate == sqlstate::kDataCorrupted || sqlstate == sqlstate::kQueryCanceled);
}

void FlowRegistry::start(std::function<FlowRuntime*(const std::string&)> plan) {
  plan_ = std::move(plan);
  PlacementHooks hooks;
  // Slots given up: their flows stop before another node may start them.
  // The supervisor lets go of the statement lock between two starts while a
  // release waits for it, so that the group's callback is not held up by
  // every start of a round.
  hooks.release = [this] {
    releasePending_ = true;
    struct Done {
      std::atomic<bool>& pending;
      ~Done() { pending = false; }  // also if the release throws
    } done{releasePending_};
    releaseFlows();
  };
  hooks.forEachFlow = [this](const PlacementHooks::Visit& visit) {
    std::lock_guard lock(mu_);
    for (const auto& [name, entry] : flows_) visit(name, entry.runtime.get());
  };
  hooks.stateCopy = [this](const std::string& flow) { return stateCopyFor(flow); };
  hooks.changed = [this] { wakeSupervisor(); };
  placement_->start(std::move(hooks));
  supervisor_ = std::thread([this] { supervise(); });
  pthread_setname_np(supervisor_.native_handle(), "flow-supervisor");
}

void FlowRegistry::wakeSupervisor() {
  {
    std::lock_guard lock(supervisorMu_);
    supervisorWake_ = true;
  }
  supervisorCv_.notify_one();
}

void FlowRegistry::supervise() {
  // The server's stop ends a start in progress at its next wait rather than
  // after it: the waits of a start (restore, connector setup, topic
  // creation, registry fetches) poll this check. Atomics only, so the
  // watchdog of Python calls may ask it from its thread too.
  constexpr InterruptScope::Check shuttingDown = [](const void* registry) {
    return static_cast<const FlowRegistry*>(registry)->shuttingDown_.load();
  };
  InterruptScope interrupt(shuttingDown, this, shuttingDown);
  std::unique_lock lock(supervisorMu_);
  int64_t due = kNoRoundDue;
  while (true) {
    const auto woken = [&] { return supervisorStop_ || supervisorWake_; };
    if (due == kNoRoundDue) {
      supervisorCv_.wait(lock, woken);
    } else {
      const int64_t wait = due - monotonicMicros();
      if (wait > 0) supervisorCv_.wait_for(lock, std::chrono::microseconds(wait), woken);
    }
    if (supervisorStop_) break;
    supervisorWake_ = false;
    lock.unlock();
    try {
      due = superviseOnce();
    } catch (const std::exception& e) {
      logLine(fmt::format("flow supervisor: {}", e.what()));
      due = monotonicMicros() + kRoundAgainMicros;
    }
    lock.lock();
  }
}

void FlowRegistry::releaseFlows(bool held) {
  std::unique_lock statements(statements_.mutex(), std::defer_lock);
  if (!held) statements.lock();
  std::vector<std::pair<FlowRuntime*, std::string>> leaving;
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, entry] : flows_) {
      FlowRuntime* rt = entry.runtime.get();
      if (!rt || rt->state() == FlowState::Stopped) continue;
      std::string why = placement_->releaseReason(name, *rt);
      if (!why.empty()) leaving.emplace_back(rt, std::move(why));
    }
  }
  // Runtimes stay alive under the statement lock (only statements drop them).
  for (const auto& [rt, why] : leaving) {
    logLine(fmt::format("flow \"{}\" stops here: {}", rt->plan().flowName, why));
    rt->stop();
  }
}

int64_t FlowRegistry::superviseOnce() {
  const int64_t again = monotonicMicros() + kRoundAgainMicros;
  std::unique_lock statements(statements_.mutex(), std::try_to_lock);
  if (!statements.owns_lock()) return again;  // a statement is changing flows: look again later
  releaseFlows(true);
  // Dropped flows' copies left for this node, now that it holds their slots.
  placement_->deleteDroppedCopies();
  const int64_t now = monotonicMicros();
  int64_t due = kNoRoundDue;
  std::vector<std::string> names;
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, entry] : flows_) {
      // A flow without a plan is planned on every node (whether it runs here
      // may depend on its plan: a spread flow's partitions).
      if (entry.control.wantRunning && (runsHere(name, entry.runtime.get()) || !entry.runtime)) {
        names.push_back(name);
      }
    }
  }
  for (const std::string& name : names) {
    {
      std::lock_guard lock(supervisorMu_);
      if (supervisorStop_) return kNoRoundDue;
    }
    // The group waits for a release (the rest of the round comes next time).
    if (releasePending_.load()) return again;
    FlowRuntime* rt = findRuntime(name);
    FlowState state = rt ? rt->state() : FlowState::Stopped;
    std::unique_lock lock(mu_);
    FlowControl& c = flows_[name].control;
    if (state == FlowState::Running) {
      if (c.attempts > 0 && now - c.runningSinceMicros > kSteadyMicros) c.attempts = 0;
      // Back from failures: a round when it has run steadily, to start its
      // backoff over.
      if (c.attempts > 0) due = std::min(due, c.runningSinceMicros + kSteadyMicros + 1);
      continue;
    }
    if (state == FlowState::Failed) {
      if (!retryable(rt->failureCode())) continue;  // reported as failed until START FLOW
      if (!c.failureSeen) {
        c.failureSeen = true;
        c.lastError = rt->failureReason();
        ++c.attempts;
        c.nextAttemptMicros = now + backoffMicros(c.attempts);
        logLine(fmt::format("flow \"{}\" failed: {}; restarting it in {:.1f} s", name, c.lastError,
                            static_cast<double>(c.nextAttemptMicros - now) / 1e6));
        due = std::min(due, c.nextAttemptMicros);
        continue;
      }
    }
    if (now < c.nextAttemptMicros) {
      due = std::min(due, c.nextAttemptMicros);
      continue;
    }
    lock.unlock();
    try {
      if (!rt) rt = plan_(name);
      if (!rt) continue;
      if (!runsHere(name, rt)) continue;
      rt->stop();  // collects the threads and slots of a failed run
      startRuntime(name, *rt);
      lock.lock();
      c.failureSeen = false;
      c.lastError.clear();
      c.runningSinceMicros = now;
      if (c.attempts > 0) due = std::min(due, now + kSteadyMicros + 1);
      lock.unlock();
      logLine(fmt::format("flow \"{}\" is running", name));
    } catch (const SqlError& e) {
      if (shuttingDown_) {
        // The start ended at one of its waits (Interrupted), or failed
        // because of the stop (a request cancelled): FlowRuntime::start()
        // holds nothing when it throws, and the flow is no failure.
        logLine(fmt::format("flow \"{}\": its start ends, the server stops", name));
        return kNoRoundDue;
      }
      if (!retryable(e.sqlstate())) {
        // The runtime reports itself failed; it stays so until START FLOW.
        logLine(fmt::format("flow \"{}\" cannot start: {}", name, e.message()));
        continue;
      }
      lock.lock();
      c.lastError = e.message();
      c.failureSeen = true;
      ++c.attempts;
      c.nextAttemptMicros = monotonicMicros() + backoffMicros(c.attempts);
      due = std::min(due, c.nextAttemptMicros);
      lock.unlock();
      logLine(fmt::format("flow \"{}\" cannot start: {}; next attempt in {:.1f} s", name,
                          e.message(), static_cast<double>(backoffMicros(c.attempts)) / 1e6));
    }
  }
  return due;
}

}  // namespace rtsql
