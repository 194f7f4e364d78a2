#include "server/http/host_header.h"

#include <boost/asio/ip/address.hpp>
#include <cctype>

namespace rtsql::http {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The name of "name", "name." or "name:port", lower case, without the dot.
std::string nameOf(std::string_view s) {
  std::string out = lower(s);
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

bool isAddressLiteral(const std::string& text) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(text, ec);
  return !ec;
}

}  // namespace

bool hostAllowed(std::string_view host, std::string_view listenHost,
                 const std::vector<std::string>& names) {
  if (host.empty()) return true;
  if (host.front() == '[') {
    // "[v6]" or "[v6]:port": only an address may be in brackets.
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    const std::string_view rest = host.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return false;
    const std::string inside(host.substr(1, close - 1));
    return inside.find(':') != std::string::npos && isAddressLiteral(inside);
  }
  const size_t colon = host.rfind(':');
  if (colon != std::string_view::npos) {
    const std::string_view port = host.substr(colon + 1);
    for (char c : port) {
      if (c < '0' || c > '9') return false;
    }
    host = host.substr(0, colon);
  }
  // A second ':' would be an IPv6 address without brackets, which no client
  // sends.
  if (host.empty() || host.find(':') != std::string_view::npos) return false;
  const std::string name = nameOf(host);
  if (isAddressLiteral(name)) return true;
  constexpr std::string_view kLocal = "localhost";
  constexpr std::string_view kUnderLocal = ".localhost";
  if (name == kLocal || (name.size() > kUnderLocal.size() &&
                         name.compare(name.size() - kUnderLocal.size(), std::string::npos,
                                      kUnderLocal) == 0)) {
    return true;
  }
  if (!listenHost.empty() && name == nameOf(listenHost)) return true;
  for (const std::string& allowed : names) {
    if (name == nameOf(allowed)) return true;
  }
  return false;
}

}  // namespace rtsql::http
