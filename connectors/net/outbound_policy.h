// Where rtsqld may connect when a statement names the destination: the
// operator's allow-list (rtsqld --outbound-allow) and the addresses that stay
// refused unless it names them.
//
// Statements name outbound destinations in options ('schema.registry.url', an
// HTTP sink's 'url', 'kinesis.endpoint'). Without an allow-list only
// superusers may set such options (server/privileges.h) and rtsqld connects
// where they say. With one, every destination must match an entry, whoever
// named it, and the check runs on the addresses the name resolved to, right
// before each connection (connectors/net/http_client.h; no redirect is ever
// followed). An entry is
//   host           a name, matched as written (any address it resolves to)
//   address        an IPv4 or IPv6 address
//   network/bits   a CIDR block, "10.0.0.0/8", "2001:db8::/32"
// each optionally with ":port" ("[v6]:port" for an IPv6 address or block);
// without a port any port matches. Several entries may share one value,
// separated by commas.
//
// Loopback (127.0.0.0/8, ::1), link-local (169.254.0.0/16, fe80::/10, where
// cloud metadata services answer), "this host" (0.0.0.0/8, ::) and the
// metadata addresses of the large clouds (fd00:ec2::254, 100.100.100.200)
// are internal: a broad entry such as 0.0.0.0/0 does not reach them; only an
// entry that lies inside their range (127.0.0.1, 169.254.169.254/32) or the
// host's own name does. IPv4-mapped IPv6 addresses count as their IPv4 one.
#pragma once

#include <boost/asio/ip/address.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rtsql::net {

class OutboundPolicy {
 public:
  struct Entry {
    std::string host;                // a name, lowercase; empty for a network
    boost::asio::ip::address network;
    int prefix = 0;                  // the network's significant bits
    uint16_t port = 0;               // 0: any port
    std::string text;                // as written, for messages
  };

  OutboundPolicy() = default;
  // The entries of the values of --outbound-allow; throws std::invalid_argument
  // naming the entry that is none of the forms above.
  static OutboundPolicy parse(const std::vector<std::string>& values);

  // Whether the operator gave an allow-list.
  bool configured() const { return !entries_.empty(); }
  const std::vector<Entry>& entries() const { return entries_; }

  // Whether rtsqld may connect to `address`:`port`, which the name `host`
  // (as the option wrote it) resolved to.
  bool allows(std::string_view host, const boost::asio::ip::address& address, uint16_t port) const;
  // Before any resolution: false when `host` is an address literal that
  // allows() refuses, or a name no entry could match (an allow-list without
  // a network entry and without that name).
  bool mayAllow(std::string_view host, uint16_t port) const;

  // Whether `address` is internal (see above).
  static bool internal(const boost::asio::ip::address& address);

  // The process's policy, set once at start (rtsqld's main) before any
  // statement runs; a process that never sets it has none configured.
  static const OutboundPolicy& process();
  static void setProcess(OutboundPolicy policy);

  // The entries as the operator wrote them, for messages.
  std::string describe() const;

 private:
  std::vector<Entry> entries_;
};

// Whether `address` lies in `network`/`prefix` (both of the same family after
// IPv4-mapped addresses are unmapped).
bool inNetwork(const boost::asio::ip::address& address, const boost::asio::ip::address& network,
               int prefix);

}  // namespace rtsql::net
