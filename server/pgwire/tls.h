// TLS for the PostgreSQL protocol server. A client asks for TLS with an
// SSLRequest before its startup packet; when the server has a certificate it
// answers 'S' and the rest of the connection runs inside a TLS session on the
// same socket (see Connection). The TLS layer is OpenSSL through
// boost::asio::ssl.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <memory>
#include <string>

namespace rtsql::pgwire {

using TlsContext = boost::asio::ssl::context;
// The TLS session wraps the connection's own socket, which stays the
// connection's member, so closing and shutting down work the same with or
// without TLS.
using TlsStream = boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>;

// A server context that offers TLS 1.2 and newer with the certificate chain in
// `certFile` (PEM) and the private key in `keyFile` (PEM). Throws
// std::runtime_error naming the file when either cannot be loaded or the key
// does not belong to the certificate.
std::shared_ptr<TlsContext> makeServerTlsContext(const std::string& certFile,
                                                 const std::string& keyFile);

// The tls-server-end-point channel-binding data of the context's certificate
// (RFC 5929): its hash with the certificate's signature digest, SHA-256 when
// that is MD5 or SHA-1. Empty when the signature names no single digest (for
// example Ed25519), in which case channel binding is not offered.
std::string tlsServerEndPoint(TlsContext& ctx);

}  // namespace rtsql::pgwire
