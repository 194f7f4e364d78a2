// An http:// or https:// URL taken apart for a request: what the schema
// registry's, the HTTP sink's and Kinesis's options name.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rtsql {

struct HttpUrl {
  bool tls = false;
  std::string host;    // without brackets for an IPv6 literal
  std::string port;    // "80" / "443" when the URL names none
  std::string target;  // path and query, "/" when empty
  bool defaultPort = true;
};

// Parses `url`; nullopt with `why` (a short reason) when it is not an
// absolute http or https URL with a host and without user information.
std::optional<HttpUrl> parseHttpUrl(std::string_view url, std::string& why);

}  // namespace rtsql
