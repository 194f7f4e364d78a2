#include "server/cluster/standbys.h"

#include <fmt/format.h>
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "common/error.h"
#include "common/log.h"
#include "executor/state_standby.h"

namespace rtsql {

namespace {

// How often the standbys wanted are asked again and their copies read on.
constexpr auto kRound = std::chrono::seconds(1);
// How long a round reads one copy at most (a standby far behind catches up
// over several rounds, without holding up the others).
constexpr int64_t kReadMicros = 300'000;
// How long a take-over waits for the copy's next record before giving up on
// the standby (and reading the copy instead).
constexpr int64_t kTakeOverQuietMicros = 10'000'000;

}  // namespace

// Every failure of a standby is logged and the thread goes on (a SqlError's
// what() is its message): nothing a standby does may end the server.
struct ClusterStandbys::Impl {
  std::string dir;
  std::function<std::vector<StandbyWanted>()> wanted;
  std::thread thread;
  std::atomic<bool> stopping{false};
  std::condition_variable cv;

  struct Entry {
    std::mutex mu;  // held while the standby reads or is taken over
    std::unique_ptr<StateStandby> standby;
    std::optional<CheckpointInfo> kept;  // under Impl::mu: the standby's checkpoint
    // Under Impl::mu: a reader of the state of `kept`, taken with it
    // (StateStandby::reader()), for reads of a view on this node.
    std::shared_ptr<const StoredReader> state;
    bool complained = false;
  };
  mutable std::mutex mu;
  std::map<std::string, std::shared_ptr<Entry>> entries;  // by lower-cased flow name
  uint64_t made = 0;                                      // numbers the stores' directories

  void round() {
    std::vector<StandbyWanted> want = wanted();
    std::vector<std::pair<std::string, std::shared_ptr<Entry>>> todo;
    std::vector<std::shared_ptr<Entry>> gone;
    {
      std::lock_guard lock(mu);
      std::map<std::string, const StandbyWanted*> byFlow;
      for (const StandbyWanted& w : want) byFlow[w.flow] = &w;
      for (auto it = entries.begin(); it != entries.end();) {
        auto w = byFlow.find(it->first);
        if (w == byFlow.end()) {
          gone.push_back(std::move(it->second));
          it = entries.erase(it);
        } else {
          ++it;
        }
      }
      for (const StandbyWanted& w : want) {
        if (!w.create && !entries.count(w.flow)) continue;
        std::shared_ptr<Entry>& e = entries[w.flow];
        if (!e) {
          e = std::make_shared<Entry>();
          const std::string store = (std::filesystem::path(dir) / std::to_string(++made)).string();
          try {
            e->standby = std::make_unique<StateStandby>(w.copy, store);
            logLine(fmt::format("flow \"{}\": keeping a standby copy of its state here", w.flow));
          } catch (const std::exception& err) {
            logLine(fmt::format("flow \"{}\": cannot keep a standby copy here: {}", w.flow,
                                err.what()));
            entries.erase(w.flow);
            continue;
          }
        }
        todo.emplace_back(w.flow, e);
      }
    }
    for (std::shared_ptr<Entry>& e : gone) {
      std::lock_guard lock(e->mu);
      e->standby.reset();  // its store goes with it
    }
    for (auto& [flow, e] : todo) {
      if (stopping) return;  // a stop waits for one standby's read at most
      std::optional<CheckpointInfo> kept;
      std::shared_ptr<const StoredReader> state;
      {
        std::lock_guard lock(e->mu);
        if (!e->standby) continue;  // taken over meanwhile
        try {
          e->standby->advance(kReadMicros);
          e->complained = false;
        } catch (const std::exception& err) {
          if (!e->complained) {
            logLine(
                fmt::format("flow \"{}\": the standby copy cannot read on (tried again "
                            "every second): {}",
                            flow, err.what()));
          }
          e->complained = true;
        }
        kept = e->standby->checkpoint();
        // Between two reads of the copy: the store holds exactly `kept`.
        try {
          state = e->standby->reader();
        } catch (const std::exception& err) {
          logLine(fmt::format("flow \"{}\": the standby copy cannot be read: {}", flow,
                              err.what()));
          kept.reset();
        }
      }
      std::shared_ptr<const StoredReader> replaced;  // let go outside the lock
      std::lock_guard lock(mu);
      e->kept = std::move(kept);
      replaced = std::exchange(e->state, std::move(state));
    }
  }

  void run() {
    std::unique_lock lock(mu);
    while (!stopping) {
      lock.unlock();
      try {
        round();
      } catch (const std::exception& err) {
        logLine(fmt::format("standby copies: {} (tried again in a second)", err.what()));
      }
      lock.lock();
      cv.wait_for(lock, kRound, [&] { return stopping.load(); });
    }
  }
};

ClusterStandbys::ClusterStandbys(std::string dir) : impl_(std::make_unique<Impl>()) {
  impl_->dir = std::move(dir);
  std::error_code ec;
  std::filesystem::remove_all(impl_->dir, ec);
}

ClusterStandbys::~ClusterStandbys() {
  stop();
}

void ClusterStandbys::start(std::function<std::vector<StandbyWanted>()> wanted) {
  impl_->wanted = std::move(wanted);
  impl_->thread = std::thread([this] { impl_->run(); });
  pthread_setname_np(impl_->thread.native_handle(), "standbys");
}

void ClusterStandbys::stop() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
  std::lock_guard lock(impl_->mu);
  impl_->entries.clear();
}

std::optional<CheckpointInfo> ClusterStandbys::takeOver(const std::string& flow,
                                                        CheckpointDir& checkpoints,
                                                        const CheckpointInfo& target) {
  std::shared_ptr<Impl::Entry> e;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->entries.find(flow);
    if (it == impl_->entries.end()) return std::nullopt;
    e = std::move(it->second);
    impl_->entries.erase(it);
  }
  std::lock_guard lock(e->mu);
  if (!e->standby) return std::nullopt;
  std::optional<CheckpointInfo> out;
  try {
    out = e->standby->takeOver(checkpoints, target, kTakeOverQuietMicros);
    if (!out) {
      logLine(
          fmt::format("flow \"{}\": the standby copy did not reach epoch {}; reading the "
                      "state copy instead",
                      flow, target.epoch));
    }
  } catch (const std::exception& err) {
    logLine(
        fmt::format("flow \"{}\": the standby copy cannot be taken over ({}); reading the "
                    "state copy instead",
                    flow, err.what()));
  }
  e->standby.reset();
  return out;
}

std::optional<StandbyRead> ClusterStandbys::read(const std::string& flow) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->entries.find(flow);
  if (it == impl_->entries.end()) return std::nullopt;
  StandbyRead out;
  if (it->second->state) {
    out.checkpoint = it->second->kept;
    out.state = it->second->state;
  }
  return out;
}

std::optional<CheckpointInfo> ClusterStandbys::kept(const std::string& flow) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->entries.find(flow);
  if (it == impl_->entries.end()) return std::nullopt;
  return it->second->kept;
}

}  // namespace rtsql
