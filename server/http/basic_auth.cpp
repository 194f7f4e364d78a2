#include "server/http/basic_auth.h"

#include <cctype>
#include <string>

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

std::optional<Reply> authorize(const PasswordCheck& check, std::string_view target,
                               std::string_view authorization) {
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
  if (!check(pair.substr(0, colon), pair.substr(colon + 1))) {
    return unauthorized("password authentication failed");
  }
  return std::nullopt;
}

}  // namespace rtsql::http
