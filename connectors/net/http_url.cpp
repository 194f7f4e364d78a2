// Parsing of outbound URLs (see http_url.h).
#include "connectors/net/http_url.h"

#include <algorithm>
#include <cctype>

#include "common/schema.h"

namespace rtsql {

std::optional<HttpUrl> parseHttpUrl(std::string_view url, std::string& why) {
  HttpUrl out;
  std::string_view rest;
  if (startsWithI(url, "http://")) {
    rest = url.substr(7);
  } else if (startsWithI(url, "https://")) {
    out.tls = true;
    rest = url.substr(8);
  } else {
    why = "the scheme must be http:// or https://";
    return std::nullopt;
  }
  size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  std::string_view target = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
  if (size_t hash = target.find('#'); hash != std::string_view::npos)
    target = target.substr(0, hash);
  if (authority.find('@') != std::string_view::npos) {
    why = "user information in the URL is not sent";
    return std::nullopt;
  }
  std::string_view host = authority;
  std::string_view port;
  bool hasPort = false;  // a ':' after the host, even with nothing behind it
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      why = "an IPv6 address needs its closing ']'";
      return std::nullopt;
    }
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        why = "expected ':' and a port after the IPv6 address";
        return std::nullopt;
      }
      port = after.substr(1);
      hasPort = true;
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    hasPort = true;
  }
  if (host.empty()) {
    why = "the URL has no host";
    return std::nullopt;
  }
  for (char c : host) {
    if (std::isspace(static_cast<unsigned char>(c)) || c < 0x20) {
      why = "the host contains a space or a control character";
      return std::nullopt;
    }
  }
  if (hasPort) {
    bool digits =
        !port.empty() && port.size() <= 5 &&
        std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
    int n = digits ? std::stoi(std::string(port)) : 0;
    if (!digits || n < 1 || n > 65535) {
      why = "the port must be a number from 1 to 65535";
      return std::nullopt;
    }
    out.port = std::to_string(n);
    out.defaultPort = false;
  } else {
    out.port = out.tls ? "443" : "80";
  }
  for (char c : target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      why = "the path contains a space or a control character";
      return std::nullopt;
    }
  }
  out.host = std::string(host);
  out.target = target.empty() ? "/" : std::string(target);
  if (out.target.front() == '?') out.target.insert(out.target.begin(), '/');
  return out;
}

}  // namespace rtsql
