// The outbound HTTP client (see http_client.h).
#include "connectors/net/http_client.h"

#include <fmt/format.h>
#include <openssl/ssl.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <optional>

#include "common/error.h"
#include "common/file_beneath.h"
#include "common/interrupt.h"
#include "connectors/net/outbound_policy.h"

namespace rtsql::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

std::atomic<bool> gStopped{false};
thread_local bool tNoWait = false;

// What the bytes read are held in before the parser takes them; a status
// line and headers longer than this are refused as too large.
constexpr size_t kReadBuffer = 64 * 1024;

size_t transferred() { return 0; }
size_t transferred(std::size_t n) { return n; }
template <class T>
size_t transferred(const T&) {
  return 0;
}

// Why a wait ended.
enum class Wait { Done, Cancelled, Interrupted };

}  // namespace

NoWaitScope::NoWaitScope() : previous_(tNoWait) {
  tNoWait = true;
}

NoWaitScope::~NoWaitScope() {
  tNoWait = previous_;
}

void stopAllOutbound() {
  gStopped.store(true);
}

bool outboundStopped() {
  return gStopped.load();
}

const char* failureName(Failure failure) {
  switch (failure) {
    case Failure::None: return "no failure";
    case Failure::Refused: return "refused by the outbound policy";
    case Failure::Unreachable: return "unreachable";
    case Failure::TimedOut: return "timed out";
    case Failure::TooLarge: return "answer too large";
    case Failure::Malformed: return "not an HTTP answer";
    case Failure::Cancelled: return "cancelled";
  }
  return "failed";
}

std::shared_ptr<ssl::context> makeTlsClientContext(const std::string& caFile) {
  auto tls = std::make_shared<ssl::context>(ssl::context::tls_client);
  tls->set_default_verify_paths();
  if (!caFile.empty()) {
    // Read here rather than by OpenSSL: beneath --files-dir, as every file a
    // statement names (common/file_beneath.h). A bundle of CA certificates is
    // at most a few hundred KB.
    constexpr size_t kMaxCaFileBytes = 16u << 20;
    std::string pem;
    std::string why;
    if (readServerFile(caFile, kMaxCaFileBytes, pem, why)) {
      beast::error_code ec;
      tls->add_certificate_authority(asio::buffer(pem), ec);
      if (ec) why = ec.message();
    }
    if (!why.empty()) {
      throw SqlError(sqlstate::kIoError,
                     fmt::format("could not read the CA file \"{}\": {}", caFile, why));
    }
  }
  tls->set_verify_mode(ssl::verify_peer);
  return tls;
}

struct HttpClient::Impl {
  HttpUrl url;
  std::string hostHeader;
  std::shared_ptr<ssl::context> tls;
  // Replaced when a cancelled operation cannot be drained: its handlers go
  // with it, never run.
  std::unique_ptr<asio::io_context> ioc = std::make_unique<asio::io_context>();
  std::optional<beast::tcp_stream> tcp;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tlsStream;
  bool open = false;
  size_t lastTransferred = 0;

  beast::tcp_stream& lowest() { return tlsStream ? beast::get_lowest_layer(*tlsStream) : *tcp; }

  void closeSockets() {
    beast::error_code ec;
    if (tlsStream) beast::get_lowest_layer(*tlsStream).socket().close(ec);
    if (tcp) tcp->socket().close(ec);
    open = false;
  }

  void reset() {
    closeSockets();
    tlsStream.reset();
    tcp.reset();
    ioc = std::make_unique<asio::io_context>();
  }

  static Wait cancelled(const std::atomic<bool>* cancel) {
    if ((cancel && cancel->load()) || outboundStopped()) return Wait::Cancelled;
    try {
      throwIfInterrupted();
    } catch (const Interrupted&) {
      return Wait::Interrupted;
    }
    return Wait::Done;
  }

  // Runs one asynchronous step until its handler ran, polling the cancel
  // flags; a cancel closes the connection and ends the step.
  template <class Start>
  Wait run(beast::error_code& ec, const std::atomic<bool>* cancel, Start&& start) {
    bool done = false;
    lastTransferred = 0;
    start([&](beast::error_code e, auto&&... rest) {
      ec = e;
      lastTransferred = transferred(rest...);
      done = true;
    });
    ioc->restart();
    while (!done) {
      if (Wait why = cancelled(cancel); why != Wait::Done) {
        closeSockets();
        // The step completes with operation_aborted at once; should it not,
        // the io_context goes with its handler.
        for (int i = 0; i < 50 && !done; ++i) {
          ioc->restart();
          ioc->run_for(std::chrono::milliseconds(kPollMillis));
        }
        if (!done) reset();
        return why;
      }
      ioc->run_for(std::chrono::milliseconds(kPollMillis));
      if (!done) ioc->restart();
    }
    return Wait::Done;
  }

  HttpResult fail(Failure failure, std::string error) {
    closeSockets();
    HttpResult r;
    r.failure = failure;
    r.error = std::move(error);
    return r;
  }

  HttpResult stopped(Wait why) {
    if (why == Wait::Interrupted) {
      reset();
      throw Interrupted();
    }
    return fail(Failure::Cancelled, outboundStopped() ? "rtsqld is stopping" : "cancelled");
  }

  HttpResult connect(Clock::time_point deadline, const std::atomic<bool>* cancel) {
    if (Wait why = cancelled(cancel); why != Wait::Done) return stopped(why);
    tcp::resolver resolver(*ioc);
    beast::error_code ec;
    auto resolved = resolver.resolve(url.host, url.port, ec);
    if (ec) {
      return fail(Failure::Unreachable,
                  fmt::format("cannot resolve {}: {}", url.host, ec.message()));
    }
    const OutboundPolicy& policy = OutboundPolicy::process();
    const auto port = static_cast<uint16_t>(std::stoi(url.port));
    std::vector<tcp::endpoint> allowed;
    std::string refused;
    for (const auto& entry : resolved) {
      if (policy.allows(url.host, entry.endpoint().address(), port)) {
        allowed.push_back(entry.endpoint());
      } else if (refused.size() < 200) {
        refused += (refused.empty() ? "" : ", ") + entry.endpoint().address().to_string();
      }
    }
    if (allowed.empty()) {
      return fail(Failure::Refused,
                  fmt::format("{}:{} ({}) is not in the outbound allow-list of rtsqld "
                              "(--outbound-allow {})",
                              url.host, url.port, refused, policy.describe()));
    }
    tlsStream.reset();
    tcp.reset();
    if (url.tls) {
      if (!tls) tls = makeTlsClientContext();
      tlsStream.emplace(*ioc, *tls);
    } else {
      tcp.emplace(*ioc);
    }
    lowest().expires_at(deadline);
    Wait why = run(ec, cancel, [&](auto handler) {
      lowest().async_connect(allowed, std::move(handler));
    });
    if (why != Wait::Done) return stopped(why);
    if (ec == beast::error::timeout) return fail(Failure::TimedOut, "timed out connecting");
    if (ec) {
      return fail(Failure::Unreachable,
                  fmt::format("cannot connect to {}:{}: {}", url.host, url.port, ec.message()));
    }
    lowest().socket().set_option(tcp::no_delay(true), ec);
    if (tlsStream) {
      // SNI for a host name (not for an address literal), and the
      // certificate must name the host or address.
      beast::error_code notAddress;
      asio::ip::make_address(url.host, notAddress);
      if (notAddress && !SSL_set_tlsext_host_name(tlsStream->native_handle(), url.host.c_str())) {
        return fail(Failure::Unreachable, "cannot set the TLS server name");
      }
      tlsStream->set_verify_callback(ssl::host_name_verification(url.host));
      lowest().expires_at(deadline);
      why = run(ec, cancel, [&](auto handler) {
        tlsStream->async_handshake(ssl::stream_base::client, std::move(handler));
      });
      if (why != Wait::Done) return stopped(why);
      if (ec == beast::error::timeout) {
        return fail(Failure::TimedOut, "timed out in the TLS handshake");
      }
      if (ec) {
        return fail(Failure::Unreachable,
                    fmt::format("TLS handshake with {} failed: {}", url.host, ec.message()));
      }
    }
    open = true;
    return {};
  }

  template <class Stream>
  HttpResult roundTrip(Stream& stream, const HttpRequest& request, const HttpLimits& limits,
                       Clock::time_point deadline, const std::atomic<bool>* cancel) {
    const bhttp::verb verb = request.method == "POST"  ? bhttp::verb::post
                             : request.method == "PUT" ? bhttp::verb::put
                                                       : bhttp::verb::get;
    bhttp::request<bhttp::string_body> req(verb, request.target.empty() ? "/" : request.target, 11);
    req.set(bhttp::field::host, hostHeader);
    req.set(bhttp::field::user_agent, "rtsql");
    for (const auto& [name, value] : request.headers) req.set(name, value);
    req.keep_alive(request.keepAlive);
    req.body() = request.body;
    req.prepare_payload();

    beast::error_code ec;
    lowest().expires_at(deadline);
    Wait why = run(ec, cancel, [&](auto handler) {
      bhttp::async_write(stream, req, std::move(handler));
    });
    if (why != Wait::Done) return stopped(why);
    if (ec == beast::error::timeout) {
      return fail(Failure::TimedOut, "timed out sending the request");
    }
    if (ec) return fail(Failure::Unreachable, "sending the request: " + ec.message());

    // The bytes received are counted as they come: the parser's limits alone
    // trust what the headers announce.
    beast::flat_buffer buffer(kReadBuffer);
    bhttp::response_parser<bhttp::string_body> parser;
    parser.header_limit(
        static_cast<std::uint32_t>(std::min<uint64_t>(limits.maxAnswerBytes, kReadBuffer)));
    parser.body_limit(limits.maxAnswerBytes);
    uint64_t received = 0;
    const std::string tooLarge =
        fmt::format("the answer is larger than {} bytes", limits.maxAnswerBytes);
    while (!parser.is_done()) {
      lowest().expires_at(deadline);
      why = run(ec, cancel, [&](auto handler) {
        bhttp::async_read_some(stream, buffer, parser, std::move(handler));
      });
      if (why != Wait::Done) return stopped(why);
      received += lastTransferred;
      if (received + buffer.size() > limits.maxAnswerBytes) {
        return fail(Failure::TooLarge, tooLarge);
      }
      if (!ec) continue;
      if (ec == beast::error::timeout) {
        return fail(Failure::TimedOut, fmt::format("no answer within {} ms", limits.timeoutMs));
      }
      if (ec == bhttp::error::body_limit || ec == bhttp::error::header_limit ||
          ec == bhttp::error::buffer_overflow) {
        return fail(Failure::TooLarge, tooLarge);
      }
      if (ec == bhttp::error::end_of_stream || ec == asio::error::eof ||
          ec == asio::error::connection_reset || ec == ssl::error::stream_truncated) {
        return fail(Failure::Unreachable,
                    received == 0 ? "the connection closed before an answer"
                                  : "the connection closed in the middle of the answer");
      }
      if (ec.category() == bhttp::make_error_code(bhttp::error::bad_version).category()) {
        return fail(Failure::Malformed, "the answer is not HTTP: " + ec.message());
      }
      return fail(Failure::Unreachable, "reading the answer: " + ec.message());
    }
    auto& res = parser.get();
    HttpResult out;
    out.answer.status = static_cast<int>(res.result_int());
    out.answer.reason = std::string(res.reason().data(), res.reason().size());
    out.answer.body = std::move(res.body());
    out.answer.bytes = static_cast<size_t>(received + buffer.size());
    if (auto it = res.find(bhttp::field::retry_after); it != res.end()) {
      out.answer.retryAfterMs =
          parseRetryAfterMs(std::string_view(it->value().data(), it->value().size()));
    }
    if (!request.keepAlive || !res.keep_alive()) closeSockets();
    return out;
  }
};

HttpClient::HttpClient(HttpUrl url, std::shared_ptr<ssl::context> tls)
    : impl_(std::make_unique<Impl>()) {
  impl_->url = std::move(url);
  impl_->tls = std::move(tls);
  const HttpUrl& u = impl_->url;
  impl_->hostHeader = u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host;
  if (!u.defaultPort) impl_->hostHeader += ":" + u.port;
}

HttpClient::~HttpClient() {
  impl_->closeSockets();
}

void HttpClient::close() {
  impl_->closeSockets();
}

bool HttpClient::connected() const {
  return impl_->open;
}

const std::string& HttpClient::hostHeader() const {
  return impl_->hostHeader;
}

const HttpUrl& HttpClient::url() const {
  return impl_->url;
}

HttpResult HttpClient::exchange(const HttpRequest& request, const HttpLimits& limits,
                                const std::atomic<bool>* cancel) {
  Impl& c = *impl_;
  if (tNoWait) {
    HttpResult r;
    r.failure = Failure::Unreachable;
    r.error = "not asked while rtsqld restores its catalog (asked again later)";
    return r;
  }
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(limits.timeoutMs);
  // A kept-alive connection the server closed meanwhile fails before any
  // answer: the request goes once more on a new connection.
  for (int attempt = 0;; ++attempt) {
    const bool reused = c.open;
    if (!c.open) {
      HttpResult connected = c.connect(deadline, cancel);
      if (!connected.ok()) return connected;
    }
    HttpResult r = c.tlsStream ? c.roundTrip(*c.tlsStream, request, limits, deadline, cancel)
                               : c.roundTrip(*c.tcp, request, limits, deadline, cancel);
    if (r.failure == Failure::Unreachable && reused && attempt == 0) continue;
    return r;
  }
}

}  // namespace rtsql::net

namespace rtsql {

int64_t parseRetryAfterMs(std::string_view value) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty() || value.size() > 9) return -1;
  int64_t s = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return -1;
    s = s * 10 + (c - '0');
  }
  return s * 1000;
}

}  // namespace rtsql
