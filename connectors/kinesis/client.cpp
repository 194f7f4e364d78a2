// The Kinesis API client (see client.h).
#include "connectors/kinesis/client.h"

#include <fmt/format.h>
#include <openssl/ssl.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <optional>

#include "common/clock.h"
#include "connectors/format/decode_util.h"
#include "connectors/http/http_sink.h"
#include "connectors/kinesis/protocol.h"

namespace rtsql::kinesis {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;

bool CallError::retryable() const {
  return transport_ || isRetryable(serviceError_, status_);
}

struct Client::Impl {
  ClientConfig config;
  HttpUrl url;
  std::string hostHeader;
  asio::io_context ioc;
  std::unique_ptr<ssl::context> tls;
  std::optional<beast::tcp_stream> tcp;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tlsStream;
  bool open = false;

  // Runs one asynchronous step to completion on the client's own io_context;
  // the stream's deadline ends it with beast::error::timeout.
  template <class Start>
  void run(beast::error_code& ec, Start&& start) {
    start([&](beast::error_code e, auto&&...) { ec = e; });
    ioc.restart();
    ioc.run();
  }

  beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tlsStream) : *tcp; }

  void close() {
    beast::error_code ec;
    if (tlsStream) beast::get_lowest_layer(*tlsStream).socket().close(ec);
    if (tcp) tcp->socket().close(ec);
    open = false;
  }

  [[noreturn]] void fail(const std::string& what) {
    close();
    throw CallError(fmt::format("{}: {}", config.endpoint, what), {}, 0, true);
  }

  void connect() {
    const auto timeout = std::chrono::milliseconds(config.requestTimeoutMs);
    tcp::resolver resolver(ioc);
    beast::error_code ec;
    auto endpoints = resolver.resolve(url.host, url.port, ec);
    if (ec) fail(fmt::format("cannot resolve {}: {}", url.host, ec.message()));
    tlsStream.reset();
    tcp.reset();
    if (tls) {
      tlsStream.emplace(ioc, *tls);
    } else {
      tcp.emplace(ioc);
    }
    lowest().expires_after(timeout);
    run(ec, [&](auto handler) { lowest().async_connect(endpoints, std::move(handler)); });
    if (ec) {
      fail(fmt::format("cannot connect: {}",
                       ec == beast::error::timeout ? "timed out" : ec.message()));
    }
    lowest().socket().set_option(tcp::no_delay(true), ec);
    if (tlsStream) {
      beast::error_code notAddress;
      asio::ip::make_address(url.host, notAddress);
      if (notAddress && !SSL_set_tlsext_host_name(tlsStream->native_handle(), url.host.c_str())) {
        fail("cannot set the TLS server name");
      }
      tlsStream->set_verify_callback(ssl::host_name_verification(url.host));
      lowest().expires_after(timeout);
      run(ec, [&](auto handler) {
        tlsStream->async_handshake(ssl::stream_base::client, std::move(handler));
      });
      if (ec) fail(fmt::format("TLS handshake failed: {}", ec.message()));
    }
    open = true;
  }

  template <class Stream>
  bhttp::response<bhttp::string_body> roundTrip(Stream& stream,
                                                bhttp::request<bhttp::string_body>& req) {
    const auto timeout = std::chrono::milliseconds(config.requestTimeoutMs);
    beast::error_code ec;
    lowest().expires_after(timeout);
    run(ec, [&](auto handler) { bhttp::async_write(stream, req, std::move(handler)); });
    if (ec) {
      fail(ec == beast::error::timeout ? std::string("timed out sending a request")
                                       : "sending a request: " + ec.message());
    }
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    // GetRecords answers up to 10 MB of records, base64 encoded.
    parser.body_limit(64u << 20);
    lowest().expires_after(timeout);
    run(ec, [&](auto handler) { bhttp::async_read(stream, buffer, parser, std::move(handler)); });
    if (ec) {
      fail(ec == beast::error::timeout
               ? fmt::format("no answer within {} ms", config.requestTimeoutMs)
               : "reading an answer: " + ec.message());
    }
    return parser.release();
  }
};

Client::Client(ClientConfig config) : impl_(std::make_unique<Impl>()) {
  impl_->config = std::move(config);
  std::string why;
  std::optional<HttpUrl> url = parseHttpUrl(impl_->config.endpoint, why);
  if (!url) throw std::invalid_argument(why);
  impl_->url = *url;
  impl_->hostHeader = url->host.find(':') != std::string::npos ? "[" + url->host + "]" : url->host;
  if (!url->defaultPort) impl_->hostHeader += ":" + url->port;
  if (url->tls) {
    impl_->tls = std::make_unique<ssl::context>(ssl::context::tls_client);
    impl_->tls->set_default_verify_paths();
    impl_->tls->set_verify_mode(ssl::verify_peer);
  }
}

Client::~Client() {
  impl_->close();
}

const std::string& Client::endpoint() const {
  return impl_->config.endpoint;
}

std::string Client::call(std::string_view action, const std::string& body) {
  Impl& c = *impl_;
  aws::Request signing;
  signing.method = "POST";
  signing.path = c.url.target.empty() ? "/" : c.url.target;
  signing.headers = {{"Host", c.hostHeader},
                     {"X-Amz-Date", aws::amzDate(nowMicros() / 1'000'000)},
                     {"X-Amz-Target", std::string(kTargetPrefix) + std::string(action)},
                     {"Content-Type", std::string(kContentType)}};
  signing.body = body;
  aws::Signature signature = aws::sign(signing, c.config.credentials, c.config.region, "kinesis");

  bhttp::request<bhttp::string_body> req(bhttp::verb::post, signing.path, 11);
  for (const auto& [name, value] : signing.headers) req.set(name, value);
  req.set(bhttp::field::authorization, signature.authorization);
  req.set(bhttp::field::user_agent, "rtsql");
  req.keep_alive(true);
  req.body() = body;
  req.prepare_payload();

  // A kept-alive connection the server closed meanwhile fails the first
  // write or read: the request is sent once more on a new connection.
  bhttp::response<bhttp::string_body> res;
  for (int attempt = 0;; ++attempt) {
    const bool reused = c.open;
    if (!c.open) c.connect();
    try {
      res = c.tlsStream ? c.roundTrip(*c.tlsStream, req) : c.roundTrip(*c.tcp, req);
      break;
    } catch (const CallError&) {
      if (!reused || attempt > 0) throw;
    }
  }
  if (!res.keep_alive()) c.close();
  const int status = static_cast<int>(res.result_int());
  if (status == 200) return std::move(res.body());
  ServiceError e = parseServiceError(res.body());
  throw CallError(
      fmt::format("{} {} answered HTTP {}{}{}{}", c.config.endpoint, action, status,
                  e.type.empty() ? "" : " ", e.type, e.message.empty() ? "" : ": " + e.message),
      e.type, status, false);
}

}  // namespace rtsql::kinesis
