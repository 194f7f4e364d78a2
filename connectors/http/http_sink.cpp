// The HTTP sink (see http_sink.h).
#include "connectors/http/http_sink.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/ssl/context.hpp>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "common/schema.h"
#include "connectors/format/codec.h"
#include "connectors/format/decoders.h"
#include "connectors/format/encoding_sink_writer.h"
#include "connectors/net/http_client.h"
#include "connectors/registry.h"

namespace rtsql {

namespace ssl = boost::asio::ssl;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::string_view kHeaderPrefix = "http.header.";
// The largest answer read: a webhook answers a status and a few words.
constexpr uint64_t kMaxAnswer = 1 << 20;

const std::vector<std::string>& httpSinkKeys() {
  static const std::vector<std::string> keys = {
      "connector",         "url",     "format",           "mode",
      "http.method",       "http.ca", "batch.max.rows",   "batch.linger.ms",
      "max.in.flight",     "retries", "retry.backoff.ms", "retry.backoff.max.ms",
      "request.timeout.ms"};
  return keys;
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


}  // namespace

HttpSinkConfig parseHttpSinkOptions(const Options& options, size_t stmtPos) {
  options.checkKnown(httpSinkKeys(), {std::string(kHeaderPrefix)});
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
  c.requestTimeoutMs = options.getInt("request.timeout.ms", 10000, 1, 60000);
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

class HttpSink;

// One sender thread and its keep-alive connection (rtsqld's outbound client,
// connectors/net/http_client.h). Its waits end when the writer closes.
class Slot {
 public:
  Slot(HttpSink& sink, const HttpUrl& url, std::shared_ptr<ssl::context> tls)
      : sink_(sink), client_(url, std::move(tls)) {}
  void start();
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run();
  Outcome deliver(const std::string& body);

  HttpSink& sink_;
  net::HttpClient client_;
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
    if (config_.target.tls) tls_ = net::makeTlsClientContext(config_.caFile);
    for (int64_t i = 0; i < config_.maxInFlight; ++i) {
      slots_.push_back(std::make_unique<Slot>(*this, config_.target, tls_));
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
    for (auto& s : slots_) s->join();
  }

  int64_t deliveryErrors() const override { return errors_.load(std::memory_order_relaxed); }

  void flowStopping() override {
    {
      std::lock_guard lock(mu_);
      lastTries_.store(true);
    }
    closing_.notify_all();  // a backoff in progress ends: its request goes once more now
  }

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

  // Sleeps `ms` unless the writer closes first (false), the flow stops or
  // rtsqld stops its outbound traffic (true: the request goes at once, for
  // its last attempt or to be cancelled). The process's stop comes without
  // a notification: it is polled.
  bool backoff(int64_t ms) {
    const auto until = Clock::now() + std::chrono::milliseconds(ms);
    std::unique_lock lock(mu_);
    while (!stopping_.load()) {
      if (lastTries_.load() || net::outboundStopped() || Clock::now() >= until) return true;
      closing_.wait_until(lock, std::min(until, Clock::now() + std::chrono::milliseconds(
                                                                   net::kPollMillis)));
    }
    return false;
  }

  void noteError(const std::string& error) {
    std::lock_guard lock(mu_);
    lastError_ = error;
  }

  const HttpSinkConfig config_;
  std::shared_ptr<ssl::context> tls_;
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
  std::atomic<bool> stopping_{false};  // the writer closes: senders leave
  // The flow stops (flowStopping()): each request makes one more attempt at
  // most, so the final epoch's flush does not wait out the retry schedule.
  std::atomic<bool> lastTries_{false};
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
  client_.close();
}

Outcome Slot::deliver(const std::string& body) {
  const HttpSinkConfig& c = sink_.config_;
  net::HttpRequest req;
  req.method = c.method;
  req.target = c.target.target;
  req.headers.emplace_back("Content-Type", "application/json");
  for (const auto& header : c.headers) req.headers.push_back(header);
  req.body = body;
  req.keepAlive = true;
  Outcome out;
  int64_t retryAfterMs = -1;
  bool lastTry = false;  // the flow stops: no attempt after this one
  int attempt = 0;
  for (;; ++attempt) {
    if (attempt > 0) {
      if (attempt > c.retries || lastTry) break;
      if (!sink_.backoff(
              httpRetryDelayMs(attempt, c.retryBackoffMs, c.retryBackoffMaxMs, retryAfterMs))) {
        out.aborted = true;
        return out;
      }
    }
    lastTry = sink_.lastTries_.load();
    net::HttpResult x = client_.exchange(req, {c.requestTimeoutMs, kMaxAnswer}, &sink_.stopping_);
    if (x.failure == net::Failure::Cancelled) {
      // The writer closing drops the rows (nobody flushes it any more).
      // rtsqld stopping its outbound traffic fails them: the flush of the
      // final epoch must not count them as delivered, so the epoch is not
      // committed and the rows go again when the flow starts again.
      if (sink_.stopping_.load()) {
        out.aborted = true;
      } else {
        out.error = fmt::format("{} {}: {}", c.method, c.url, x.error);
      }
      return out;
    }
    retryAfterMs = -1;
    if (!x.ok()) {
      out.error = fmt::format("{} {}: {}", c.method, c.url, x.error);
      // The operator's allow-list does not change while the flow runs.
      if (x.failure == net::Failure::Refused) return out;
      sink_.noteError(out.error);
      continue;
    }
    HttpVerdict v = classifyHttpStatus(x.answer.status);
    if (v == HttpVerdict::Delivered) {
      out.delivered = true;
      return out;
    }
    // The status and the size only: the answer's text is the server's, and
    // the URL may be the user's to choose.
    out.error = fmt::format("{} {} answered HTTP {} ({} bytes)", c.method, c.url,
                            x.answer.status, x.answer.body.size());
    if (v == HttpVerdict::Permanent) return out;
    sink_.noteError(out.error);
    retryAfterMs = x.answer.retryAfterMs;
  }
  if (lastTry && attempt <= c.retries) {
    out.error += " (not retried: the flow stops; its rows are sent again when it starts)";
  } else if (c.retries > 0) {
    out.error += fmt::format(" (after {} retries)", c.retries);
  }
  return out;
}

}  // namespace

std::unique_ptr<SinkWriter> makeHttpSink(const SinkSpec& sink, const std::string& /*flowName*/,
                                         int /*task*/) {
  // What CREATE SINK read, carried by the plan (a spec built by hand is read
  // through its connector by sinkOptionsOf).
  return std::make_unique<HttpSink>(
      sink, connectorOptionsAs<HttpSinkConfig>(sinkOptionsOf(sink).own, "HTTP sink"));
}

}  // namespace rtsql
