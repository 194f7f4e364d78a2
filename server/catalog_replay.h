// The replay of the catalog store at start and of another node's changes
// (catalog_replay.cpp), through the same statement handlers as a client's,
// and the thread that tries again what a restart put off.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "server/engine_context.h"
#include "server/remote_replace.h"

namespace rtsql {

class AlterStatements;

class CatalogStoreReplay {
 public:
  CatalogStoreReplay(EngineContext& ctx, AlterStatements& alter) : ctx_(ctx), alter_(alter) {}

  // Brings back what the catalog store holds and starts the flow registry's
  // supervisor (Engine::restore).
  void restore();
  // Ends the retries of what a restart put off.
  void stop();
  // Runs one statement of the store as `s` (a replaying session) runs it.
  void replayStatement(EngineSession& s, const std::string& sql, ResultWriter& out);
  // Adds a catalog flow and its registry entry, planned but not started.
  void restoreFlow(const CatalogRecord& record);

 private:
  // Applies what another writer of the catalog store changed in one write,
  // all of it under one hold of the statement lock. On its thread.
  void applyChanges(const std::vector<StoredChange>& changes);
  // One object's change, with the statement lock held.
  void applyChange(const StoredChange& change);
  void restoreDeferred();

  EngineContext& ctx_;
  AlterStatements& alter_;
  std::thread restorer_;
  std::mutex restorerMu_;
  std::condition_variable restorerCv_;
  std::atomic<bool> restorerStop_{false};
  // A node of a cluster: the replaces other nodes ask of the flows it runs.
  ReplaceRequests requests_{ctx_};
};

}  // namespace rtsql
