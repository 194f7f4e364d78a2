#include "server/pgwire/server.h"

#include <fmt/format.h>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <stdexcept>

#include "server/pgwire/connection.h"
#include "server/pgwire/io_threads.h"

namespace rtsql::pgwire {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

// Owns the listening socket and the accept loop. Held by shared_ptr so a
// pending accept can outlive the PgServer object that started it.
class Listener : public std::enable_shared_from_this<Listener> {
 public:
  // A connection runs on `ioThreads` when given, else on `io`.
  Listener(asio::io_context& io, std::shared_ptr<IoThreads> ioThreads,
           std::shared_ptr<ServerState> state)
      : io_(io),
        ioThreads_(std::move(ioThreads)),
        strand_(asio::make_strand(io)),
        acceptor_(strand_),
        retry_(strand_),
        state_(std::move(state)) {}

  uint16_t listen(const std::string& host, uint16_t port) {
    const tcp::endpoint endpoint = resolve(host, port);
    error_code ec;
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      error_code ignored;
      acceptor_.close(ignored);
      throw std::runtime_error(
          fmt::format("could not listen on {}:{}: {}", host, port, ec.message()));
    }
    return acceptor_.local_endpoint().port();
  }

  void accept() {
    auto strand = asio::make_strand(ioThreads_ ? ioThreads_->next() : io_);
    auto socket = std::make_shared<tcp::socket>(strand);
    acceptor_.async_accept(
        *socket, asio::bind_executor(strand_, [self = shared_from_this(), socket,
                                               strand](const error_code& ec) mutable {
          self->onAccept(ec, std::move(*socket), std::move(strand));
        }));
  }

  void startAccepting() {
    asio::post(strand_, [self = shared_from_this()] { self->accept(); });
  }

  void close() {
    asio::post(strand_, [self = shared_from_this()] {
      error_code ignored;
      self->acceptor_.close(ignored);
      self->retry_.cancel();
    });
  }

 private:
  tcp::endpoint resolve(const std::string& host, uint16_t port) {
    error_code ec;
    const auto address = asio::ip::make_address(host, ec);
    if (!ec) return tcp::endpoint(address, port);
    tcp::resolver resolver(io_);
    const auto results = resolver.resolve(host, std::to_string(port), ec);
    if (ec || results.empty()) {
      throw std::runtime_error(fmt::format("could not resolve listen address \"{}\": {}", host,
                                           ec ? ec.message() : "no addresses"));
    }
    return results.begin()->endpoint();
  }

  void onAccept(const error_code& ec, tcp::socket socket, Connection::Strand strand) {
    if (!acceptor_.is_open() || state_->stopping.load()) return;
    if (ec) {
      // Out of file descriptors and similar: try again shortly instead of
      // spinning, and keep serving the connections we have.
      retry_.expires_after(std::chrono::milliseconds(100));
      retry_.async_wait(
          asio::bind_executor(strand_, [self = shared_from_this()](const error_code& e) {
            if (!e) self->accept();
          }));
      return;
    }
    const bool counted = state_->hasFreeSlot();
    auto conn = std::make_shared<Connection>(std::move(socket), std::move(strand), state_);
    conn->start(counted);
    accept();
  }

  asio::io_context& io_;
  // Shared with the server: an accept that completes after the server is
  // gone still has the contexts (stopped) to make its socket on.
  std::shared_ptr<IoThreads> ioThreads_;
  asio::strand<asio::io_context::executor_type> strand_;
  tcp::acceptor acceptor_;
  asio::steady_timer retry_;
  std::shared_ptr<ServerState> state_;
};

PgServer::PgServer(asio::io_context& io, QueryHandler& handler, PgServerOptions options)
    : io_(io), state_(std::make_shared<ServerState>(handler, std::move(options))) {}

PgServer::~PgServer() {
  stop();
  // Statements see cancelled() now; wait for them so none outlives the
  // handler they call into. They may post to their connection's strand,
  // so the I/O threads stop after them.
  state_->pool.shutdown();
  stopIo();
}

void PgServer::stopIo() {
  if (ioThreads_) ioThreads_->stop();
}

void PgServer::start() {
  if (listener_) throw std::runtime_error("the PostgreSQL server is already started");
  const auto& o = state_->options;
  if (o.tlsCertFile.empty() != o.tlsKeyFile.empty()) {
    throw std::runtime_error("TLS needs both a certificate file and a private key file");
  }
  if (o.tlsRequired && o.tlsCertFile.empty()) {
    throw std::runtime_error("TLS is required but no certificate and key are configured");
  }
  // Loaded before listening, so a bad file stops the server at start rather
  // than failing each client's handshake.
  if (!o.tlsCertFile.empty()) {
    state_->tls = makeServerTlsContext(o.tlsCertFile, o.tlsKeyFile);
    state_->tlsEndPoint = tlsServerEndPoint(*state_->tls);
  }
  if (o.ioThreads > 0) ioThreads_ = std::make_shared<IoThreads>(o.ioThreads, "pgwire-io");
  auto listener = std::make_shared<Listener>(io_, ioThreads_, state_);
  port_ = listener->listen(state_->options.host, state_->options.port);
  listener_ = std::move(listener);
  listener_->startAccepting();
}

void PgServer::stop() {
  state_->stopping.store(true);
  if (listener_) listener_->close();
  state_->abortAll();
}

size_t PgServer::connectionCount() const { return state_->activeCount(); }

}  // namespace rtsql::pgwire
