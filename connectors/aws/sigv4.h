// AWS Signature Version 4: the Authorization header that AWS services (and
// their local stand-ins, such as kinesalite) require on every request. rtsql
// speaks to AWS over its own HTTP client (Boost.Beast), there being no AWS SDK
// for C++ in Debian, so it signs requests itself.
//
// The signature covers the method, the path, the query, every header given
// and a hash of the body, under a key derived from the secret key, the date,
// the region and the service. Tested against AWS's published SigV4 test suite
// (tests/data/aws4_testsuite, tests/unit/connectors/sigv4_test.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rtsql::aws {

struct Credentials {
  std::string accessKeyId;
  std::string secretAccessKey;
  std::string sessionToken;  // temporary credentials only; empty otherwise
};

// A request as it will be sent. `headers` must hold Host and X-Amz-Date (the
// time of signing, amzDate()); every header given is signed.
struct Request {
  std::string method;  // "POST"
  std::string path;    // "/", as sent, not percent-encoded
  std::string query;   // the query string without '?', as sent; may be empty
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

// What signing produced: the header to add, and the intermediate texts that
// AWS's error messages quote when a signature does not match.
struct Signature {
  std::string canonicalRequest;
  std::string stringToSign;
  std::string authorization;  // the Authorization header's value
};

// Signs `request` for `region` and `service` ("kinesis"). With a session
// token, adds the X-Amz-Security-Token header to `request` first (it is
// signed too). Throws std::invalid_argument when X-Amz-Date is missing or is
// not of the form 20150830T123600Z.
Signature sign(Request& request, const Credentials& credentials, std::string_view region,
               std::string_view service);

// The X-Amz-Date form of a time: "20150830T123600Z" (UTC).
std::string amzDate(int64_t epochSeconds);

// Percent-encodes everything but A-Z a-z 0-9 - . _ ~ (and '/' when
// `keepSlash`), as SigV4's canonical forms do, with upper-case hex.
std::string uriEncode(std::string_view text, bool keepSlash);

}  // namespace rtsql::aws
