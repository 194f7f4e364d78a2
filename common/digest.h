// SHA-256 and HMAC-SHA-256 of byte strings, on OpenSSL: the one place rtsql
// computes them, for SCRAM (server/pgwire/auth.cpp), the HTTP endpoint's
// credentials cache, and request signing (connectors/kinesis/sigv4.h).
#pragma once

#include <string>
#include <string_view>

#include "common/hex.h"  // lowerHex(), how digests are printed

namespace rtsql {

// The 32-byte digest, as raw bytes.
std::string sha256(std::string_view data);
std::string hmacSha256(std::string_view key, std::string_view data);

}  // namespace rtsql
