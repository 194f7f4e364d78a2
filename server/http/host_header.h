// Which Host header values the HTTP endpoint answers: the defence against DNS
// rebinding. A web page on attacker.example whose name is made to resolve to
// 127.0.0.1 can have the victim's browser send requests to rtsqld, and read
// the answers as its own origin's; those requests carry
// `Host: attacker.example`. So the endpoint answers a Host only when it names
// the server as itself:
//   - an IP address literal (203.0.113.5, [::1]): a page reaches it only from
//     that address's own origin, never through a name it controls;
//   - localhost and any name under .localhost (browsers resolve these to
//     loopback themselves, RFC 6761);
//   - the listen address rtsqld was given (--host), when it is a name;
//   - a name the operator allows (--http-allowed-hosts: the names a proxy or
//     the clients use).
// The port and one trailing dot are ignored, and names compare without case.
// A request without a Host header (HTTP/1.0) is no browser's and is answered.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rtsql::http {

// True when a request with `host` (the Host header's value, empty when absent)
// may be answered by a server listening on `listenHost` that allows `names`.
bool hostAllowed(std::string_view host, std::string_view listenHost,
                 const std::vector<std::string>& names);

}  // namespace rtsql::http
