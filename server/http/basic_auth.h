// Who may read the HTTP endpoint. With a users file (--users-file) rtsqld
// trusts no client it has not authenticated, on the HTTP endpoint as on the
// PostgreSQL protocol: every request but /healthz (which liveness probes call
// without credentials, and which tells nothing about flows) must carry HTTP
// Basic credentials (RFC 7617) of a user of that file. Without a users file
// the endpoint is open, and rtsqld then listens on loopback only.
//
// Basic credentials are the password itself, base64-encoded: across a network
// the endpoint belongs behind a TLS-terminating proxy (docs/operations.md).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "server/http/routes.h"

namespace rtsql::http {

// True when `password` is `user`'s. Runs on the endpoint's worker thread: it
// may take milliseconds (a SCRAM verifier's key derivation).
using PasswordCheck = std::function<bool(std::string_view user, std::string_view password)>;

// What the user's credentials are now: a value that changes whenever the
// user's password does or the user is dropped (rtsqld gives the address of
// the user's verifier, which ALTER and DROP USER replace). A cached check
// holds only while it is unchanged.
using CredentialStamp = std::function<uint64_t(std::string_view user)>;

// Basic credentials checked recently. The web console polls every second or
// two, and each check derives a key (PBKDF2, about a millisecond of CPU): the
// cache answers a repeated Authorization header without it. Entries are keyed
// by the SHA-256 of the header's value (no password is kept), hold for `ttl`
// after the check (a refusal only for `refusalTtl`: a client repeating wrong
// credentials costs nothing, one trying new ones pays a derivation each), and
// are dropped when the user's stamp changes. At most `capacity` entries: when
// full, expired ones go first, then the oldest. Thread-safe.
class CredentialCache {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Verdict { Unknown, Accepted, Refused };

  explicit CredentialCache(size_t capacity = 256, Clock::duration ttl = std::chrono::seconds(60),
                           Clock::duration refusalTtl = std::chrono::seconds(2));

  Verdict lookup(std::string_view authorization, uint64_t stamp, Clock::time_point now);
  void remember(std::string_view authorization, bool accepted, uint64_t stamp,
                Clock::time_point now);
  size_t size() const;

 private:
  struct Entry {
    bool accepted = false;
    uint64_t stamp = 0;
    Clock::time_point checkedAt;
    Clock::time_point expiresAt;
  };
  const size_t capacity_;
  const Clock::duration ttl_;
  const Clock::duration refusalTtl_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;  // by SHA-256 of the header value
};

// nullopt when the request may go on to its route: no check is configured,
// the target is /healthz, or `authorization` (the Authorization header's
// value, empty when absent) holds Basic credentials `check` accepts. Else the
// 401 reply, with the WWW-Authenticate challenge; it never says whether the
// user exists. With a `cache`, a header it remembers (under `stamp`'s value
// for its user, 0 without one) is answered without calling `check`. When
// the request may go on, `user` (if given) is set to who sent it; empty
// without a check.
std::optional<Reply> authorize(
    const PasswordCheck& check, std::string_view target, std::string_view authorization,
    CredentialCache* cache = nullptr, const CredentialStamp& stamp = {},
    CredentialCache::Clock::time_point now = CredentialCache::Clock::now(),
    std::string* user = nullptr);

}  // namespace rtsql::http
