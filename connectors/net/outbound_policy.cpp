// The outbound allow-list (see outbound_policy.h).
#include "connectors/net/outbound_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>

namespace rtsql::net {

namespace ip = boost::asio::ip;

namespace {

// An IPv4-mapped IPv6 address as its IPv4 one, so that ::ffff:127.0.0.1 is
// loopback and matches 127.0.0.0/8.
ip::address unmapped(const ip::address& a) {
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    return ip::make_address_v4(ip::v4_mapped, a.to_v6());
  }
  return a;
}

std::vector<unsigned char> bytesOf(const ip::address& a) {
  if (a.is_v4()) {
    const auto b = a.to_v4().to_bytes();
    return {b.begin(), b.end()};
  }
  const auto b = a.to_v6().to_bytes();
  return {b.begin(), b.end()};
}

struct Range {
  const char* network;
  int prefix;
};

// The internal ranges: loopback, link-local, this host, cloud metadata.
constexpr std::array<Range, 8> kInternal = {{{"127.0.0.0", 8},
                                             {"169.254.0.0", 16},
                                             {"0.0.0.0", 8},
                                             {"100.100.100.200", 32},
                                             {"::1", 128},
                                             {"fe80::", 10},
                                             {"::", 128},
                                             {"fd00:ec2::254", 128}}};

// The internal range `a` lies in: its prefix, or -1 when it is in none.
int internalPrefix(const ip::address& a) {
  for (const Range& r : kInternal) {
    if (inNetwork(a, ip::make_address(r.network), r.prefix)) return r.prefix;
  }
  return -1;
}

bool validHostName(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  return std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_';
  });
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

uint16_t parsePort(std::string_view text, const std::string& entry) {
  if (text.empty() || text.size() > 5 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    throw std::invalid_argument(
        fmt::format("\"{}\": the port must be a number from 1 to 65535", entry));
  }
  const int n = std::stoi(std::string(text));
  if (n < 1 || n > 65535) {
    throw std::invalid_argument(
        fmt::format("\"{}\": the port must be a number from 1 to 65535", entry));
  }
  return static_cast<uint16_t>(n);
}

OutboundPolicy::Entry parseEntry(std::string_view text) {
  const std::string entry(text);
  OutboundPolicy::Entry e;
  e.text = entry;
  std::string_view what = text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) {
      throw std::invalid_argument(
          fmt::format("\"{}\": an IPv6 address needs its closing ']'", entry));
    }
    what = text.substr(1, close - 1);
    std::string_view after = text.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        throw std::invalid_argument(
            fmt::format("\"{}\": expected ':' and a port after ']'", entry));
      }
      e.port = parsePort(after.substr(1), entry);
    }
  } else if (std::count(text.begin(), text.end(), ':') == 1) {
    const size_t colon = text.find(':');
    what = text.substr(0, colon);
    e.port = parsePort(text.substr(colon + 1), entry);
  }
  // Two colons or more without brackets: an IPv6 address or block, no port.
  std::string_view address = what;
  std::optional<int> bits;
  if (const size_t slash = what.find('/'); slash != std::string_view::npos) {
    address = what.substr(0, slash);
    std::string_view b = what.substr(slash + 1);
    if (b.empty() || b.size() > 3 ||
        !std::all_of(b.begin(), b.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      throw std::invalid_argument(fmt::format("\"{}\": the prefix length must be a number", entry));
    }
    bits = std::stoi(std::string(b));
  }
  boost::system::error_code ec;
  ip::address parsed = ip::make_address(std::string(address), ec);
  if (!ec) {
    parsed = unmapped(parsed);
    const int width = parsed.is_v4() ? 32 : 128;
    if (bits && *bits > width) {
      throw std::invalid_argument(
          fmt::format("\"{}\": an IPv{} prefix is at most {} bits", entry,
                      parsed.is_v4() ? 4 : 6, width));
    }
    e.network = parsed;
    e.prefix = bits.value_or(width);
    return e;
  }
  if (bits || !validHostName(address)) {
    throw std::invalid_argument(fmt::format(
        "\"{}\" is not a host, an address or a network/bits, each with an optional :port", entry));
  }
  e.host = lower(address);
  return e;
}

OutboundPolicy& processPolicy() {
  static OutboundPolicy policy;
  return policy;
}

}  // namespace

bool inNetwork(const ip::address& address, const ip::address& network, int prefix) {
  const ip::address a = unmapped(address);
  const ip::address n = unmapped(network);
  if (a.is_v4() != n.is_v4()) return false;
  const std::vector<unsigned char> bytesA = bytesOf(a);
  const std::vector<unsigned char> bytesN = bytesOf(n);
  int left = prefix;
  for (size_t i = 0; i < bytesA.size() && left > 0; ++i, left -= 8) {
    const unsigned mask = left >= 8 ? 0xffu : (0xffu << (8 - left)) & 0xffu;
    if ((bytesA[i] & mask) != (bytesN[i] & mask)) return false;
  }
  return true;
}

OutboundPolicy OutboundPolicy::parse(const std::vector<std::string>& values) {
  OutboundPolicy out;
  for (const std::string& value : values) {
    size_t start = 0;
    while (start <= value.size()) {
      size_t comma = value.find(',', start);
      if (comma == std::string::npos) comma = value.size();
      std::string_view item = std::string_view(value).substr(start, comma - start);
      while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
      while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
      if (item.empty()) throw std::invalid_argument("an empty entry");
      out.entries_.push_back(parseEntry(item));
      start = comma + 1;
    }
  }
  return out;
}

bool OutboundPolicy::internal(const ip::address& address) {
  return internalPrefix(address) >= 0;
}

bool OutboundPolicy::allows(std::string_view host, const ip::address& address,
                            uint16_t port) const {
  if (!configured()) return true;
  const std::string name = lower(host);
  const ip::address a = unmapped(address);
  const int inside = internalPrefix(a);
  for (const Entry& e : entries_) {
    if (e.port != 0 && e.port != port) continue;
    if (!e.host.empty()) {
      if (e.host == name) return true;
      continue;
    }
    if (!inNetwork(a, e.network, e.prefix)) continue;
    // An internal address only through an entry as narrow as its range.
    if (inside >= 0 && e.prefix < inside) continue;
    return true;
  }
  return false;
}

bool OutboundPolicy::mayAllow(std::string_view host, uint16_t port) const {
  if (!configured()) return true;
  boost::system::error_code ec;
  const ip::address literal = ip::make_address(std::string(host), ec);
  if (!ec) return allows(host, literal, port);
  const std::string name = lower(host);
  for (const Entry& e : entries_) {
    if (e.port != 0 && e.port != port) continue;
    if (e.host.empty() || e.host == name) return true;
  }
  return false;
}

const OutboundPolicy& OutboundPolicy::process() {
  return processPolicy();
}

void OutboundPolicy::setProcess(OutboundPolicy policy) {
  processPolicy() = std::move(policy);
}

std::string OutboundPolicy::describe() const {
  std::string out;
  for (const Entry& e : entries_) out += (out.empty() ? "" : ", ") + e.text;
  return out;
}

}  // namespace rtsql::net
