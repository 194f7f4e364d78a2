#include "server/http/basic_auth.h"

#include <cctype>
#include <iterator>
#include <string>

#include "common/digest.h"
#include "server/pgwire/auth.h"

namespace rtsql::http {

namespace {

Reply unauthorized(const char* message) {
  Reply r;
  r.status = 401;
  r.contentType = kJsonContentType;
  r.body = std::string("{\"error\":\"") + message + "\"}\n";
  r.headers.emplace_back("WWW-Authenticate", "Basic realm=\"rtsqld\", charset=\"UTF-8\"");
  return r;
}

bool iequalsAscii(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

}  // namespace

CredentialCache::CredentialCache(size_t capacity, Clock::duration ttl, Clock::duration refusalTtl)
    : capacity_(capacity == 0 ? 1 : capacity), ttl_(ttl), refusalTtl_(refusalTtl) {}

CredentialCache::Verdict CredentialCache::lookup(std::string_view authorization, uint64_t stamp,
                                                 Clock::time_point now) {
  const std::string key = sha256(authorization);
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return Verdict::Unknown;
  if (it->second.stamp != stamp || now >= it->second.expiresAt) {
    entries_.erase(it);
    return Verdict::Unknown;
  }
  return it->second.accepted ? Verdict::Accepted : Verdict::Refused;
}

void CredentialCache::remember(std::string_view authorization, bool accepted, uint64_t stamp,
                               Clock::time_point now) {
  std::string key = sha256(authorization);
  std::lock_guard lock(mu_);
  if (entries_.size() >= capacity_ && !entries_.count(key)) {
    for (auto it = entries_.begin(); it != entries_.end();) {
      it = now >= it->second.expiresAt ? entries_.erase(it) : std::next(it);
    }
    while (entries_.size() >= capacity_) {
      auto oldest = entries_.begin();
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->second.checkedAt < oldest->second.checkedAt) oldest = it;
      }
      entries_.erase(oldest);
    }
  }
  entries_[std::move(key)] = Entry{accepted, stamp, now, now + (accepted ? ttl_ : refusalTtl_)};
}

size_t CredentialCache::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

std::optional<Reply> authorize(const PasswordCheck& check, std::string_view target,
                               std::string_view authorization, CredentialCache* cache,
                               const CredentialStamp& stamp, CredentialCache::Clock::time_point now,
                               std::string* authenticated) {
  if (!check) return std::nullopt;
  const std::string_view path = target.substr(0, target.find('?'));
  if (path == "/healthz") return std::nullopt;
  if (authorization.empty())
    return unauthorized("authentication required: HTTP Basic credentials of an rtsqld user");
  // "Basic" SP token68; the scheme is case-insensitive, spaces around are allowed.
  const size_t sp = authorization.find(' ');
  if (sp == std::string_view::npos || !iequalsAscii(authorization.substr(0, sp), "Basic")) {
    return unauthorized("only HTTP Basic authentication is accepted");
  }
  std::string_view token = authorization.substr(sp + 1);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  const std::optional<std::string> decoded = pgwire::decodeBase64(token);
  const size_t colon = decoded ? decoded->find(':') : std::string::npos;
  if (colon == std::string::npos) return unauthorized("malformed Basic credentials");
  const std::string_view pair(*decoded);
  const std::string_view user = pair.substr(0, colon);
  const uint64_t userStamp = stamp ? stamp(user) : 0;
  if (cache) {
    switch (cache->lookup(authorization, userStamp, now)) {
      case CredentialCache::Verdict::Accepted:
        if (authenticated) *authenticated = user;
        return std::nullopt;
      case CredentialCache::Verdict::Refused:
        return unauthorized("password authentication failed");
      case CredentialCache::Verdict::Unknown:
        break;
    }
  }
  const bool accepted = check(user, pair.substr(colon + 1));
  if (cache) cache->remember(authorization, accepted, userStamp, now);
  if (!accepted) return unauthorized("password authentication failed");
  if (authenticated) *authenticated = user;
  return std::nullopt;
}

}  // namespace rtsql::http
