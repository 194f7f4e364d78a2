// Tests for the HTTP endpoint: routes and the Prometheus rendering on strings,
// then a real HttpServer on a loopback port driven by a raw socket client that
// also sends what well-behaved clients never would (oversized, malformed, slow
// and too many requests). The engine is a fake http::Source.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "server/http/host_header.h"
#include "server/http/http_server.h"
#include "server/http/metrics.h"
#include "server/http/routes.h"
#include "server/pgwire/auth.h"
#include "server/users.h"

using namespace rtsql::http;
namespace pgwire = rtsql::pgwire;
using namespace std::chrono_literals;

namespace {

// ---- A fake engine --------------------------------------------------------------

// A progress JSON shaped like FlowRuntime's, with one stateful operator.
std::string progressFor(const std::string& name, int batch, int inRows, int outRows) {
  return R"({"id":"00000000-0000-0000-0000-000000000001","runId":"r","name":")" + name +
         R"(","timestamp":"2024-05-01T10:00:00.000Z","batchId":)" + std::to_string(batch) +
         R"(,"live":true,"numInputRows":)" + std::to_string(inRows) +
         R"(,"inputRowsPerSecond":12.5,"processedRowsPerSecond":12.5,)"
         R"("durationMs":{"triggerExecution":8000,"commitOffsets":0},)"
         R"("eventTime":{"max":"2024-05-01T10:00:05.000Z","watermark":"2024-05-01T10:00:00.000Z"},)"
         R"("stateOperators":[{"operatorName":"aggregate","operatorId":3,"numRowsTotal":42,)"
         R"("numRowsUpdated":7,"numRowsDroppedByWatermark":0,"memoryUsedBytes":4096}],)"
         R"("sources":[{"description":"KafkaV2[Subscribe[clicks]]",)"
         R"("startOffset":{"clicks":{"0":0,"1":0}},"endOffset":{"clicks":{"0":10,"1":5}},)"
         R"("latestOffset":{"clicks":{"0":15,"1":5}},"numInputRows":)" +
         std::to_string(inRows) +
         R"(,"inputRowsPerSecond":12.5,"processedRowsPerSecond":12.5,"numDecodeErrors":2}],)"
         R"("sink":{"description":"KafkaSink[out]","numOutputRows":)" +
         std::to_string(outRows) +
         R"(},"rtmMetrics":{"processingLatencyMs":{"P0":0.1,"P50":0.5,"P90":0.9,"P95":1.5,"P99":2.5},)"
         R"("sourceQueuingLatencyMs":{"P0":0,"P50":1,"P90":2,"P95":3,"P99":4},)"
         R"("e2eLatencyMs":{"P0":1,"P50":2,"P90":3,"P95":4,"P99":5}},)"
         R"("recentMetrics":{"intervalStart":"2024-05-01T10:00:00.000Z","intervalMs":5000,"numOutputRows":7,)"
         R"("processingLatencyMs":{"P0":0.2,"P50":0.6,"P90":1,"P95":1.2,"P99":1.8},)"
         R"("sourceQueuingLatencyMs":{"P0":0.5,"P50":2.5,"P90":3,"P95":4,"P99":4.5},)"
         R"("e2eLatencyMs":{"P0":1,"P50":3,"P90":4,"P95":5,"P99":6}},)"
         R"("checkpoint":{"epoch":3,"timestamp":"2024-05-01T10:00:00.000Z","durationMs":12.5,)"
         R"("stateBytes":8192},"lastEpoch":null})";
}

class FakeSource : public Source {
 public:
  std::vector<FlowStatus> flows(bool withProgress) const override {
    waitIfBlocked();
    std::lock_guard lock(mu_);
    if (throwOnRead) throw std::runtime_error("catalog unavailable");
    std::vector<FlowStatus> out = flows_;
    for (auto& f : out) {
      if (!withProgress) f.progressJson.clear();
    }
    return out;
  }
  std::optional<std::string> progress(const std::string& flow) const override {
    std::lock_guard lock(mu_);
    for (const auto& f : flows_) {
      if (f.name == flow) return f.progressJson;
    }
    return std::nullopt;
  }
  SlotUsage slots() const override { return {used, 64}; }

  void add(FlowStatus f) {
    std::lock_guard lock(mu_);
    flows_.push_back(std::move(f));
  }
  void block() {
    std::lock_guard lock(mu_);
    blocked_ = true;
  }
  void unblock() {
    {
      std::lock_guard lock(mu_);
      blocked_ = false;
    }
    cv_.notify_all();
  }
  // Becomes true once a reader is waiting in flows().
  std::atomic<bool> readerWaiting{false};
  bool throwOnRead = false;
  int used = 3;

 private:
  void waitIfBlocked() const {
    std::unique_lock lock(mu_);
    if (!blocked_) return;
    const_cast<FakeSource*>(this)->readerWaiting = true;
    cv_.wait_for(lock, 10s, [&] { return !blocked_; });
  }

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool blocked_ = false;
  std::vector<FlowStatus> flows_;
};

FlowStatus runningFlow(const std::string& name) {
  FlowStatus f;
  f.name = name;
  f.sink = "out";
  f.state = "running";
  f.slots = 2;
  f.progressJson = progressFor(name, 4, 100, 60);
  return f;
}

FlowStatus failedFlow(const std::string& name) {
  FlowStatus f;
  f.name = name;
  f.sink = "out2";
  f.state = "failed";
  f.error = "record at offset 7 is not \"JSON\"";
  f.slots = 1;
  f.progressJson = progressFor(name, 0, 7, 0);
  return f;
}

// ---- A Prometheus text format (0.0.4) checker ------------------------------------

bool isMetricName(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_' || s[0] == ':')) {
    return false;
  }
  return std::all_of(s.begin(), s.end(),
                     [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':';
                     });
}

bool isLabelName(const std::string& s) {
  return !s.empty() && s.find(':') == std::string::npos && isMetricName(s);
}

bool isValue(const std::string& s) {
  if (s == "NaN" || s == "+Inf" || s == "-Inf") return true;
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Returns the problems found (empty: valid) and fills `samples`.
std::vector<std::string> checkExposition(const std::string& text, std::vector<Sample>* samples) {
  std::vector<std::string> problems;
  if (text.empty() || text.back() != '\n') problems.push_back("text does not end with a newline");
  std::map<std::string, std::string> types;
  std::set<std::string> helps;
  std::set<std::string> finished;  // families whose samples are over
  std::string current;             // the family whose samples may come now
  std::set<std::string> series;
  size_t start = 0;
  int lineNo = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(start, nl - start);
    start = nl + 1;
    ++lineNo;
    auto bad = [&](const std::string& why) {
      problems.push_back("line " + std::to_string(lineNo) + ": " + why + ": " + line);
    };
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::string kind = line.substr(0, 7);
      if (kind != "# HELP " && kind != "# TYPE ") continue;  // a plain comment
      std::string rest = line.substr(7);
      size_t sp = rest.find(' ');
      std::string name = rest.substr(0, sp);
      if (!isMetricName(name)) bad("bad metric name");
      if (name != current) {
        if (finished.count(name)) bad("family declared again after its samples");
        if (!current.empty()) finished.insert(current);
        current = name;
      }
      if (kind == "# HELP ") {
        if (!helps.insert(name).second) bad("second HELP");
      } else {
        std::string type = sp == std::string::npos ? "" : rest.substr(sp + 1);
        static const std::set<std::string> kTypes = {"counter", "gauge", "summary", "histogram", "untyped"};
        if (!kTypes.count(type)) bad("bad type");
        if (types.count(name)) bad("second TYPE");
        types[name] = type;
      }
      continue;
    }
    Sample s;
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = line.substr(0, i);
    if (!isMetricName(s.name)) {
      bad("bad sample name");
      continue;
    }
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        size_t eq = line.find('=', i);
        if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
          bad("bad label");
          break;
        }
        std::string label = line.substr(i, eq - i);
        if (!isLabelName(label)) bad("bad label name");
        std::string value;
        size_t j = eq + 2;
        bool closed = false;
        for (; j < line.size(); ++j) {
          if (line[j] == '\\') {
            if (j + 1 >= line.size()) break;
            char e = line[++j];
            if (e == 'n') value += '\n';
            else if (e == '\\' || e == '"') value += e;
            else bad("bad escape in label value");
          } else if (line[j] == '"') {
            closed = true;
            break;
          } else {
            value += line[j];
          }
        }
        if (!closed) {
          bad("unterminated label value");
          break;
        }
        if (!s.labels.emplace(label, value).second) bad("label given twice");
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size() || line[i] != '}') {
        bad("labels not closed");
        continue;
      }
      ++i;
    }
    if (i >= line.size() || line[i] != ' ') {
      bad("no space before the value");
      continue;
    }
    std::string value = line.substr(i + 1);
    if (!isValue(value)) bad("bad value");
    s.value = std::strtod(value.c_str(), nullptr);
    if (!types.count(s.name) || !helps.count(s.name)) bad("sample before its HELP and TYPE");
    if (s.name != current) bad("sample outside its family's group");
    std::string key = s.name;
    for (const auto& [k, v] : s.labels) key += "|" + k + "=" + v;
    if (!series.insert(key).second) bad("duplicate series");
    if (samples) samples->push_back(std::move(s));
  }
  return problems;
}

const Sample* findSample(const std::vector<Sample>& samples, const std::string& name,
                         const std::map<std::string, std::string>& labels) {
  for (const auto& s : samples) {
    if (s.name == name && s.labels == labels) return &s;
  }
  return nullptr;
}

// ---- A raw HTTP client ------------------------------------------------------------

int connectTo(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

void sendAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server may close early (413); reading tells
    off += static_cast<size_t>(n);
  }
}

// Reads until the server closes the connection (or 5 s pass without data).
std::string readAll(int fd) {
  std::string out;
  char buf[4096];
  for (int i = 0; i < 10000; ++i) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

struct HttpResult {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

HttpResult parseResponse(const std::string& raw) {
  HttpResult r;
  size_t headEnd = raw.find("\r\n\r\n");
  REQUIRE_MESSAGE(headEnd != std::string::npos, "no complete response: ", raw);
  std::string head = raw.substr(0, headEnd);
  REQUIRE(head.rfind("HTTP/1.1 ", 0) == 0);
  r.status = std::atoi(head.c_str() + 9);
  size_t pos = head.find("\r\n");
  while (pos != std::string::npos) {
    size_t next = head.find("\r\n", pos + 2);
    std::string line = head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      r.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
    }
    pos = next;
  }
  r.body = raw.substr(headEnd + 4);
  if (r.headers.count("content-length")) {
    CHECK(r.body.size() == std::stoul(r.headers["content-length"]));
  }
  return r;
}

HttpResult request(uint16_t port, const std::string& method, const std::string& target,
                   const std::string& extraHeaders = "") {
  int fd = connectTo(port);
  sendAll(fd, method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
                  extraHeaders + "\r\n");
  std::string raw = readAll(fd);
  ::close(fd);
  return parseResponse(raw);
}

HttpResult get(uint16_t port, const std::string& target) { return request(port, "GET", target); }

// A GET whose Host header is `host`.
HttpResult getWithHost(uint16_t port, const std::string& target, const std::string& host) {
  int fd = connectTo(port);
  sendAll(fd, "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n");
  std::string raw = readAll(fd);
  ::close(fd);
  return parseResponse(raw);
}

// A server on a free loopback port with its io_context on a thread of its own.
struct RunningServer {
  explicit RunningServer(const Source& source, HttpServerOptions options = {})
      : work(boost::asio::make_work_guard(io)), server(io, source, options) {
    server.start();
    thread = std::thread([this] { io.run(); });
  }
  ~RunningServer() {
    server.stop();
    work.reset();
    io.stop();
    thread.join();
  }
  uint16_t port() const { return server.port(); }

  boost::asio::io_context io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work;
  HttpServer server;
  std::thread thread;
};

}  // namespace

// ---- Routes ---------------------------------------------------------------------

TEST_CASE("http routes: healthz, flows and progress") {
  FakeSource src;
  src.add(runningFlow("clicks_flow"));
  src.add(failedFlow("bad flow"));
  FlowStatus view = runningFlow("totals");
  view.materializedView = true;
  src.add(view);

  Reply h = route(src, "GET", "/healthz");
  CHECK(h.status == 200);
  CHECK(h.body == "ok\n");
  CHECK(h.contentType.rfind("text/plain", 0) == 0);

  Reply f = route(src, "GET", "/flows");
  CHECK(f.status == 200);
  CHECK(f.contentType == "application/json");
  CHECK(f.body ==
        "[{\"name\":\"clicks_flow\",\"sink\":\"out\",\"state\":\"running\",\"error\":null,"
        "\"slots\":2,\"materializedView\":false},"
        "{\"name\":\"bad flow\",\"sink\":\"out2\",\"state\":\"failed\","
        "\"error\":\"record at offset 7 is not \\\"JSON\\\"\",\"slots\":1,\"materializedView\":false},"
        "{\"name\":\"totals\",\"sink\":\"out\",\"state\":\"running\",\"error\":null,"
        "\"slots\":2,\"materializedView\":true}]\n");

  Reply p = route(src, "GET", "/flows/clicks_flow/progress");
  CHECK(p.status == 200);
  CHECK(p.contentType == "application/json");
  CHECK(p.body == progressFor("clicks_flow", 4, 100, 60));

  // A name with a space arrives percent-encoded; a query string is ignored.
  Reply spaced = route(src, "GET", "/flows/bad%20flow/progress?pretty=1");
  CHECK(spaced.status == 200);
  CHECK(spaced.body == progressFor("bad flow", 0, 7, 0));

  Reply missing = route(src, "GET", "/flows/nope/progress");
  CHECK(missing.status == 404);
  CHECK(missing.contentType == "application/json");
  CHECK(missing.body == "{\"error\":\"flow \\\"nope\\\" does not exist\"}\n");

  CHECK(route(src, "GET", "/flows/bad%2/progress").status == 404);
  CHECK(route(src, "GET", "/flows//progress").status == 404);
  CHECK(route(src, "GET", "/flows/a/b/progress").status == 404);
  CHECK(route(src, "GET", "/").status == 200);  // the web console (console_test.cpp)
  CHECK(route(src, "GET", "/metricsx").status == 404);
  CHECK(route(src, "GET", "/flows/clicks_flow").status == 404);
}

TEST_CASE("http routes: methods other than GET are refused with 405 and Allow") {
  FakeSource src;
  for (const char* path : {"/healthz", "/flows", "/metrics", "/flows/x/progress"}) {
    for (const char* method : {"POST", "PUT", "DELETE", "HEAD"}) {
      Reply r = route(src, method, path);
      CHECK(r.status == 405);
      REQUIRE(r.headers.size() == 1);
      CHECK(r.headers[0].first == "Allow");
      CHECK(r.headers[0].second == "GET");
    }
  }
  // An unknown path is a 404 whatever the method.
  CHECK(route(src, "POST", "/nothing").status == 404);
}

TEST_CASE("http routes: a source that throws gives a 500 with a JSON error") {
  FakeSource src;
  src.throwOnRead = true;
  Reply r = route(src, "GET", "/flows");
  CHECK(r.status == 500);
  CHECK(r.body == "{\"error\":\"catalog unavailable\"}\n");
  CHECK(route(src, "GET", "/metrics").status == 500);
  CHECK(route(src, "GET", "/healthz").status == 200);
}

TEST_CASE("http percentDecode") {
  CHECK(percentDecode("abc") == "abc");
  CHECK(percentDecode("a%20b%2Fc%2f") == "a b/c/");
  CHECK(percentDecode("%41%") == std::nullopt);
  CHECK(percentDecode("%4") == std::nullopt);
  CHECK(percentDecode("%zz") == std::nullopt);
}

// ---- Metrics --------------------------------------------------------------------

TEST_CASE("http metrics: valid exposition format with every family of every flow") {
  FakeSource src;
  src.add(runningFlow("clicks_flow"));
  src.add(failedFlow("bad flow"));
  FlowStatus stopped;  // no runtime: no progress at all
  stopped.name = "idle";
  stopped.sink = "out3";
  stopped.state = "stopped";
  src.add(stopped);
  FlowStatus remote;  // another node of the cluster runs it
  remote.name = "elsewhere";
  remote.sink = "out4";
  remote.state = "remote";
  remote.error = "runs on node b";
  src.add(remote);

  std::string text = renderMetrics(src);
  std::vector<Sample> samples;
  auto problems = checkExposition(text, &samples);
  for (const auto& p : problems) FAIL_CHECK(p);
  CHECK(problems.empty());

  auto value = [&](const std::string& name, const std::map<std::string, std::string>& labels) {
    const Sample* s = findSample(samples, name, labels);
    REQUIRE_MESSAGE(s, "missing ", name);
    return s->value;
  };
  CHECK(value("rtsql_slots_total", {}) == 64);
  CHECK(value("rtsql_slots_used", {}) == 3);
  CHECK(value("rtsql_flow_running", {{"flow", "clicks_flow"}}) == 1);
  CHECK(value("rtsql_flow_running", {{"flow", "bad flow"}}) == 0);
  CHECK(value("rtsql_flow_running", {{"flow", "idle"}}) == 0);
  CHECK(value("rtsql_flow_failed", {{"flow", "bad flow"}}) == 1);
  CHECK(value("rtsql_flow_running", {{"flow", "elsewhere"}}) == 0);
  CHECK(value("rtsql_flow_remote", {{"flow", "elsewhere"}}) == 1);
  CHECK(value("rtsql_flow_remote", {{"flow", "clicks_flow"}}) == 0);
  CHECK(value("rtsql_flow_slots", {{"flow", "clicks_flow"}}) == 2);
  CHECK(value("rtsql_flow_epoch", {{"flow", "clicks_flow"}}) == 4);
  CHECK(value("rtsql_flow_epoch_input_rows", {{"flow", "clicks_flow"}}) == 100);
  CHECK(value("rtsql_flow_epoch_output_rows", {{"flow", "clicks_flow"}}) == 60);
  CHECK(value("rtsql_flow_epoch_decode_errors", {{"flow", "clicks_flow"}}) == 2);
  CHECK(value("rtsql_flow_input_rows_per_second", {{"flow", "clicks_flow"}}) == 12.5);
  CHECK(value("rtsql_flow_latency_ms",
              {{"flow", "clicks_flow"}, {"kind", "processing"}, {"quantile", "0.99"}}) == 2.5);
  CHECK(value("rtsql_flow_latency_ms",
              {{"flow", "clicks_flow"}, {"kind", "source_queuing"}, {"quantile", "0.5"}}) == 1);
  CHECK(value("rtsql_flow_latency_ms", {{"flow", "bad flow"}, {"kind", "e2e"}, {"quantile", "0.95"}}) == 4);
  CHECK(value("rtsql_flow_recent_latency_ms",
              {{"flow", "clicks_flow"}, {"kind", "e2e"}, {"quantile", "0.99"}}) == 6);
  CHECK(value("rtsql_flow_recent_latency_ms",
              {{"flow", "clicks_flow"}, {"kind", "processing"}, {"quantile", "0.5"}}) == 0.6);
  CHECK(value("rtsql_flow_recent_latency_ms",
              {{"flow", "clicks_flow"}, {"kind", "source_queuing"}, {"quantile", "0.99"}}) == 4.5);
  CHECK(value("rtsql_flow_recent_output_rows", {{"flow", "clicks_flow"}}) == 7);
  CHECK(value("rtsql_flow_checkpoint_duration_ms", {{"flow", "clicks_flow"}}) == 12.5);
  CHECK(value("rtsql_flow_checkpoint_state_bytes", {{"flow", "clicks_flow"}}) == 8192);
  CHECK(value("rtsql_flow_state_rows",
              {{"flow", "clicks_flow"}, {"operator", "aggregate"}, {"operator_id", "3"}}) == 42);
  CHECK(value("rtsql_flow_state_memory_bytes",
              {{"flow", "clicks_flow"}, {"operator", "aggregate"}, {"operator_id", "3"}}) == 4096);
  // Partition 0 is 5 records behind, partition 1 is caught up.
  CHECK(value("rtsql_flow_source_lag_records", {{"flow", "clicks_flow"}}) == 5);
  CHECK(value("rtsql_flow_watermark_seconds", {{"flow", "clicks_flow"}}) == 1714557600.0);

  // The stopped flow without progress has its state, and nothing it cannot know.
  CHECK(findSample(samples, "rtsql_flow_epoch", {{"flow", "idle"}}) == nullptr);
  CHECK(findSample(samples, "rtsql_flow_slots", {{"flow", "idle"}}) == nullptr);

  // Every family has HELP and TYPE even with no flows at all.
  FakeSource empty;
  std::string none = renderMetrics(empty);
  CHECK(checkExposition(none, nullptr).empty());
  for (const char* family :
       {"rtsql_flow_latency_ms", "rtsql_flow_state_rows", "rtsql_flow_epoch_input_rows",
        "rtsql_flow_recent_latency_ms", "rtsql_flow_checkpoint_duration_ms"}) {
    CHECK(none.find(std::string("# TYPE ") + family + " gauge\n") != std::string::npos);
  }
}

TEST_CASE("http metrics: label values are escaped") {
  CHECK(escapeLabelValue("plain") == "plain");
  CHECK(escapeLabelValue("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");

  FakeSource src;
  src.add(runningFlow("we\"ird\\na\nme"));
  std::string text = renderMetrics(src);
  std::vector<Sample> samples;
  auto problems = checkExposition(text, &samples);
  for (const auto& p : problems) FAIL_CHECK(p);
  CHECK(text.find("rtsql_flow_running{flow=\"we\\\"ird\\\\na\\nme\"} 1\n") != std::string::npos);
  const Sample* s = findSample(samples, "rtsql_flow_running", {{"flow", "we\"ird\\na\nme"}});
  REQUIRE(s);
  CHECK(s->value == 1);
}

TEST_CASE("http metrics: the checker itself rejects broken expositions") {
  // The format check must fail on what it is meant to catch, or the tests above prove nothing.
  CHECK(!checkExposition("a 1\n", nullptr).empty());                                   // no HELP/TYPE
  CHECK(!checkExposition("# HELP a x\n# TYPE a gauge\na 1\na 2\n", nullptr).empty());  // duplicate
  CHECK(!checkExposition("# HELP a x\n# TYPE a gauge\na{x=\"1} 1\n", nullptr).empty());
  CHECK(!checkExposition("# HELP a x\n# TYPE a gauge\na one\n", nullptr).empty());
  CHECK(!checkExposition("# HELP a x\n# TYPE a gauge\n# HELP b x\n# TYPE b gauge\na 1\n", nullptr).empty());
  CHECK(checkExposition("# HELP a x\n# TYPE a gauge\na{x=\"1\",y=\"\\\"\"} 1\na 2\n", nullptr).empty());
}

// ---- The server on a socket -----------------------------------------------------

TEST_CASE("http server: every endpoint over a socket") {
  FakeSource src;
  src.add(runningFlow("clicks_flow"));
  RunningServer rs(src);
  REQUIRE(rs.port() != 0);

  HttpResult h = get(rs.port(), "/healthz");
  CHECK(h.status == 200);
  CHECK(h.body == "ok\n");
  CHECK(h.headers["content-type"] == "text/plain; charset=utf-8");

  HttpResult f = get(rs.port(), "/flows");
  CHECK(f.status == 200);
  CHECK(f.headers["content-type"] == "application/json");
  CHECK(f.body.find("\"name\":\"clicks_flow\"") != std::string::npos);

  HttpResult p = get(rs.port(), "/flows/clicks_flow/progress");
  CHECK(p.status == 200);
  CHECK(p.headers["content-type"] == "application/json");
  CHECK(p.body == progressFor("clicks_flow", 4, 100, 60));

  HttpResult m = get(rs.port(), "/metrics");
  CHECK(m.status == 200);
  CHECK(m.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(m.headers["cache-control"] == "no-store");
  std::vector<Sample> samples;
  CHECK(checkExposition(m.body, &samples).empty());
  CHECK(findSample(samples, "rtsql_flow_running", {{"flow", "clicks_flow"}}) != nullptr);

  CHECK(get(rs.port(), "/flows/none/progress").status == 404);
  CHECK(get(rs.port(), "/nowhere").status == 404);
  HttpResult post = request(rs.port(), "POST", "/metrics");
  CHECK(post.status == 405);
  CHECK(post.headers["allow"] == "GET");
}

TEST_CASE("http server: keep-alive serves several requests on one connection") {
  FakeSource src;
  RunningServer rs(src);
  int fd = connectTo(rs.port());
  sendAll(fd, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  // The first answer arrives while the connection stays open.
  std::string first;
  char buf[1024];
  for (int i = 0; i < 100 && first.find("ok\n") == std::string::npos; ++i) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    first.append(buf, static_cast<size_t>(n));
  }
  CHECK(parseResponse(first).status == 200);
  sendAll(fd, "GET /flows HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  HttpResult second = parseResponse(readAll(fd));
  ::close(fd);
  CHECK(second.status == 200);
  CHECK(second.body == "[]\n");
}

TEST_CASE("http server: oversized and malformed requests") {
  FakeSource src;
  HttpServerOptions o;
  o.maxRequestBytes = 1024;
  RunningServer rs(src, o);

  int fd = connectTo(rs.port());
  sendAll(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: " + std::string(4096, 'a') + "\r\n\r\n");
  HttpResult big = parseResponse(readAll(fd));
  ::close(fd);
  CHECK(big.status == 413);

  fd = connectTo(rs.port());
  sendAll(fd, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + std::string(2048, 'b'));
  HttpResult bigBody = parseResponse(readAll(fd));
  ::close(fd);
  CHECK(bigBody.status == 413);

  fd = connectTo(rs.port());
  sendAll(fd, "this is not http\r\n\r\n");
  HttpResult junk = parseResponse(readAll(fd));
  ::close(fd);
  CHECK(junk.status == 400);

  // The server is still fine afterwards.
  CHECK(get(rs.port(), "/healthz").status == 200);
}

TEST_CASE("http server: a silent client is dropped after the timeout") {
  FakeSource src;
  HttpServerOptions o;
  o.timeout = 300ms;
  RunningServer rs(src, o);
  int fd = connectTo(rs.port());
  sendAll(fd, "GET /heal");  // half a request line, then nothing
  auto begin = std::chrono::steady_clock::now();
  std::string got = readAll(fd);  // returns when the server closes (or after 5 s)
  auto waited = std::chrono::steady_clock::now() - begin;
  ::close(fd);
  CHECK(got.empty());
  CHECK(waited < 3s);
  CHECK(get(rs.port(), "/healthz").status == 200);
}

TEST_CASE("http server: connections beyond the limit get a 503, but for /healthz") {
  FakeSource src;
  HttpServerOptions o;
  o.maxConnections = 1;
  o.maxOverBudgetConnections = 1;
  RunningServer rs(src, o);
  int idle = connectTo(rs.port());
  // Once the first connection holds the one place, a request for anything but
  // /healthz is refused; /healthz is answered.
  int status = 0;
  for (int i = 0; i < 100 && status != 503; ++i) {
    status = get(rs.port(), "/flows").status;
    if (status != 503) std::this_thread::sleep_for(20ms);
  }
  CHECK(status == 503);
  HttpResult health = get(rs.port(), "/healthz");
  CHECK(health.status == 200);
  CHECK(health.body == "ok\n");
  ::close(idle);
  // Once the idle client is gone a new one is served (bounded retries while
  // the server notices the close).
  status = 0;
  for (int i = 0; i < 100 && status != 200; ++i) {
    status = get(rs.port(), "/flows").status;
    if (status != 200) std::this_thread::sleep_for(20ms);
  }
  CHECK(status == 200);
}

TEST_CASE("http server: idle sockets of one peer never keep /healthz from answering") {
  FakeSource src;
  HttpServerOptions o;
  o.maxConnections = 8;
  o.maxConnectionsPerPeer = 4;
  o.maxOverBudgetConnections = 4;
  o.timeout = 60s;
  o.overBudgetTimeout = 60s;  // so the idle sockets stay for the whole test
  RunningServer rs(src, o);
  // Far more idle sockets than every budget: the first 4 take the peer's
  // share, the next ones the over-budget places, each newcomer evicting the
  // oldest that sent nothing.
  std::vector<int> idle;
  for (int i = 0; i < 64; ++i) idle.push_back(connectTo(rs.port()));
  for (int round = 0; round < 3; ++round) {
    HttpResult health = get(rs.port(), "/healthz");
    CHECK(health.status == 200);
    CHECK(health.body == "ok\n");
  }
  // The peer's share is used up, so anything else from it is refused.
  CHECK(get(rs.port(), "/flows").status == 503);
  for (int fd : idle) ::close(fd);
}

TEST_CASE("http server: a Host header that names another server is refused") {
  FakeSource src;
  HttpServerOptions o;
  o.allowedHosts = {"rtsql.example.com"};
  RunningServer rs(src, o);
  const std::string port = std::to_string(rs.port());
  for (const std::string& host : std::vector<std::string>{
           "127.0.0.1:" + port, "localhost:" + port, "LOCALHOST", "[::1]:" + port,
           "rtsql.example.com", "rtsql.example.com.:" + port}) {
    CAPTURE(host);
    CHECK(getWithHost(rs.port(), "/flows", host).status == 200);
  }
  // DNS rebinding: the attacker's own name, now resolving to this server.
  for (const std::string& host :
       std::vector<std::string>{"attacker.example", "attacker.example:" + port,
                                "rtsql.example.com.attacker.example", "127.0.0.1.nip.io"}) {
    CAPTURE(host);
    HttpResult r = getWithHost(rs.port(), "/flows", host);
    CHECK(r.status == 421);
    CHECK(r.body.find("--http-allowed-hosts") != std::string::npos);
    CHECK(getWithHost(rs.port(), "/healthz", host).status == 421);
  }
}

TEST_CASE("http hostAllowed: address literals, localhost, the listen name and allowed names") {
  const std::vector<std::string> none;
  CHECK(hostAllowed("", "127.0.0.1", none));  // HTTP/1.0: no browser's request
  CHECK(hostAllowed("203.0.113.5:8080", "0.0.0.0", none));
  CHECK(hostAllowed("[2001:db8::1]", "::", none));
  CHECK(hostAllowed("console.localhost:1", "127.0.0.1", none));
  CHECK(hostAllowed("Metrics.Internal:9000", "metrics.internal", none));
  CHECK(hostAllowed("proxy.example.", "127.0.0.1", {"Proxy.Example"}));
  CHECK_FALSE(hostAllowed("metrics.internal", "127.0.0.1", none));
  CHECK_FALSE(hostAllowed("localhost.attacker.example", "127.0.0.1", none));
  CHECK_FALSE(hostAllowed("[attacker.example]", "127.0.0.1", none));
  CHECK_FALSE(hostAllowed("[::1", "127.0.0.1", none));
  CHECK_FALSE(hostAllowed("127.0.0.1:80x", "127.0.0.1", none));
  CHECK_FALSE(hostAllowed("::1", "127.0.0.1", none));
}

TEST_CASE("http server: every answer forbids framing and sniffing") {
  FakeSource src;
  RunningServer rs(src);
  for (const char* target :
       {"/", "/console/console.js", "/flows", "/healthz", "/metrics", "/nowhere"}) {
    CAPTURE(target);
    HttpResult r = get(rs.port(), target);
    CHECK(r.headers["x-frame-options"] == "DENY");
    CHECK(r.headers["x-content-type-options"] == "nosniff");
    const std::string& csp = r.headers["content-security-policy"];
    CHECK(csp.find("frame-ancestors 'none'") != std::string::npos);
    CHECK(csp.find("script-src 'self'") != std::string::npos);
    CHECK(csp.find("unsafe-inline") == std::string::npos);
  }
}

TEST_CASE("http server: a slow source never stalls the io_context") {
  FakeSource src;
  src.add(runningFlow("f"));
  RunningServer rs(src);
  src.block();
  auto scrape = std::async(std::launch::async, [&] { return get(rs.port(), "/metrics"); });
  for (int i = 0; i < 500 && !src.readerWaiting; ++i) std::this_thread::sleep_for(10ms);
  REQUIRE(src.readerWaiting.load());
  // The scrape is stuck in the source; the io_context must still run handlers.
  std::promise<void> ran;
  boost::asio::post(rs.io, [&] { ran.set_value(); });
  CHECK(ran.get_future().wait_for(2s) == std::future_status::ready);
  src.unblock();
  HttpResult m = scrape.get();
  CHECK(m.status == 200);
  CHECK(m.body.find("rtsql_flow_running{flow=\"f\"} 1") != std::string::npos);
}

TEST_CASE("http server: start fails on a taken port and stop is idempotent") {
  FakeSource src;
  RunningServer rs(src);
  boost::asio::io_context io;
  HttpServerOptions o;
  o.port = rs.port();
  HttpServer second(io, src, o);
  // SO_REUSEADDR does not allow two listeners on one port.
  CHECK_THROWS_AS(second.start(), std::runtime_error);
  second.stop();
  second.stop();
  rs.server.stop();
  rs.server.stop();
}

TEST_CASE("http metrics: dead letters only for flows whose sources write them") {
  FakeSource src;
  src.add(runningFlow("plain"));
  FlowStatus lettered = runningFlow("lettered");
  // Two sources with dead-letter topics: their counts are summed.
  const std::string marker = R"("numDecodeErrors":2})";
  size_t at = lettered.progressJson.find(marker);
  REQUIRE(at != std::string::npos);
  lettered.progressJson.replace(at, marker.size(),
                                R"("numDecodeErrors":2,"numDeadLetters":2},)"
                                R"({"description":"KafkaV2[Subscribe[more]]","numDeadLetters":3})");
  src.add(lettered);

  std::vector<Sample> samples;
  auto problems = checkExposition(renderMetrics(src), &samples);
  for (const auto& p : problems) FAIL_CHECK(p);
  const Sample* s = findSample(samples, "rtsql_flow_dead_letters", {{"flow", "lettered"}});
  REQUIRE(s);
  CHECK(s->value == 5);
  CHECK(findSample(samples, "rtsql_flow_dead_letters", {{"flow", "plain"}}) == nullptr);
}

TEST_CASE("http metrics: late rows per stateful operator, dropped and dead-lettered") {
  FakeSource src;
  src.add(runningFlow("dropping"));
  FlowStatus lettering = runningFlow("lettering");
  const std::string marker = R"("numRowsDroppedByWatermark":0,)";
  size_t at = lettering.progressJson.find(marker);
  REQUIRE(at != std::string::npos);
  lettering.progressJson.replace(at, marker.size(),
                                 R"("numRowsDroppedByWatermark":1,"numLateRowsDeadLettered":4,)");
  src.add(lettering);

  std::vector<Sample> samples;
  auto problems = checkExposition(renderMetrics(src), &samples);
  for (const auto& p : problems) FAIL_CHECK(p);
  auto late = [&](const std::string& flow, const std::string& action) {
    return findSample(
        samples, "rtsql_flow_late_rows",
        {{"flow", flow}, {"operator", "aggregate"}, {"operator_id", "3"}, {"action", action}});
  };
  REQUIRE(late("dropping", "dropped"));
  CHECK(late("dropping", "dropped")->value == 0);
  CHECK(late("dropping", "dead_lettered") == nullptr);
  REQUIRE(late("lettering", "dropped"));
  CHECK(late("lettering", "dropped")->value == 1);
  REQUIRE(late("lettering", "dead_lettered"));
  CHECK(late("lettering", "dead_lettered")->value == 4);
}

TEST_CASE("http metrics: failed rows skipped or dead-lettered, only for flows that count them") {
  FakeSource src;
  src.add(runningFlow("failing"));
  FlowStatus skipping = runningFlow("skipping");
  FlowStatus lettering = runningFlow("lettering");
  const std::string marker = R"("sink":{)";
  size_t at = skipping.progressJson.find(marker);
  REQUIRE(at != std::string::npos);
  skipping.progressJson.insert(at, R"("numRowErrorsSkipped":3,)");
  at = lettering.progressJson.find(marker);
  lettering.progressJson.insert(at, R"("numRowErrorsDeadLettered":2,)");
  src.add(skipping);
  src.add(lettering);

  std::vector<Sample> samples;
  auto problems = checkExposition(renderMetrics(src), &samples);
  for (const auto& p : problems) FAIL_CHECK(p);
  auto errors = [&](const std::string& flow, const std::string& action) {
    return findSample(samples, "rtsql_flow_row_errors", {{"flow", flow}, {"action", action}});
  };
  REQUIRE(errors("skipping", "skipped"));
  CHECK(errors("skipping", "skipped")->value == 3);
  CHECK(errors("skipping", "dead_lettered") == nullptr);
  REQUIRE(errors("lettering", "dead_lettered"));
  CHECK(errors("lettering", "dead_lettered")->value == 2);
  CHECK(errors("failing", "skipped") == nullptr);
  CHECK(errors("failing", "dead_lettered") == nullptr);
}

TEST_CASE("http server: with a password check, Basic credentials are required but for /healthz") {
  FakeSource src;
  src.add(runningFlow("clicks_flow"));
  HttpServerOptions o;
  int checks = 0;
  o.checkPassword = [&checks](std::string_view user, std::string_view password) {
    ++checks;
    return user == "alice" && password == "s3cret:with colon";
  };
  RunningServer rs(src, o);

  CHECK(get(rs.port(), "/healthz").status == 200);
  for (const char* target : {"/flows", "/metrics", "/flows/clicks_flow/progress", "/nowhere"}) {
    HttpResult r = get(rs.port(), target);
    CHECK_MESSAGE(r.status == 401, target);
    CHECK(r.headers["www-authenticate"] == "Basic realm=\"rtsqld\", charset=\"UTF-8\"");
    CHECK(r.body.find("clicks_flow") == std::string::npos);
  }
  CHECK(checks == 0);  // no credentials: nothing to check

  // alice:s3cret:with colon (the password may hold colons, the user not).
  const std::string good =
      "Authorization: Basic " + pgwire::encodeBase64("alice:s3cret:with colon") + "\r\n";
  HttpResult ok = request(rs.port(), "GET", "/flows", good);
  CHECK(ok.status == 200);
  CHECK(ok.body.find("\"name\":\"clicks_flow\"") != std::string::npos);
  CHECK(request(rs.port(), "GET", "/metrics", good).status == 200);
  // The scheme is case-insensitive.
  CHECK(request(rs.port(), "GET", "/flows",
                "Authorization: basic " + pgwire::encodeBase64("alice:s3cret:with colon") + "\r\n")
            .status == 200);

  const std::string wrong = "Authorization: Basic " + pgwire::encodeBase64("alice:guess") + "\r\n";
  HttpResult bad = request(rs.port(), "GET", "/flows", wrong);
  CHECK(bad.status == 401);
  CHECK(bad.body.find("password authentication failed") != std::string::npos);
  // An unknown user gets the same answer as a wrong password.
  CHECK(request(rs.port(), "GET", "/flows",
                "Authorization: Basic " + pgwire::encodeBase64("mallory:guess") + "\r\n")
            .body == bad.body);
  for (const char* header :
       {"Authorization: Bearer abc\r\n", "Authorization: Basic !!!\r\n", "Authorization: Basic\r\n",
        "Authorization: Basic YWxpY2U=\r\n" /* "alice", no colon */}) {
    CHECK_MESSAGE(request(rs.port(), "GET", "/flows", header).status == 401, header);
  }
}

TEST_CASE("users: checkPassword accepts the user's password only, from a plain or a hashed line") {
  const rtsql::UserStore users = rtsql::UserStore::parse(
      "alice:wonderland\nbob:" + pgwire::formatScramVerifier(pgwire::makeScramVerifier("builder")) +
          "\n",
      "users");
  CHECK(users.checkPassword("alice", "wonderland"));
  CHECK(users.checkPassword("bob", "builder"));
  CHECK_FALSE(users.checkPassword("alice", "builder"));
  CHECK_FALSE(users.checkPassword("alice", ""));
  CHECK_FALSE(users.checkPassword("alice", "wonderland "));
  CHECK_FALSE(users.checkPassword("carol", "wonderland"));
  CHECK_FALSE(users.checkPassword("", ""));
}

namespace {

// A SQL box statement that runs until it is told to stop (limits.cancelled)
// or released, as a live SELECT waiting for rows does.
struct WaitingSqlSource : Source {
  std::vector<FlowStatus> flows(bool) const override { return {}; }
  std::optional<std::string> progress(const std::string&) const override { return std::nullopt; }
  SlotUsage slots() const override { return {}; }
  SqlResult runReadOnly(const std::string&, const std::string& sql,
                        const SqlLimits& limits) const override {
    ++started;
    SqlResult r;
    r.command = "SELECT";
    r.columns = {"sql"};
    r.rows = {{sql}};
    // Bounded: 3000 polls of 10 ms; the test fails on its own bounds first.
    for (int i = 0; i < 3000; ++i) {
      if (limits.cancelled && limits.cancelled()) {
        ++cancelled;
        r.stopped = "cancelled";
        return r;
      }
      if (released) return r;
      std::this_thread::sleep_for(10ms);
    }
    r.stopped = "timeout";
    return r;
  }
  mutable std::atomic<int> started{0};
  mutable std::atomic<int> cancelled{0};
  std::atomic<bool> released{false};
};

std::string sqlPost(const std::string& sql) {
  const std::string body = "{\"sql\": \"" + sql + "\"}";
  return "POST /sql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
         "Connection: close\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

template <class Pred>
bool waitFor(Pred pred) {
  for (int i = 0; i < 2000 && !pred(); ++i) std::this_thread::sleep_for(10ms);
  return pred();
}

}  // namespace

TEST_CASE(
    "http server: SQL box statements run beside the other routes, bounded in number, "
    "and stop when their client goes or the server stops") {
  WaitingSqlSource src;
  HttpServerOptions options;
  options.maxSqlStatements = 2;
  auto rs = std::make_unique<RunningServer>(src, options);

  int first = connectTo(rs->port());
  sendAll(first, sqlPost("SELECT 1"));
  REQUIRE(waitFor([&] { return src.started == 1; }));
  // The statement holds its thread; /metrics and /flows are answered meanwhile.
  CHECK(get(rs->port(), "/metrics").status == 200);
  CHECK(get(rs->port(), "/flows").status == 200);

  int second = connectTo(rs->port());
  sendAll(second, sqlPost("SELECT 2"));
  REQUIRE(waitFor([&] { return src.started == 2; }));
  // A third is over the limit: refused at once, never started.
  int third = connectTo(rs->port());
  sendAll(third, sqlPost("SELECT 3"));
  HttpResult busy = parseResponse(readAll(third));
  ::close(third);
  CHECK(busy.status == 503);
  CHECK(busy.body.find("\"sqlstate\":\"53300\"") != std::string::npos);
  CHECK(src.started == 2);

  // The first client goes away: its statement is told to stop.
  ::close(first);
  CHECK(waitFor([&] { return src.cancelled == 1; }));

  // The second ends by itself and is answered.
  src.released = true;
  HttpResult answered = parseResponse(readAll(second));
  ::close(second);
  CHECK(answered.status == 200);
  CHECK(answered.body.find("\"rows\":[[\"SELECT 2\"]],\"stopped\":null") != std::string::npos);

  // A statement still running when the server stops is stopped with it.
  src.released = false;
  int last = connectTo(rs->port());
  sendAll(last, sqlPost("SELECT 4"));
  REQUIRE(waitFor([&] { return src.started == 3; }));
  rs.reset();  // joins the statement threads
  ::close(last);
  CHECK(src.cancelled == 2);
}
