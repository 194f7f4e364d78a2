// The HTTP sink (see http_sink.h).
#include "connectors/http/http_sink.h"

#include <fmt/format.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "common/file_beneath.h"
#include "common/schema.h"
#include "connectors/format/codec.h"
#include "connectors/format/decoders.h"
#include "connectors/format/encoding_sink_writer.h"

namespace rtsql {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::string_view kHeaderPrefix = "http.header.";
// How much of an answer's body an error quotes.
constexpr size_t kBodyExcerpt = 200;

const std::vector<std::string>& knownKeys() {
  static const std::vector<std::string> keys = {
      "connector",         "url",     "format",           "mode",
      "http.method",       "http.ca", "batch.max.rows",   "batch.linger.ms",
      "max.in.flight",     "retries", "retry.backoff.ms", "retry.backoff.max.ms",
      "request.timeout.ms"};
  return keys;
}

bool startsWithI(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

bool isTokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// Headers the sink writes itself: a request with a second copy would be
// malformed or smuggle a different body.
bool reservedHeader(std::string_view name) {
  for (std::string_view r : {"host", "content-length", "transfer-encoding", "connection"}) {
    if (iequals(name, r)) return true;
  }
  return false;
}

std::string printable(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, kBodyExcerpt)) {
    out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  }
  if (text.size() > kBodyExcerpt) out += "...";
  return out;
}

}  // namespace

std::optional<HttpUrl> parseHttpUrl(std::string_view url, std::string& why) {
  HttpUrl out;
  std::string_view rest;
  if (startsWithI(url, "http://")) {
    rest = url.substr(7);
  } else if (startsWithI(url, "https://")) {
    out.tls = true;
    rest = url.substr(8);
  } else {
    why = "the scheme must be http:// or https://";
    return std::nullopt;
  }
  size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  std::string_view target = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
  if (size_t hash = target.find('#'); hash != std::string_view::npos)
    target = target.substr(0, hash);
  if (authority.find('@') != std::string_view::npos) {
    why = "user information in the URL is not sent";
    return std::nullopt;
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      why = "an IPv6 address needs its closing ']'";
      return std::nullopt;
    }
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        why = "expected ':' and a port after the IPv6 address";
        return std::nullopt;
      }
      port = after.substr(1);
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) {
    why = "the URL has no host";
    return std::nullopt;
  }
  for (char c : host) {
    if (std::isspace(static_cast<unsigned char>(c)) || c < 0x20) {
      why = "the host contains a space or a control character";
      return std::nullopt;
    }
  }
  if (!port.empty() || authority.find(':') != std::string_view::npos) {
    bool digits =
        !port.empty() && port.size() <= 5 &&
        std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
    int n = digits ? std::stoi(std::string(port)) : 0;
    if (!digits || n < 1 || n > 65535) {
      why = "the port must be a number from 1 to 65535";
      return std::nullopt;
    }
    out.port = std::to_string(n);
    out.defaultPort = false;
  } else {
    out.port = out.tls ? "443" : "80";
  }
  for (char c : target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      why = "the path contains a space or a control character";
      return std::nullopt;
    }
  }
  out.host = std::string(host);
  out.target = target.empty() ? "/" : std::string(target);
  if (out.target.front() == '?') out.target.insert(out.target.begin(), '/');
  return out;
}

HttpSinkConfig parseHttpSinkOptions(const Options& options, size_t stmtPos) {
  options.checkKnown(knownKeys(), {std::string(kHeaderPrefix)});
  HttpSinkConfig c;
  const OptionEntry& url = options.require("url", stmtPos);
  std::string why;
  std::optional<HttpUrl> parsed = parseHttpUrl(url.value, why);
  if (!parsed) {
    throw SqlError(
        sqlstate::kInvalidParameterValue,
        fmt::format("invalid value '{}' for option 'url': {}", url.value, why), url.valuePos,
        "write an absolute URL such as 'http://127.0.0.1:8080/alerts' or "
        "'https://hooks.example.com/path'; credentials go in 'http.header.Authorization'");
  }
  c.url = url.value;
  c.target = std::move(*parsed);
  options.getEnum("format", "json", {"json", "debezium-json"});
  if (const OptionEntry* mode = options.find("mode"); mode && iequals(mode->value, "upsert")) {
    // A request has no key to replace a row under, nor a tombstone to remove one.
    throw SqlError(
        sqlstate::kFeatureNotSupported, "http sinks cannot write 'mode' = 'upsert'", mode->valuePos,
        "use format = 'debezium-json': each change as a JSON object with its old and new row");
  }
  options.getEnum("mode", "update", {"append", "update"});
  c.method = toUpper(options.getEnum("http.method", "POST", {"POST", "PUT"}));
  for (const OptionEntry& e : options.entries()) {
    if (!startsWithI(e.key, kHeaderPrefix)) continue;
    std::string name = e.key.substr(kHeaderPrefix.size());
    if (name.empty() || !std::all_of(name.begin(), name.end(), isTokenChar)) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("invalid header name '{}' in option '{}'", name, e.key), e.keyPos,
                     "a header name is letters, digits and !#$%&'*+-.^_`|~, e.g. "
                     "'http.header.X-Team'");
    }
    if (reservedHeader(name)) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("header '{}' is written by the sink itself", name), e.keyPos,
                     "drop the option: Host, Content-Length, Transfer-Encoding and Connection "
                     "follow from the URL and the body");
    }
    if (e.value.find_first_of("\r\n") != std::string::npos ||
        e.value.find('\0') != std::string::npos) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("the value of option '{}' contains a line break", e.key),
                     e.valuePos);
    }
    c.headers.emplace_back(std::move(name), e.value);
  }
  c.batchMaxRows = options.getInt("batch.max.rows", 1, 1, 10000);
  c.lingerMs = options.getInt("batch.linger.ms", 5, 0, 60000);
  c.maxInFlight = options.getInt("max.in.flight", 4, 1, 64);
  c.retries = options.getInt("retries", 5, 0, 1000);
  c.retryBackoffMs = options.getInt("retry.backoff.ms", 100, 1, 60000);
  c.retryBackoffMaxMs = options.getInt("retry.backoff.max.ms", 10000, 1, 600000);
  if (c.retryBackoffMaxMs < c.retryBackoffMs) {
    const OptionEntry* e = options.find("retry.backoff.max.ms");
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("'retry.backoff.max.ms' ({}) is less than 'retry.backoff.ms' ({})",
                               c.retryBackoffMaxMs, c.retryBackoffMs),
                   e ? e->valuePos : stmtPos, "the cap of the backoff must be at least its base");
  }
  c.requestTimeoutMs = options.getInt("request.timeout.ms", 10000, 1, 600000);
  if (const OptionEntry* ca = options.find("http.ca")) {
    if (ca->value.empty()) {
      throw SqlError(sqlstate::kInvalidParameterValue, "option 'http.ca' is empty", ca->valuePos,
                     "name a PEM file of CA certificates on the server's machine");
    }
    if (!c.target.tls) {
      throw SqlError(sqlstate::kInvalidParameterValue, "'http.ca' applies to https:// URLs only",
                     ca->keyPos, "drop 'http.ca', or write the URL with https://");
    }
    c.caFile = ca->value;
  }
  return c;
}

HttpVerdict classifyHttpStatus(int status) {
  if (status >= 200 && status < 300) return HttpVerdict::Delivered;
  if (status == 408 || status == 429 || (status >= 500 && status < 600)) return HttpVerdict::Retry;
  return HttpVerdict::Permanent;
}

int64_t httpRetryDelayMs(int attempt, int64_t baseMs, int64_t maxMs, int64_t retryAfterMs) {
  if (retryAfterMs >= 0) return std::min(retryAfterMs, maxMs);
  int64_t d = baseMs;
  for (int i = 1; i < attempt && d < maxMs; ++i) d *= 2;
  return std::min(d, maxMs);
}

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

std::string httpBatchBody(const std::vector<std::string>& rows, bool array) {
  if (!array) return rows.empty() ? std::string() : rows.front();
  size_t size = 2;
  for (const std::string& r : rows) size += r.size() + 1;
  std::string body;
  body.reserve(size);
  body += '[';
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i > 0) body += ',';
    body += rows[i];
  }
  body += ']';
  return body;
}

namespace {

// One request's result after its retries.
struct Outcome {
  bool delivered = false;
  bool aborted = false;  // the writer is closing
  std::string error;     // what failed last, for the flush's message
};

// One answer, or the transport error that stood in for it.
struct Exchange {
  bool answered = false;
  int status = 0;
  std::string reason;
  std::string body;
  int64_t retryAfterMs = -1;
  std::string transportError;
  bool timedOut = false;
  bool aborted = false;
};

class HttpSink;

// One sender thread and its keep-alive connection. Every network call runs
// on the slot's own io_context until it completes; the stream's deadline
// bounds each call, and closing the writer stops the io_context, so no call
// outlives the writer.
class Slot {
 public:
  Slot(HttpSink& sink, ssl::context* tls) : sink_(sink), tls_(tls) {}
  void start();
  void stop() { ioc_.stop(); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run();
  Outcome deliver(const std::string& body);
  Exchange exchange(const std::string& body);
  template <class Stream>
  Exchange roundTrip(Stream& stream, const std::string& body);
  bool connect(std::string& error);
  void close();
  // Runs `start(handler)` to completion; false when the writer is closing.
  template <class Start>
  bool runOp(beast::error_code& ec, Start&& start);

  HttpSink& sink_;
  ssl::context* tls_;
  asio::io_context ioc_;
  std::optional<beast::tcp_stream> tcp_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> ssl_;
  bool open_ = false;
  std::thread thread_;
};

// Each record is one row of a request's body; debezium-json sends one object
// per change.
class HttpSink final : public EncodingSinkWriter {
 public:
  HttpSink(const SinkSpec& sink, HttpSinkConfig config)
      : EncodingSinkWriter(sink, &format::makeJsonEncoder),
        config_(std::move(config)),
        queueBound_(static_cast<size_t>(
            std::max<int64_t>(1024, 4 * config_.batchMaxRows * config_.maxInFlight))) {
    if (config_.target.tls) {
      tls_ = std::make_unique<ssl::context>(ssl::context::tls_client);
      tls_->set_default_verify_paths();
      if (!config_.caFile.empty()) {
        // Read here rather than by OpenSSL: beneath --files-dir, as every file
        // a statement names (common/file_beneath.h). A bundle of CA
        // certificates is at most a few hundred KB.
        constexpr size_t kMaxCaFileBytes = 16u << 20;
        std::string pem;
        std::string why;
        beast::error_code ec;
        if (readServerFile(config_.caFile, kMaxCaFileBytes, pem, why)) {
          tls_->add_certificate_authority(asio::buffer(pem), ec);
          if (ec) why = ec.message();
        }
        if (!why.empty()) {
          throw SqlError(sqlstate::kIoError,
                         fmt::format("could not read the CA file \"{}\" of 'http.ca': {}",
                                     config_.caFile, why));
        }
      }
      tls_->set_verify_mode(ssl::verify_peer);
    }
    for (int64_t i = 0; i < config_.maxInFlight; ++i) {
      slots_.push_back(std::make_unique<Slot>(*this, tls_.get()));
    }
    for (auto& s : slots_) s->start();
  }

  ~HttpSink() override {
    {
      std::lock_guard lock(mu_);
      stopping_.store(true);
    }
    work_.notify_all();
    room_.notify_all();
    closing_.notify_all();
    for (auto& s : slots_) s->stop();
    for (auto& s : slots_) s->join();
  }

  int64_t deliveryErrors() const override { return errors_.load(std::memory_order_relaxed); }

  std::string description() const override { return fmt::format("HttpSink[{}]", config_.url); }

 private:
  friend class Slot;

  void deliver(const EncodedRecord& record) override { enqueue(record); }

  void flushRecords(int timeoutMs) override {
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
    std::unique_lock lock(mu_);
    const int64_t target = enqueued_;
    flushTarget_ = std::max(flushTarget_, target);
    work_.notify_all();
    while (settled_ < target) {
      if (room_.wait_until(lock, deadline) == std::cv_status::timeout && settled_ < target) {
        throw SqlError(sqlstate::kConnectionFailure,
                       fmt::format("{}: {} rows not acknowledged within {} ms{}", description(),
                                   target - settled_, timeoutMs,
                                   lastError_.empty() ? "" : "; last error: " + lastError_),
                       SqlError::npos,
                       "check that the server of the URL is up and answers in time");
      }
    }
    throwFailure();
  }

  struct Queued {
    std::string json;
    Clock::time_point at;
  };

  // Rows that failed for good since the last report, as the SqlError that
  // fails the flow. Called with mu_ held.
  void throwFailure() {
    if (failedSinceFlush_ == 0) return;
    int64_t failed = failedSinceFlush_;
    failedSinceFlush_ = 0;
    failing_ = false;
    throw SqlError(sqlstate::kIoError,
                   fmt::format("{}: {} {} could not be delivered: {}", description(), failed,
                               failed == 1 ? "row" : "rows", lastError_));
  }

  void enqueue(const EncodedRecord& record) {
    std::unique_lock lock(mu_);
    // A failure is reported by the next write as well as by the next flush:
    // epochs may be minutes apart, and the flow should fail soon after it.
    throwFailure();
    // Backpressure: the senders always make room, each request being
    // bounded by its timeout and its retries.
    room_.wait(lock, [&] { return queue_.size() < queueBound_ || stopping_.load(); });
    queue_.push_back({record.value, config_.batchMaxRows > 1 ? Clock::now() : Clock::time_point{}});
    ++enqueued_;
    if (idle_ > 0) work_.notify_one();
  }

  // A slot's next batch: up to 'batch.max.rows' queued rows, once there are
  // that many, or the oldest has waited 'batch.linger.ms', or a flush waits
  // for them. Empty when the writer closes.
  std::vector<std::string> take() {
    std::unique_lock lock(mu_);
    const size_t n = static_cast<size_t>(config_.batchMaxRows);
    for (;;) {
      if (stopping_.load()) return {};
      if (!queue_.empty()) {
        auto due = queue_.front().at + std::chrono::milliseconds(config_.lingerMs);
        bool ready = n == 1 || queue_.size() >= n || config_.lingerMs == 0 ||
                     flushTarget_ > taken_ || failing_ || Clock::now() >= due;
        if (ready) {
          std::vector<std::string> batch;
          size_t k = std::min(n, queue_.size());
          batch.reserve(k);
          for (size_t i = 0; i < k; ++i) {
            batch.push_back(std::move(queue_.front().json));
            queue_.pop_front();
          }
          taken_ += static_cast<int64_t>(k);
          room_.notify_all();
          return batch;
        }
        ++idle_;
        work_.wait_until(lock, due);
        --idle_;
      } else {
        ++idle_;
        work_.wait(lock);
        --idle_;
      }
    }
  }

  // Whether the rows of a batch are to be failed without a request: a
  // permanent failure is already waiting for the next flush to fail the flow.
  bool failing() {
    std::lock_guard lock(mu_);
    return failing_;
  }

  void settle(size_t rows, const Outcome& outcome) {
    {
      std::lock_guard lock(mu_);
      settled_ += static_cast<int64_t>(rows);
      if (!outcome.delivered && !outcome.aborted) {
        failedSinceFlush_ += static_cast<int64_t>(rows);
        errors_.fetch_add(static_cast<int64_t>(rows), std::memory_order_relaxed);
        if (!outcome.error.empty()) lastError_ = outcome.error;
        failing_ = true;
      }
    }
    room_.notify_all();
  }

  // Sleeps `ms` unless the writer closes first; false when it does.
  bool backoff(int64_t ms) {
    std::unique_lock lock(mu_);
    return !closing_.wait_for(lock, std::chrono::milliseconds(ms),
                              [&] { return stopping_.load(); });
  }

  void noteError(const std::string& error) {
    std::lock_guard lock(mu_);
    lastError_ = error;
  }

  const HttpSinkConfig config_;
  std::unique_ptr<ssl::context> tls_;
  const size_t queueBound_;

  std::mutex mu_;
  std::condition_variable work_;     // slots: rows queued, a flush, closing
  std::condition_variable room_;     // write() and flush(): rows taken or settled
  std::condition_variable closing_;  // slots waiting out a backoff
  std::deque<Queued> queue_;
  int64_t enqueued_ = 0;  // rows written since open
  int64_t taken_ = 0;     // rows a slot took
  int64_t settled_ = 0;   // rows delivered or failed for good
  int64_t flushTarget_ = 0;
  int64_t failedSinceFlush_ = 0;
  bool failing_ = false;
  int idle_ = 0;
  std::string lastError_;
  std::atomic<bool> stopping_{false};
  std::atomic<int64_t> errors_{0};

  std::vector<std::unique_ptr<Slot>> slots_;
};

void Slot::start() {
  thread_ = std::thread([this] { run(); });
}

void Slot::run() {
  const bool array = sink_.config_.batchMaxRows > 1;
  for (;;) {
    std::vector<std::string> batch = sink_.take();
    if (batch.empty()) break;
    Outcome outcome;
    // Behind a failure the rows fail unsent: the flow is about to fail on
    // the error already recorded, and the rows are replayed after it.
    if (!sink_.failing()) outcome = deliver(httpBatchBody(batch, array));
    sink_.settle(batch.size(), outcome);
    if (outcome.aborted) break;
  }
  close();
}

Outcome Slot::deliver(const std::string& body) {
  const HttpSinkConfig& c = sink_.config_;
  Outcome out;
  int64_t retryAfterMs = -1;
  for (int attempt = 0; attempt <= c.retries; ++attempt) {
    if (attempt > 0 && !sink_.backoff(httpRetryDelayMs(attempt, c.retryBackoffMs,
                                                       c.retryBackoffMaxMs, retryAfterMs))) {
      out.aborted = true;
      return out;
    }
    // A kept-alive connection the server has closed meanwhile fails before
    // any answer: that costs no retry, the request goes again on a new one.
    bool reused = open_;
    Exchange x = exchange(body);
    if (!x.aborted && !x.answered && !x.timedOut && reused) x = exchange(body);
    if (x.aborted) {
      out.aborted = true;
      return out;
    }
    retryAfterMs = -1;
    if (!x.answered) {
      out.error = fmt::format("{} {}: {}", c.method, c.url, x.transportError);
      sink_.noteError(out.error);
      continue;
    }
    HttpVerdict v = classifyHttpStatus(x.status);
    if (v == HttpVerdict::Delivered) {
      out.delivered = true;
      return out;
    }
    out.error = fmt::format("{} {} answered HTTP {}{}{}{}", c.method, c.url, x.status,
                            x.reason.empty() ? "" : " ", x.reason,
                            x.body.empty() ? "" : ": " + printable(x.body));
    if (v == HttpVerdict::Permanent) return out;
    sink_.noteError(out.error);
    retryAfterMs = x.retryAfterMs;
  }
  if (c.retries > 0) out.error += fmt::format(" (after {} retries)", c.retries);
  return out;
}

template <class Start>
bool Slot::runOp(beast::error_code& ec, Start&& start) {
  bool done = false;
  start([&](beast::error_code e, auto&&...) {
    ec = e;
    done = true;
  });
  ioc_.restart();
  // A writer closing after restart() has stopped the io_context, or is
  // seen here: either way run() does not start a wait of its own.
  if (sink_.stopping_.load()) return false;
  ioc_.run();
  return done;
}

bool Slot::connect(std::string& error) {
  const HttpSinkConfig& c = sink_.config_;
  const auto timeout = std::chrono::milliseconds(c.requestTimeoutMs);
  tcp::resolver resolver(ioc_);
  beast::error_code ec;
  auto endpoints = resolver.resolve(c.target.host, c.target.port, ec);
  if (ec) {
    error = fmt::format("cannot resolve {}: {}", c.target.host, ec.message());
    return false;
  }
  ssl_.reset();
  tcp_.reset();
  beast::tcp_stream* lowest;
  if (tls_) {
    ssl_.emplace(ioc_, *tls_);
    lowest = &beast::get_lowest_layer(*ssl_);
  } else {
    tcp_.emplace(ioc_);
    lowest = &*tcp_;
  }
  lowest->expires_after(timeout);
  if (!runOp(ec, [&](auto handler) { lowest->async_connect(endpoints, std::move(handler)); })) {
    return false;
  }
  if (ec) {
    error = fmt::format("cannot connect to {}:{}: {}", c.target.host, c.target.port,
                        ec == beast::error::timeout ? "timed out" : ec.message());
    return false;
  }
  lowest->socket().set_option(tcp::no_delay(true), ec);
  if (ssl_) {
    // SNI for a host name (not for an address literal), and the certificate
    // must name the host or address.
    beast::error_code notAddress;
    asio::ip::make_address(c.target.host, notAddress);
    if (notAddress && !SSL_set_tlsext_host_name(ssl_->native_handle(), c.target.host.c_str())) {
      error = "cannot set the TLS server name";
      return false;
    }
    ssl_->set_verify_callback(ssl::host_name_verification(c.target.host));
    lowest->expires_after(timeout);
    if (!runOp(ec, [&](auto handler) {
          ssl_->async_handshake(ssl::stream_base::client, std::move(handler));
        })) {
      return false;
    }
    if (ec) {
      error = fmt::format("TLS handshake with {} failed: {}", c.target.host, ec.message());
      return false;
    }
  }
  open_ = true;
  return true;
}

void Slot::close() {
  beast::error_code ec;
  if (ssl_) beast::get_lowest_layer(*ssl_).socket().close(ec);
  if (tcp_) tcp_->socket().close(ec);
  open_ = false;
}

Exchange Slot::exchange(const std::string& body) {
  Exchange x;
  if (!open_) {
    std::string error;
    if (!connect(error)) {
      close();
      x.aborted = sink_.stopping_.load();
      x.transportError = std::move(error);
      return x;
    }
  }
  x = ssl_ ? roundTrip(*ssl_, body) : roundTrip(*tcp_, body);
  if (!x.answered) close();
  return x;
}

template <class Stream>
Exchange Slot::roundTrip(Stream& stream, const std::string& body) {
  const HttpSinkConfig& c = sink_.config_;
  Exchange x;
  bhttp::request<bhttp::string_body> req(c.method == "PUT" ? bhttp::verb::put : bhttp::verb::post,
                                         c.target.target, 11);
  std::string host =
      c.target.host.find(':') != std::string::npos ? "[" + c.target.host + "]" : c.target.host;
  if (!c.target.defaultPort) host += ":" + c.target.port;
  req.set(bhttp::field::host, host);
  req.set(bhttp::field::user_agent, "rtsql");
  req.set(bhttp::field::content_type, "application/json");
  for (const auto& [name, value] : c.headers) req.set(name, value);
  req.keep_alive(true);
  req.body() = body;
  req.prepare_payload();

  beast::tcp_stream& lowest = beast::get_lowest_layer(stream);
  lowest.expires_after(std::chrono::milliseconds(c.requestTimeoutMs));
  beast::error_code ec;
  if (!runOp(ec, [&](auto handler) { bhttp::async_write(stream, req, std::move(handler)); })) {
    x.aborted = true;
    return x;
  }
  if (ec) {
    x.timedOut = ec == beast::error::timeout;
    x.transportError = ec == beast::error::timeout ? "timed out sending the request"
                                                   : "sending the request: " + ec.message();
    return x;
  }
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(1 << 20);
  if (!runOp(ec, [&](auto handler) {
        bhttp::async_read(stream, buffer, parser, std::move(handler));
      })) {
    x.aborted = true;
    return x;
  }
  if (ec) {
    x.timedOut = ec == beast::error::timeout;
    x.transportError = ec == beast::error::timeout
                           ? fmt::format("no answer within {} ms", c.requestTimeoutMs)
                           : "reading the answer: " + ec.message();
    return x;
  }
  auto& res = parser.get();
  x.answered = true;
  x.status = static_cast<int>(res.result_int());
  x.reason = std::string(res.reason().data(), res.reason().size());
  x.body = std::move(res.body());
  if (auto it = res.find(bhttp::field::retry_after); it != res.end()) {
    x.retryAfterMs = parseRetryAfterMs(std::string_view(it->value().data(), it->value().size()));
  }
  if (!res.keep_alive()) close();
  return x;
}

}  // namespace

std::unique_ptr<SinkWriter> makeHttpSink(const SinkSpec& sink, const std::string& /*flowName*/,
                                         int /*task*/) {
  return std::make_unique<HttpSink>(sink, parseHttpSinkOptions(sink.options, SqlError::npos));
}

}  // namespace rtsql
