// The HTTP endpoint's sockets: a listener and one Connection per client, on
// Boost.Beast. A connection reads one request at a time (HTTP/1.1 keep-alive,
// no pipelining of answers), hands the route to the worker thread (a POST /sql
// to a statement thread) and writes the reply back on its strand. GET /healthz
// is answered on the strand itself, so that neither a slow route nor a busy
// worker makes a liveness probe fail.
#include "server/http/http_server.h"

#include <fmt/format.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cerrno>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "server/http/host_header.h"
#include "server/http/routes.h"

namespace rtsql::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

// What the server keeps of each connection, whichever its stream: a way to
// end it.
class Connection {
 public:
  virtual ~Connection() = default;
  // From any thread: ends whatever the connection is doing.
  virtual void close() = 0;
  // From any thread: true until a first request has been read (or the read
  // failed), which is when an over-budget connection may be evicted.
  virtual bool awaitingRequest() const = 0;
};

// Sent with every answer. The console's page loads its script and style from
// files of its own origin and sets no inline script or style attribute, so
// the policy allows nothing else; no other site may frame any page of it.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

struct ServerState {
  ServerState(const Source& s, HttpServerOptions o, asio::thread_pool* w, asio::thread_pool* sql)
      : source(s), options(std::move(o)), workers(w), sqlWorkers(sql) {}

  const Source& source;
  const HttpServerOptions options;
  std::mutex mu;
  // Once set (under mu), nothing is posted to `workers` any more, so the
  // server may join and destroy them.
  bool stopped = false;
  // Set with `stopped`; read without the lock by running statements, which
  // stop when they see it.
  std::atomic<bool> stopping{false};
  asio::thread_pool* workers;
  // POST /sql's statements: a live SELECT may wait seconds for its rows, and
  // must not hold up /metrics or the console's polling on `workers`.
  asio::thread_pool* sqlWorkers;
  size_t sqlRunning = 0;  // statements posted to sqlWorkers and not answered yet
  CredentialCache credentials;
  uint64_t nextId = 0;
  struct Entry {
    std::weak_ptr<Connection> connection;  // set once the connection is made
    std::string peer;                      // the client's address
    bool overBudget = false;               // admitted over a cap: /healthz only
    bool evicted = false;                  // closed for a newcomer, not gone yet
  };
  // By id, so the oldest comes first.
  std::map<uint64_t, Entry> connections;
  size_t withinBudget = 0;                // connections within the caps
  std::map<std::string, size_t> perPeer;  // of those, per peer address
  size_t overBudget = 0;                  // over-budget connections not evicted
};

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// One client on a plain or a TLS stream. A TLS connection first completes its
// handshake, under the same deadline as a request.
template <class Stream>
class StreamConnection final : public Connection,
                               public std::enable_shared_from_this<StreamConnection<Stream>> {
 public:
  StreamConnection(tcp::socket socket, std::shared_ptr<ServerState> state, uint64_t id,
                   bool overBudget)
      : stream_(makeStream(std::move(socket), *state)),
        state_(std::move(state)),
        id_(id),
        overBudget_(overBudget),
        buffer_(state_->options.maxRequestBytes) {}

  ~StreamConnection() override {
    std::lock_guard lock(state_->mu);
    auto it = state_->connections.find(id_);
    if (it == state_->connections.end()) return;
    const ServerState::Entry& e = it->second;
    if (!e.overBudget) {
      --state_->withinBudget;
      auto peer = state_->perPeer.find(e.peer);
      if (peer != state_->perPeer.end() && --peer->second == 0) state_->perPeer.erase(peer);
    } else if (!e.evicted) {
      --state_->overBudget;
    }
    state_->connections.erase(it);
  }

  void start() {
    asio::dispatch(stream_.get_executor(), [self = this->shared_from_this()] {
      if constexpr (std::is_same_v<Stream, TlsStream>) {
        beast::get_lowest_layer(self->stream_).expires_after(self->readTimeout());
        self->stream_.async_handshake(asio::ssl::stream_base::server, [self](beast::error_code ec) {
          if (ec) return self->shutdown();
          self->read();
        });
      } else {
        self->read();
      }
    });
  }

  void close() override {
    asio::post(stream_.get_executor(), [self = this->shared_from_this()] { self->shutdown(); });
  }

  bool awaitingRequest() const override { return awaiting_.load(std::memory_order_relaxed); }

 private:
  static Stream makeStream(tcp::socket socket, ServerState& state) {
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      return Stream(std::move(socket), *state.options.tls);
    } else {
      return Stream(std::move(socket));
    }
  }

  // An over-budget connection gets a short deadline: it holds a place a
  // liveness probe may need.
  std::chrono::milliseconds readTimeout() const {
    return overBudget_ ? std::min(state_->options.overBudgetTimeout, state_->options.timeout)
                       : state_->options.timeout;
  }

  void read() {
    parser_.emplace();
    const size_t limit = state_->options.maxRequestBytes;
    parser_->header_limit(static_cast<std::uint32_t>(std::min<size_t>(limit, UINT32_MAX)));
    parser_->body_limit(limit);
    beast::get_lowest_layer(stream_).expires_after(readTimeout());
    bhttp::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->onRead(ec); });
  }

  void onRead(beast::error_code ec) {
    awaiting_.store(false, std::memory_order_relaxed);
    if (ec == bhttp::error::end_of_stream) return shutdown();
    if (ec == bhttp::error::header_limit || ec == bhttp::error::body_limit ||
        ec == bhttp::error::buffer_overflow) {
      return writeError(413, "request too large");
    }
    if (ec) {
      // A malformed request gets a 400; a timeout or a broken socket nothing.
      if (&ec.category() == &bhttp::make_error_code(bhttp::error::bad_method).category()) {
        return writeError(400, "malformed request");
      }
      return shutdown();
    }
    const auto& req = parser_->get();
    const auto hostHeader = req[bhttp::field::host];
    if (!hostAllowed(std::string_view(hostHeader.data(), hostHeader.size()), state_->options.host,
                     state_->options.allowedHosts)) {
      return writeError(421,
                        "this server does not answer for the host the Host header names; "
                        "rtsqld --http-allowed-hosts NAME adds a name it answers for");
    }
    std::string method(req.method_string());
    std::string target(req.target());
    std::string authorization(req[bhttp::field::authorization]);
    std::string contentType(req[bhttp::field::content_type]);
    std::string body = req.body();
    const bool keepAlive = req.keep_alive();
    const unsigned version = req.version();

    if (method == "GET" && target.substr(0, target.find('?')) == "/healthz") {
      return write(route(state_->source, method, target), keepAlive && !overBudget_, version);
    }
    if (overBudget_) {
      Reply r;
      r.status = 503;
      r.contentType = kJsonContentType;
      r.body = "{\"error\":\"too many HTTP clients\"}\n";
      return write(std::move(r), false, version);
    }

    if (method == "POST" && target.substr(0, target.find('?')) == "/sql") {
      return runStatement(std::move(method), std::move(target), std::move(authorization),
                          std::move(contentType), std::move(body), keepAlive, version);
    }
    std::lock_guard lock(state_->mu);
    if (state_->stopped) return;
    asio::post(*state_->workers, [self = this->shared_from_this(), method = std::move(method),
                                  target = std::move(target),
                                  authorization = std::move(authorization),
                                  contentType = std::move(contentType), body = std::move(body),
                                  keepAlive, version]() mutable {
      Reply reply = self->answer(method, target, authorization, contentType, body, {});
      auto ex = self->stream_.get_executor();
      asio::post(ex, [self = std::move(self), reply = std::move(reply), keepAlive, version]() mutable {
        self->write(std::move(reply), keepAlive, version);
      });
    });
  }

  // Checks the credentials, then routes: on a worker thread.
  Reply answer(const std::string& method, const std::string& target,
               const std::string& authorization, const std::string& contentType,
               const std::string& body, std::function<bool()> cancelled) {
    std::string user;
    std::optional<Reply> refused =
        authorize(state_->options.checkPassword, target, authorization, &state_->credentials,
                  state_->options.credentialStamp, CredentialCache::Clock::now(), &user);
    if (refused) return std::move(*refused);
    Request request;
    request.method = method;
    request.target = target;
    request.contentType = contentType;
    request.body = body;
    request.user = user;
    request.cancelled = std::move(cancelled);
    return route(state_->source, request);
  }

  // A POST /sql runs on a statement thread, at most maxSqlStatements at once
  // (a further one is answered 503 at once). While it runs, the socket is
  // watched: a client that closes the connection stops its statement.
  void runStatement(std::string method, std::string target, std::string authorization,
                    std::string contentType, std::string body, bool keepAlive, unsigned version) {
    std::unique_lock lock(state_->mu);
    if (state_->stopped) return;
    if (state_->sqlRunning >= state_->options.maxSqlStatements) {
      lock.unlock();
      Reply r;
      r.status = 503;
      r.contentType = kJsonContentType;
      r.body = fmt::format(
          "{{\"error\":\"{} statements of the SQL box are running; try again when one has "
          "answered\",\"sqlstate\":\"53300\",\"position\":null,\"hint\":null}}\n",
          state_->options.maxSqlStatements);
      return write(std::move(r), keepAlive, version);
    }
    ++state_->sqlRunning;
    auto gone = std::make_shared<std::atomic<bool>>(false);
    std::function<bool()> cancelled = [gone, state = state_] {
      return gone->load(std::memory_order_relaxed) ||
             state->stopping.load(std::memory_order_relaxed);
    };
    asio::post(
        *state_->sqlWorkers,
        [self = this->shared_from_this(), method = std::move(method), target = std::move(target),
         authorization = std::move(authorization), contentType = std::move(contentType),
         body = std::move(body), keepAlive, version, cancelled = std::move(cancelled)]() mutable {
          Reply reply = self->answer(method, target, authorization, contentType, body, cancelled);
          {
            std::lock_guard lock(self->state_->mu);
            --self->state_->sqlRunning;
          }
          auto ex = self->stream_.get_executor();
          asio::post(
              ex, [self = std::move(self), reply = std::move(reply), keepAlive, version]() mutable {
                self->stopWatching();
                self->write(std::move(reply), keepAlive, version);
              });
        });
    watching_ = true;
    watchClient(std::move(gone));
  }

  // Waits for the socket to become readable while a statement runs: end of
  // stream or an error means the client went away. Bytes instead are a next
  // request sent early; they stay for the read after the answer.
  void watchClient(std::shared_ptr<std::atomic<bool>> gone) {
    auto& socket = beast::get_lowest_layer(stream_).socket();
    socket.async_wait(tcp::socket::wait_read, [self = this->shared_from_this(),
                                               gone = std::move(gone)](beast::error_code ec) {
      if (ec || !self->watching_) return;  // cancelled: the answer is being written
      char byte;
      auto& sock = beast::get_lowest_layer(self->stream_).socket();
      const ssize_t n = ::recv(sock.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        gone->store(true, std::memory_order_relaxed);
      } else if (n < 0) {
        self->watchClient(gone);  // woken with nothing to read: wait again
      }
    });
  }

  void stopWatching() {
    if (!watching_) return;
    watching_ = false;
    beast::error_code ec;
    beast::get_lowest_layer(stream_).socket().cancel(ec);
  }

  void writeError(unsigned status, const char* message) {
    Reply r;
    r.status = status;
    r.contentType = kJsonContentType;
    r.body = fmt::format("{{\"error\":\"{}\"}}\n", message);
    write(std::move(r), false, 11);
  }

  void write(Reply reply, bool keepAlive, unsigned version) {
    res_ = {};
    res_.version(version);
    res_.result(reply.status);
    res_.set(bhttp::field::server, "rtsqld");
    res_.set(bhttp::field::content_type, reply.contentType);
    // Every answer is a snapshot of live state.
    res_.set(bhttp::field::cache_control, "no-store");
    // No other site frames a page of the endpoint, and no answer is taken
    // for another type than the one it says.
    res_.set("Content-Security-Policy", kContentSecurityPolicy);
    res_.set("X-Frame-Options", "DENY");
    res_.set("X-Content-Type-Options", "nosniff");
    for (const auto& [name, value] : reply.headers) res_.set(name, value);
    res_.body() = std::move(reply.body);
    res_.keep_alive(keepAlive);
    res_.prepare_payload();
    beast::get_lowest_layer(stream_).expires_after(state_->options.timeout);
    bhttp::async_write(stream_, res_,
                       [self = this->shared_from_this()](beast::error_code ec, size_t) {
                         if (ec || !self->res_.keep_alive()) return self->shutdown();
                         self->read();
                       });
  }

  // A TLS session is not closed with a close_notify: the socket goes, as
  // most servers do for HTTP (the length of every answer is in its header).
  void shutdown() {
    beast::error_code ec;
    auto& lowest = beast::get_lowest_layer(stream_);
    lowest.socket().shutdown(tcp::socket::shutdown_both, ec);
    lowest.close();
  }

  Stream stream_;
  std::shared_ptr<ServerState> state_;
  uint64_t id_;
  const bool overBudget_;
  std::atomic<bool> awaiting_{true};
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bhttp::response<bhttp::string_body> res_;
  bool watching_ = false;  // a POST /sql runs and watchClient() waits (strand only)
};

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(asio::io_context& io, std::shared_ptr<ServerState> state)
      : io_(io),
        acceptor_(asio::make_strand(io)),
        retry_(acceptor_.get_executor()),
        state_(std::move(state)) {}

  uint16_t open(const std::string& host, uint16_t port) {
    beast::error_code ec;
    tcp::resolver resolver(io_);
    auto results = resolver.resolve(host, std::to_string(port), ec);
    if (ec || results.empty()) {
      throw std::runtime_error(
          fmt::format("could not resolve HTTP listen address \"{}\": {}", host, ec.message()));
    }
    tcp::endpoint endpoint = results.begin()->endpoint();
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      throw std::runtime_error(fmt::format("cannot listen for HTTP on {}:{}: {}", host, port, ec.message()));
    }
    return acceptor_.local_endpoint().port();
  }

  void accept() {
    acceptor_.async_accept(asio::make_strand(io_), [self = shared_from_this()](beast::error_code ec,
                                                                               tcp::socket socket) {
      self->onAccept(ec, std::move(socket));
    });
  }

  void close() {
    asio::post(acceptor_.get_executor(), [self = shared_from_this()] {
      beast::error_code ec;
      self->acceptor_.close(ec);
      self->retry_.cancel();
    });
  }

 private:
  void onAccept(beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // Out of descriptors, most likely: try again shortly instead of spinning.
      retry_.expires_after(std::chrono::milliseconds(100));
      retry_.async_wait([self = shared_from_this()](beast::error_code e) {
        if (!e) self->accept();
      });
      return;
    }
    beast::error_code peerError;
    const tcp::endpoint peer = socket.remote_endpoint(peerError);
    const std::string peerAddress = peerError ? std::string() : peer.address().to_string();
    std::optional<uint64_t> id;
    bool overBudget = false;
    std::shared_ptr<Connection> evicted;
    {
      std::lock_guard lock(state_->mu);
      if (state_->stopped) return;
      const HttpServerOptions& o = state_->options;
      const size_t perPeerCap = o.maxConnectionsPerPeer > 0
                                    ? o.maxConnectionsPerPeer
                                    : std::max<size_t>(1, o.maxConnections / 2);
      auto held = state_->perPeer.find(peerAddress);
      const size_t ofPeer = held == state_->perPeer.end() ? 0 : held->second;
      if (state_->withinBudget < o.maxConnections && ofPeer < perPeerCap) {
        ++state_->withinBudget;
        ++state_->perPeer[peerAddress];
        id = state_->nextId++;
      } else if (state_->overBudget < o.maxOverBudgetConnections) {
        ++state_->overBudget;
        overBudget = true;
        id = state_->nextId++;
      } else {
        // The oldest over-budget connection still waiting for its request
        // makes room: a probe that connects sends its request at once.
        for (auto& [cid, e] : state_->connections) {
          if (!e.overBudget || e.evicted) continue;
          auto c = e.connection.lock();
          if (c && c->awaitingRequest()) {
            e.evicted = true;
            evicted = std::move(c);
            break;
          }
        }
        if (evicted) {
          overBudget = true;
          id = state_->nextId++;
        }
      }
      if (id) state_->connections.emplace(*id, ServerState::Entry{{}, peerAddress, overBudget});
    }
    if (evicted) evicted->close();
    if (!id) {
      refuseBusy(socket);
    } else {
      if (state_->options.tls) {
        startConnection<TlsStream>(std::move(socket), *id, overBudget);
      } else {
        startConnection<PlainStream>(std::move(socket), *id, overBudget);
      }
    }
    accept();
  }

  template <class Stream>
  void startConnection(tcp::socket socket, uint64_t id, bool overBudget) {
    auto conn =
        std::make_shared<StreamConnection<Stream>>(std::move(socket), state_, id, overBudget);
    {
      std::lock_guard lock(state_->mu);
      auto it = state_->connections.find(id);
      if (it != state_->connections.end()) it->second.connection = conn;
    }
    conn->start();
  }

  // Over every limit: a short 503 written without waiting (it fits in any
  // socket buffer), then the socket is closed.
  static void refuseBusy(tcp::socket& socket) {
    static const std::string kBusy = [] {
      const std::string body = "{\"error\":\"too many HTTP clients\"}\n";
      return fmt::format(
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
          "Content-Security-Policy: {}\r\nX-Frame-Options: DENY\r\n"
          "X-Content-Type-Options: nosniff\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
          kContentSecurityPolicy, body.size(), body);
    }();
    beast::error_code ec;
    socket.non_blocking(true, ec);
    socket.write_some(asio::buffer(kBusy.data(), kBusy.size()), ec);
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
  }

  asio::io_context& io_;
  tcp::acceptor acceptor_;
  asio::steady_timer retry_;
  std::shared_ptr<ServerState> state_;
};

HttpServer::HttpServer(asio::io_context& io, const Source& source, HttpServerOptions options)
    : io_(io),
      workers_(std::make_unique<asio::thread_pool>(1)),
      sqlWorkers_(
          std::make_unique<asio::thread_pool>(std::max<size_t>(1, options.maxSqlStatements))) {
  state_ =
      std::make_shared<ServerState>(source, std::move(options), workers_.get(), sqlWorkers_.get());
}

HttpServer::~HttpServer() {
  stop();
  workers_->join();
  // A running statement sees `stopping` within its poll interval.
  sqlWorkers_->join();
}

void HttpServer::start() {
  listener_ = std::make_shared<Listener>(io_, state_);
  port_ = listener_->open(state_->options.host, state_->options.port);
  listener_->accept();
}

void HttpServer::stop() {
  std::vector<std::weak_ptr<Connection>> connections;
  {
    std::lock_guard lock(state_->mu);
    state_->stopped = true;
    state_->stopping = true;
    for (const auto& [id, e] : state_->connections) connections.push_back(e.connection);
  }
  if (listener_) listener_->close();
  for (auto& weak : connections) {
    if (auto c = weak.lock()) c->close();
  }
}

}  // namespace rtsql::http
