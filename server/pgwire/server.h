// rtsqld's network front: a PostgreSQL v3 protocol server on Boost.Asio. It
// accepts clients, runs one Connection per client, and hands each simple query
// to a QueryHandler on a worker thread (statements may block), so any
// PostgreSQL client - psql, libpq, JDBC - can talk to rtsql.
//
// Threading: the caller runs the io_context (one or more threads), which
// accepts; the connections run there too, or on the server's own I/O
// threads (PgServerOptions::ioThreads, io_threads.h). Each connection's
// socket work is serialised on its own strand; statements run on a pool of
// worker threads that grows with the number of running statements.
//
// Where each part lives:
//   server.*               the listener and the connection limit
//   connection.*           one client's transport: socket, TLS, frames, outbox
//   state_machine.cpp      what each message means when: startup,
//                          authentication, the simple query cycle, skip to Sync
//   extended_connection.cpp  the extended query protocol (Parse, Bind,
//                          Describe, Execute, Close) and portal row limits
//   describe.*             a statement's columns, and NoData or RowDescription
//   codec.*, startup.cpp   message encoders and decoders
//   framing.*              the byte-level message builder and reader
//   extended.*             parameters as SQL literals, binary values, and the
//                          per-connection prepared statements and portals
//   auth.*, tls.*          SCRAM-SHA-256 and TLS
//   worker_pool.*          the threads statements run on
//   io_threads.*           the threads connections' I/O runs on, when the
//                          server has its own
// An exception from the QueryHandler becomes the client's error through
// server/handler_error.h, the same way on every path.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "server/pgwire/auth.h"
#include "server/query_handler.h"

namespace rtsql {
class UserStore;
}  // namespace rtsql

namespace rtsql::pgwire {

struct PgServerOptions {
  // Without password authentication the server must not be reachable from
  // other hosts, so it binds loopback unless told otherwise.
  std::string host = "127.0.0.1";
  uint16_t port = 5432;  // 0 picks a free port; port() tells which
  size_t maxConnections = 1000;
  // The largest frontend message. A Query or Parse above it gets 54000
  // "statement too large" and the session goes on; any other message above it
  // ends the connection.
  size_t maxMessageBytes = 64 * 1024 * 1024;
  // A connection's answers that wait for its client to read them, at most:
  // a statement that writes more waits, and the connection reads no more
  // messages until the client has taken some (a client that sends lookups
  // without reading their answers holds this much, not all it sent).
  size_t maxOutputBytes = 4 * 1024 * 1024;
  // TLS: with a certificate and key (PEM files), an SSLRequest is answered 'S'
  // and the session runs over TLS; without, it is answered 'N'.
  std::string tlsCertFile;
  std::string tlsKeyFile;
  // Refuse sessions that did not start TLS (needs a certificate).
  bool tlsRequired = false;
  // Users and their SCRAM-SHA-256 verifiers. When set, every session must
  // authenticate with a password; when null, every user is trusted (which is
  // why the server then binds loopback only).
  std::shared_ptr<const UserStore> users;
  // The verifier of the cluster's secret (rtsqld --cluster-secret-file): a
  // connection another node opened to forward a read of a view (startup
  // option rtsql.forwarded_by, server/views/view_forward.h) proves itself
  // with it, as a user the users file has. Unset: such a connection needs
  // the user's own password like any other.
  std::optional<ScramVerifier> forwardVerifier;
  // A client that has not finished its startup packet by then is dropped.
  std::chrono::milliseconds startupTimeout = std::chrono::seconds(60);
  // Reported as the server_version parameter; drivers parse it to pick
  // features, so it must look like a PostgreSQL version.
  std::string serverVersion = "15.0";
  // Threads of the server's own for the connections' I/O, each with an
  // io_context of its own and the connections pinned to it (io_threads.h);
  // 0: the connections run on the io_context the server is given, on the
  // caller's threads, as the listener always does.
  size_t ioThreads = 0;
};

struct ServerState;
class Listener;
class IoThreads;

class PgServer {
 public:
  // `handler` must outlive the server and every statement it runs.
  PgServer(boost::asio::io_context& io, QueryHandler& handler, PgServerOptions options = {});
  ~PgServer();
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  // Binds and starts accepting. Throws std::runtime_error naming the address
  // when it cannot listen there (for example, the port is taken), or the file
  // when the TLS certificate or key cannot be loaded.
  void start();
  // The bound port (the real one when options.port was 0); 0 before start().
  uint16_t port() const { return port_; }
  // Stops accepting and closes every connection; running statements see
  // ResultWriter::cancelled(). Safe to call from any thread, more than once.
  void stop();
  // Stops the server's own I/O threads (options.ioThreads) and waits for
  // them: no connection's handler runs after it. rtsqld calls it once its
  // io_context has stopped, before the engine shuts down. Not from one of
  // those threads; more than once is harmless.
  void stopIo();

  // Number of open client connections (for tests and metrics).
  size_t connectionCount() const;

 private:
  boost::asio::io_context& io_;
  std::shared_ptr<ServerState> state_;
  std::shared_ptr<IoThreads> ioThreads_;
  std::shared_ptr<Listener> listener_;
  uint16_t port_ = 0;
};

}  // namespace rtsql::pgwire

namespace rtsql {
// rtsqld has one network front; these names let the rest of the server say
// rtsql::PgServer without the protocol namespace.
using pgwire::PgServer;
using pgwire::PgServerOptions;
}  // namespace rtsql
