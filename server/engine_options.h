// What rtsqld configures an Engine (server/engine.h) with: the data directory,
// the task slots, the users and who may do what, and the cluster's catalog.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace rtsql {

class ClusterCatalog;
class UserStore;

struct EngineOptions {
  std::string dataDir;
  int slots = 64;
  std::string embeddedBootstrap;  // empty: no embedded broker
  // The --users-file users, shared with the protocol server; CREATE / ALTER /
  // DROP USER change them. Null without a users file.
  std::shared_ptr<UserStore> users;
  // Who may do what (server/privileges.h): the superusers besides the users
  // file's first user (--superuser), the directories statements may name files
  // in (--files-dir), and the task slots one user's live queries may hold
  // (--max-live-query-slots-per-user; 0: half of `slots`, at least 1).
  std::vector<std::string> superusers;
  std::vector<std::string> filesDirs;
  int maxLiveQuerySlotsPerUser = 0;
  // rtsqld --cluster: the cluster's catalog topic (server/cluster/catalog.h),
  // which then holds the catalog and places the flows (server/cluster/node.h).
  // Null for a server of its own.
  std::shared_ptr<ClusterCatalog> cluster;
};

}  // namespace rtsql
