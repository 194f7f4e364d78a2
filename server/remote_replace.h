// CREATE OR REPLACE FLOW (or MATERIALIZED VIEW) issued on a node of a
// cluster that does not run the flow.
//
// Only the node that runs a flow can replace it at an epoch boundary: its
// running plan checkpoints, and the newest checkpoint's epoch goes into the
// state migration the catalog records with the new statement
// (server/flow_replace.h). So the node the statement reaches plans and checks
// the replace as a replace there would (the state plan, refused with its
// reasons; EXPLAIN prints it), then asks the flow's node to do it: it writes
// the flow's record again with a request among its settings (the statement,
// the session's user and settings, an id), and waits. The node that runs the
// flow reads the request and runs the statement as that session would run it
// there; its catalog write carries the new statement and migration and drops
// the request, in one record. The waiting statement answers when its node
// has applied that write; when the flow's node refuses the replace, it
// writes the refusal under the request's id instead, which the waiting
// statement answers with.
//
// The node that runs the flow may be down: the cluster gives the flow to
// another node within --node-timeout, and that node runs the request once
// it runs the flow (every node looks for requests of flows it runs). A
// statement that is not answered within kRemoteReplaceWaitSeconds, or is
// cancelled, takes its request back with another catalog write, and fails
// with 55000: nothing changed. (A request whose node crashed while waiting
// stays in the catalog and is run by the flow's node: it was checked like
// any replace.)
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "server/engine_context.h"

namespace rtsql {

// The flow control settings that hold a request and a refusal.
inline constexpr const char* kReplaceRequestSetting = "rtsql.replace_request";
inline constexpr const char* kReplaceRefusalSetting = "rtsql.replace_refused";
inline constexpr int kRemoteReplaceWaitSeconds = 60;

struct ReplaceRequest {
  std::string id;
  std::string sql;   // the CREATE OR REPLACE statement
  std::string user;  // who issued it
  std::vector<std::pair<std::string, std::string>> settings;  // the session's SET values
};

// A request as a setting's value (one catalog file record), and back; nullopt
// for a value that is not one.
std::string formatReplaceRequest(const ReplaceRequest& r);
std::optional<ReplaceRequest> parseReplaceRequest(const std::string& text);
// The request in a flow's settings, if any.
std::optional<ReplaceRequest> replaceRequestOf(
    const std::vector<std::pair<std::string, std::string>>& settings);

// The requests of the flows this node runs, each run on a thread of its own
// (the catalog's follower, which reads them, cannot write the catalog).
class ReplaceRequests {
 public:
  explicit ReplaceRequests(EngineContext& ctx) : ctx_(ctx) {}
  ~ReplaceRequests() { stop(); }
  ReplaceRequests(const ReplaceRequests&) = delete;
  ReplaceRequests& operator=(const ReplaceRequests&) = delete;

  // Starts looking for requests (a node of a cluster only).
  void start();
  // A flow's record came with a request: look now rather than next round.
  void wake();
  void stop();

 private:
  void run();
  // Runs the request of `flow` when this node runs the flow; false when
  // there is none to run here.
  bool runOne(const std::string& flow, const ReplaceRequest& request);

  EngineContext& ctx_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool woken_ = false;
};

}  // namespace rtsql
