#include "server/privileges.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <system_error>

#include "common/error.h"
#include "common/file_beneath.h"
#include "common/schema.h"
#include "connectors/net/http_url.h"
#include "connectors/net/outbound_policy.h"
#include "connectors/provider.h"
#include "server/users.h"

namespace rtsql {

namespace fs = std::filesystem;

Privileges::Privileges(std::shared_ptr<const UserStore> users, std::vector<std::string> superusers,
                       const std::vector<std::string>& filesDirs,
                       const std::vector<std::string>& ownPaths)
    : users_(std::move(users)), superusers_(std::move(superusers)) {
  for (const std::string& dir : filesDirs) {
    std::error_code ec;
    fs::path resolved = fs::canonical(dir, ec);
    if (ec || !fs::is_directory(resolved, ec)) {
      throw SqlError(sqlstate::kIoError,
                     fmt::format("--files-dir \"{}\" is not a directory rtsqld can reach", dir));
    }
    // A file sink could otherwise append to the catalog, a flow's state or
    // the users file.
    for (const std::string& own : ownPaths) {
      if (own.empty()) continue;
      const std::optional<std::string> ownResolved = resolveServerPath(own);
      if (ownResolved && (pathInside(*ownResolved, resolved.string()) ||
                          pathInside(resolved.string(), *ownResolved))) {
        throw SqlError(sqlstate::kInvalidParameterValue,
                       fmt::format("--files-dir \"{}\" overlaps rtsqld's own \"{}\"", dir, own),
                       SqlError::npos,
                       "Statements may write files in --files-dir; give it a directory apart "
                       "from --data-dir and the users file.");
      }
    }
    filesDirs_.push_back(resolved.string());
  }
}

bool Privileges::isSuperuser(std::string_view user) const {
  if (!users_) return true;  // trust mode: whoever connects runs the server
  if (std::find(superusers_.begin(), superusers_.end(), user) != superusers_.end()) return true;
  return !user.empty() && users_->firstUser() == user;
}

void Privileges::requireSuperuser(std::string_view user, std::string_view action,
                                  const std::string& hint) const {
  if (isSuperuser(user)) return;
  throw SqlError(sqlstate::kInsufficientPrivilege,
                 fmt::format("permission denied to {}: user \"{}\" is not a superuser", action, user),
                 SqlError::npos, hint);
}

bool Privileges::owns(std::string_view user, std::string_view owner) const {
  return isSuperuser(user) || (!owner.empty() && owner == user);
}

void Privileges::requireOwner(std::string_view user, std::string_view owner,
                              std::string_view action, size_t pos) const {
  if (owns(user, owner)) return;
  if (owner.empty()) {
    throw SqlError(sqlstate::kInsufficientPrivilege,
                   fmt::format("permission denied to {}: it belongs to the superusers, and user "
                               "\"{}\" is not one",
                               action, user),
                   pos,
                   "It was made before rtsqld recorded owners, so only a superuser may change it; "
                   "ask one.");
  }
  throw SqlError(sqlstate::kInsufficientPrivilege,
                 fmt::format("permission denied to {}: it belongs to user \"{}\"", action, owner),
                 pos, fmt::format("Only its owner \"{}\" or a superuser may do that.", owner));
}

void Privileges::checkFile(std::string_view user, const OptionEntry& option) const {
  if (filesDirs_.empty()) {
    if (isSuperuser(user)) return;
    throw SqlError(sqlstate::kInsufficientPrivilege,
                   fmt::format("permission denied to use the server's file \"{}\" (option '{}'): "
                               "user \"{}\" is not a superuser",
                               option.value, option.key, user),
                   option.valuePos,
                   "Only superusers may name files on the server unless its operator allows a "
                   "directory with rtsqld --files-dir DIR (see docs/security.md, \"Privileges\").");
  }
  if (auto path = resolveServerPath(option.value)) {
    for (const std::string& dir : filesDirs_) {
      if (pathInside(*path, dir)) return;
    }
  }
  std::string dirs;
  for (const std::string& dir : filesDirs_) dirs += (dirs.empty() ? "" : ", ") + dir;
  throw SqlError(sqlstate::kInsufficientPrivilege,
                 fmt::format("permission denied to use the server's file \"{}\" (option '{}'): it "
                             "is outside the directories rtsqld allows",
                             option.value, option.key),
                 option.valuePos,
                 fmt::format("Name a file inside {} (links and '..' are followed before the "
                             "check); rtsqld --files-dir sets the directories.",
                             dirs));
}

void Privileges::checkProgram(std::string_view user, const OptionEntry& option) const {
  if (isSuperuser(user)) return;
  throw SqlError(sqlstate::kInsufficientPrivilege,
                 fmt::format("permission denied to set option '{}': it makes the server load a "
                             "library or run a command, and user \"{}\" is not a superuser",
                             option.key, user),
                 option.valuePos, "Ask a superuser to create this source or sink.");
}

void Privileges::checkDestination(std::string_view user, const OptionEntry& option) const {
  std::string why;
  const std::optional<HttpUrl> url = parseHttpUrl(option.value, why);
  if (!url) return;  // the connector's own checks say what is wrong with it
  const net::OutboundPolicy& policy = net::OutboundPolicy::process();
  if (!policy.configured()) {
    if (isSuperuser(user)) return;
    throw SqlError(sqlstate::kInsufficientPrivilege,
                   fmt::format("permission denied to aim the server at \"{}\" (option '{}'): "
                               "user \"{}\" is not a superuser",
                               option.value, option.key, user),
                   option.valuePos,
                   "Only superusers may name the places rtsqld connects to, unless its operator "
                   "lists them with rtsqld --outbound-allow (see docs/security.md, \"What a user "
                   "may aim rtsqld at\").");
  }
  // With an allow-list, whoever names the destination: what an address
  // literal or a listed name is can be told now, a name under a network
  // entry when it is resolved, right before each connection.
  if (policy.mayAllow(url->host, static_cast<uint16_t>(std::stoi(url->port)))) return;
  throw SqlError(sqlstate::kInsufficientPrivilege,
                 fmt::format("permission denied to aim the server at \"{}\" (option '{}'): {}:{} "
                             "is not in the outbound allow-list of rtsqld",
                             option.value, option.key, url->host, url->port),
                 option.valuePos,
                 fmt::format("rtsqld --outbound-allow lists the destinations statements may name "
                             "(now: {}); loopback, link-local and metadata addresses only when an "
                             "entry names them.",
                             policy.describe()));
}

void Privileges::checkBrokers(const OptionEntry& option) const {
  const net::OutboundPolicy& policy = net::OutboundPolicy::process();
  if (!policy.configured()) return;
  // 'host:port' entries, librdkafka's way: an optional 'proto://' before
  // each, an IPv6 address in brackets.
  size_t start = 0;
  while (start <= option.value.size()) {
    size_t end = option.value.find(',', start);
    if (end == std::string::npos) end = option.value.size();
    std::string broker = option.value.substr(start, end - start);
    start = end + 1;
    while (!broker.empty() && std::isspace(static_cast<unsigned char>(broker.front()))) {
      broker.erase(broker.begin());
    }
    while (!broker.empty() && std::isspace(static_cast<unsigned char>(broker.back()))) {
      broker.pop_back();
    }
    if (broker.empty() || iequals(broker, "embedded") || iequals(broker, "local")) continue;
    if (const size_t scheme = broker.find("://"); scheme != std::string::npos) {
      broker.erase(0, scheme + 3);
    }
    std::string host = broker;
    uint16_t port = 9092;  // librdkafka's default
    const size_t colon = broker.rfind(':');
    const bool bracketed = !broker.empty() && broker.front() == '[';
    if (colon != std::string::npos && (!bracketed || colon > broker.find(']'))) {
      host = broker.substr(0, colon);
      const std::string digits = broker.substr(colon + 1);
      if (digits.empty() || digits.size() > 5 ||
          digits.find_first_not_of("0123456789") != std::string::npos ||
          std::stoi(digits) > 65535) {
        continue;  // the connector's own checks say what is wrong with it
      }
      port = static_cast<uint16_t>(std::stoi(digits));
    }
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    if (policy.mayAllow(host, port)) continue;
    throw SqlError(sqlstate::kInsufficientPrivilege,
                   fmt::format("permission denied to aim the server at the Kafka broker \"{}\" "
                               "(option '{}'): it is not in the outbound allow-list of rtsqld",
                               broker, option.key),
                   option.valuePos,
                   fmt::format("rtsqld --outbound-allow lists the destinations statements may "
                               "name (now: {}); 'embedded' is always allowed.",
                               policy.describe()));
  }
}

void Privileges::checkServerCredentials(std::string_view user) const {
  if (isSuperuser(user)) return;
  throw SqlError(sqlstate::kInsufficientPrivilege,
                 fmt::format("permission denied to use the server's own AWS credentials: user "
                             "\"{}\" is not a superuser",
                             user),
                 SqlError::npos,
                 "Give the source keys of its own: 'kinesis.accessKeyId' and "
                 "'kinesis.secretKey' (and 'kinesis.sessionToken' for temporary ones).");
}

void Privileges::checkOptions(std::string_view user, const std::string& connector,
                              const Options& options) const {
  const ServerSideOptions found = serverSideOptions(connector, options);
  for (const OptionEntry* e : found.programs) checkProgram(user, *e);
  for (const OptionEntry* e : found.files) checkFile(user, *e);
  for (const OptionEntry* e : found.destinations) checkDestination(user, *e);
  for (const OptionEntry* e : found.brokers) checkBrokers(*e);
  if (found.serverCredentials) checkServerCredentials(user);
}

}  // namespace rtsql
