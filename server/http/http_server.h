// rtsqld's HTTP endpoint: /healthz, /flows, /flows/<name>/progress and
// /metrics (routes.h), an HTTP/1.1 server on Boost.Beast for monitoring tools
// such as Prometheus and for scripts that want progress JSON without a
// PostgreSQL driver.
//
// Threading: sockets are served on the caller's io_context (each connection on
// its own strand), but routes run on the server's own worker thread: reading
// progress takes each flow's lock, and a flow that is stopping may hold it for
// a while, which must not stall the io_context the PostgreSQL listener shares.
// POST /sql runs on statement threads of its own (maxSqlStatements of them): a
// live SELECT waits for its rows for seconds, which must not stall /metrics.
// Requests are bounded in size, every read and write has a deadline, and the
// number of connections is capped, overall and per peer address, so a slow or
// hostile client costs little. /healthz stays answerable when the cap is
// reached: a connection over it may still ask for /healthz (and only that),
// within a short deadline, and a newcomer takes the place of the oldest such
// connection that has not sent its request, so idle sockets cannot make a
// liveness probe fail. A request whose Host header names another server is
// refused (host_header.h), and every answer forbids framing and sniffing.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/http/basic_auth.h"
#include "server/http/source.h"

namespace rtsql::http {

struct HttpServerOptions {
  // rtsqld binds it to the PostgreSQL listener's host: loopback unless a users
  // file makes it check who is asking (checkPassword).
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0 picks a free port; port() tells which
  size_t maxConnections = 64;
  // Of those, how many one peer address may hold; 0: half of maxConnections.
  size_t maxConnectionsPerPeer = 0;
  // Connections over either cap, each allowed one request within
  // overBudgetTimeout: GET /healthz is answered, anything else gets a 503.
  size_t maxOverBudgetConnections = 64;
  std::chrono::milliseconds overBudgetTimeout = std::chrono::seconds(2);
  // Host header names answered besides address literals, localhost and
  // `host` (host_header.h): rtsqld's --http-allowed-hosts.
  std::vector<std::string> allowedHosts;
  // POST /sql statements running at once; a further one is answered 503.
  size_t maxSqlStatements = 4;
  // The whole request (line, headers and any body) must fit; a larger one is
  // answered 413 and the connection closed.
  size_t maxRequestBytes = 16 * 1024;
  // Deadline for reading one request (including waiting for it on a kept-alive
  // connection) and for writing one response.
  std::chrono::milliseconds timeout = std::chrono::seconds(10);
  // When set, requests need Basic credentials it accepts (basic_auth.h).
  PasswordCheck checkPassword;
  // With checkPassword: what a user's credentials are now (basic_auth.h).
  // Credentials checked once are then accepted from a cache (CredentialCache)
  // until they expire or this changes; without it, until they expire.
  CredentialStamp credentialStamp;
  // When set, the endpoint speaks HTTPS only, with this context's certificate
  // (rtsqld's --http-tls: the PostgreSQL listener's --tls-cert and --tls-key),
  // so that Basic credentials never cross the network in the clear.
  std::shared_ptr<boost::asio::ssl::context> tls;
};

struct ServerState;
class Listener;

class HttpServer {
 public:
  // `source` must outlive the server.
  HttpServer(boost::asio::io_context& io, const Source& source, HttpServerOptions options = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts accepting. Throws std::runtime_error naming the address
  // when it cannot listen there.
  void start();
  // The bound port (the real one when options.port was 0); 0 before start().
  uint16_t port() const { return port_; }
  // Stops accepting and closes every connection. Safe from any thread, more
  // than once; the destructor calls it and waits for the worker thread.
  void stop();

 private:
  boost::asio::io_context& io_;
  std::shared_ptr<ServerState> state_;
  std::shared_ptr<Listener> listener_;
  // Owned here, not by the state the connections share, so that it is never
  // destroyed on its own thread.
  std::unique_ptr<boost::asio::thread_pool> workers_;
  std::unique_ptr<boost::asio::thread_pool> sqlWorkers_;
  uint16_t port_ = 0;
};

}  // namespace rtsql::http
