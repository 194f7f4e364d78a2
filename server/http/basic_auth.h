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

#include <functional>
#include <optional>
#include <string_view>

#include "server/http/routes.h"

namespace rtsql::http {

// True when `password` is `user`'s. Runs on the endpoint's worker thread: it
// may take milliseconds (a SCRAM verifier's key derivation).
using PasswordCheck = std::function<bool(std::string_view user, std::string_view password)>;

// nullopt when the request may go on to its route: no check is configured,
// the target is /healthz, or `authorization` (the Authorization header's
// value, empty when absent) holds Basic credentials `check` accepts. Else the
// 401 reply, with the WWW-Authenticate challenge; it never says whether the
// user exists.
std::optional<Reply> authorize(const PasswordCheck& check, std::string_view target,
                               std::string_view authorization);

}  // namespace rtsql::http
