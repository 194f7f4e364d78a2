// The holders of views that could not answer a read lately, so that the
// reads that come soon after go to this node's standby copy at once rather
// than each waiting for a frozen holder again (rtsql.view_read = 'any',
// server/views/view_reads.h; docs/sql.md, "Reading a view from a standby
// copy").
//
// A holder is remembered for a view when a read of it sent there failed and
// the standby copy answered instead; for a short while (kHolderOutageWindow)
// or until the membership names another holder of the view, whichever is
// first. Reads do not renew it: once it ends, the next read tries the holder
// again. Time is given by the caller (a steady clock), so that it is tested
// without waiting.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace rtsql {

inline constexpr std::chrono::milliseconds kHolderOutageWindow{5000};

class HolderOutages {
 public:
  using Clock = std::chrono::steady_clock;

  explicit HolderOutages(Clock::duration window = kHolderOutageWindow) : window_(window) {}

  // `holder` could not answer a read of `view` at `now`, saying `error`.
  void failed(const std::string& view, const std::string& holder, const std::string& error,
              Clock::time_point now);
  // Why a read of `view` at `now` does not ask `holder`, its holder now: a
  // NOTICE's text naming what the holder last said and how long ago. Nullopt
  // when it is to be asked (not remembered, the window over, or another node
  // was remembered for the view).
  std::optional<std::string> skip(const std::string& view, const std::string& holder,
                                  Clock::time_point now);
  // Forgets `view` (a read of it was answered by its holder, or it was dropped).
  void forget(const std::string& view);

 private:
  struct Outage {
    std::string holder;
    std::string error;
    Clock::time_point at;
  };
  const Clock::duration window_;
  std::mutex mu_;
  std::map<std::string, Outage> outages_;  // by lower-cased view name
};

}  // namespace rtsql
