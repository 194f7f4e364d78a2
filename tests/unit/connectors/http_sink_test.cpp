// The http sink's parts that stand alone: its options (each error at the
// option at fault), the URL taken apart, which answers are retried, the
// backoff and Retry-After, the batch bodies; a writer against a small
// loopback server (batches, retries, a permanent failure); a writer whose
// server is down failing its flush with the URL named, without hanging; and
// the last flush of a flow that stops, which does not wait out the retries.
#include "connectors/http/http_sink.h"

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "connector_test_util.h"
#include "connectors/http/http_connector.h"
#include "connectors/registry.h"

using namespace rtsql;

namespace {

using testing::opts;
using testing::sqlErrorOf;
using testing::t;

Options withUrl(std::vector<std::pair<std::string, std::string>> extra) {
  std::vector<std::pair<std::string, std::string>> kv = {{"connector", "http"},
                                                         {"url", "http://127.0.0.1:8080/alerts"}};
  kv.insert(kv.end(), extra.begin(), extra.end());
  return opts(kv);
}

// A loopback port nothing listens on: bound, never listened to, released.
int closedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// A loopback HTTP/1.1 server for one client at a time: it keeps each
// request's body and answers with the next of `statuses` (then 200), the
// connection kept alive.
class TinyServer {
 public:
  explicit TinyServer(std::vector<int> statuses) : statuses_(statuses.begin(), statuses.end()) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd_, 8) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~TinyServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  std::vector<std::string> bodies() {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  int connections() const { return connections_; }

 private:
  bool readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    while (!stop_) {
      if (::poll(&p, 1, 50) > 0) return true;
    }
    return false;
  }
  void serve() {
    while (readable(fd_)) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      ++connections_;
      std::string in;
      char buf[4096];
      while (readable(c)) {
        ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
        for (;;) {
          size_t end = in.find("\r\n\r\n");
          if (end == std::string::npos) break;
          size_t cl = in.find("Content-Length: ");
          size_t length = cl < end ? std::stoul(in.substr(cl + 16)) : 0;
          if (in.size() < end + 4 + length) break;
          int status;
          {
            std::lock_guard lock(mu_);
            bodies_.push_back(in.substr(end + 4, length));
            status = statuses_.empty() ? 200 : statuses_.front();
            if (!statuses_.empty()) statuses_.pop_front();
          }
          in.erase(0, end + 4 + length);
          std::string body = status == 200 ? "" : "no such hook";
          std::string out = "HTTP/1.1 " + std::to_string(status) +
                            " X\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
                            body;
          if (::write(c, out.data(), out.size()) < 0) break;
        }
      }
      ::close(c);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::mutex mu_;
  std::deque<int> statuses_;
  std::vector<std::string> bodies_;
  std::thread thread_;
};

SinkSpec idSink(const std::string& url, std::vector<std::pair<std::string, std::string>> extra) {
  SinkSpec sink;
  sink.name = "hook";
  sink.connector = "http";
  sink.format = "json";
  std::vector<std::pair<std::string, std::string>> kv = {
      {"connector", "http"}, {"url", url}, {"max.in.flight", "1"}, {"retry.backoff.ms", "1"}};
  kv.insert(kv.end(), extra.begin(), extra.end());
  sink.options = opts(kv);
  sink.input.columns.push_back({"id", t(TypeId::BigInt), false});
  return sink;
}

}  // namespace

TEST_CASE("http sink: a writer's batches, retries and failures against a loopback server") {
  SUBCASE("batches of up to batch.max.rows, the last one partial at the flush") {
    TinyServer server({});
    auto writer = makeHttpSink(
        idSink(server.url(), {{"batch.max.rows", "3"}, {"batch.linger.ms", "60000"}}), "f", 0);
    for (int i = 0; i < 7; ++i) writer->write({Value::bigint(i)}, 0);
    writer->flush(30000);
    // A minute's linger: only full batches leave before the flush sends the rest.
    CHECK(server.bodies() == std::vector<std::string>{R"([{"id":0},{"id":1},{"id":2}])",
                                                      R"([{"id":3},{"id":4},{"id":5}])",
                                                      R"([{"id":6}])"});
    CHECK(server.connections() == 1);  // kept alive
    CHECK(writer->deliveryErrors() == 0);
  }
  SUBCASE("503 and 500 are retried: every row once, in order") {
    TinyServer server({503, 500});
    auto writer = makeHttpSink(idSink(server.url(), {}), "f", 0);
    for (int i = 0; i < 3; ++i) writer->write({Value::bigint(i)}, 0);
    writer->flush(30000);
    CHECK(server.bodies() == std::vector<std::string>{R"({"id":0})", R"({"id":0})", R"({"id":0})",
                                                      R"({"id":1})", R"({"id":2})"});
    CHECK(writer->deliveryErrors() == 0);
  }
  SUBCASE("retries spent: the flush names the status") {
    TinyServer server({503, 503, 503});
    auto writer = makeHttpSink(idSink(server.url(), {{"retries", "2"}}), "f", 0);
    writer->write({Value::bigint(1)}, 0);
    SqlError e = sqlErrorOf([&] { writer->flush(30000); });
    CHECK(e.message() == "HttpSink[" + server.url() + "]: 1 row could not be delivered: POST " +
                             server.url() + " answered HTTP 503 (12 bytes) (after 2 retries)");
    CHECK(server.bodies().size() == 3);
    CHECK(writer->deliveryErrors() == 1);
  }
  SUBCASE("a 404 is not retried, and the rows behind it are not sent") {
    TinyServer server({404});
    auto writer = makeHttpSink(idSink(server.url(), {}), "f", 0);
    writer->write({Value::bigint(1)}, 0);
    // The failure is reported by whichever comes first after the answer:
    // the next write or the flush.
    SqlError e = sqlErrorOf([&] {
      writer->write({Value::bigint(2)}, 0);
      writer->write({Value::bigint(3)}, 0);
      writer->flush(30000);
    });
    CHECK(e.sqlstate() == "58030");
    // The status and the size: the answer's text never goes into an error.
    CHECK(e.message().find("answered HTTP 404 (12 bytes)") != std::string::npos);
    CHECK(e.message().find("no such hook") == std::string::npos);
    CHECK(server.bodies().size() == 1);
  }
}

TEST_CASE("http sink: URLs") {
  std::string why;
  auto u = parseHttpUrl("http://127.0.0.1:8080/alerts?team=fraud", why);
  REQUIRE(u);
  CHECK_FALSE(u->tls);
  CHECK(u->host == "127.0.0.1");
  CHECK(u->port == "8080");
  CHECK_FALSE(u->defaultPort);
  CHECK(u->target == "/alerts?team=fraud");

  u = parseHttpUrl("HTTPS://hooks.example.com", why);
  REQUIRE(u);
  CHECK(u->tls);
  CHECK(u->port == "443");
  CHECK(u->defaultPort);
  CHECK(u->target == "/");

  u = parseHttpUrl("http://[::1]:9000/x#frag", why);
  REQUIRE(u);
  CHECK(u->host == "::1");
  CHECK(u->port == "9000");
  CHECK(u->target == "/x");

  // An IPv6 address without a port: its colons are not a port's.
  u = parseHttpUrl("http://[fe80::1]/latest", why);
  REQUIRE(u);
  CHECK(u->host == "fe80::1");
  CHECK(u->port == "80");
  CHECK(u->defaultPort);
  CHECK(u->target == "/latest");

  u = parseHttpUrl("http://h?q=1", why);
  REQUIRE(u);
  CHECK(u->target == "/?q=1");

  CHECK_FALSE(parseHttpUrl("ftp://h/", why));
  CHECK(why == "the scheme must be http:// or https://");
  CHECK_FALSE(parseHttpUrl("http://user:pw@h/", why));
  CHECK(why == "user information in the URL is not sent");
  CHECK_FALSE(parseHttpUrl("http://:80/", why));
  CHECK(why == "the URL has no host");
  CHECK_FALSE(parseHttpUrl("http://h:0/", why));
  CHECK_FALSE(parseHttpUrl("http://h:70000/", why));
  CHECK_FALSE(parseHttpUrl("http://h:/", why));
  CHECK(why == "the port must be a number from 1 to 65535");
  CHECK_FALSE(parseHttpUrl("http://h/a b", why));
}

TEST_CASE("http sink: options") {
  HttpSinkConfig c = parseHttpSinkOptions(withUrl({}), 0);
  CHECK(c.method == "POST");
  CHECK(c.batchMaxRows == 1);
  CHECK(c.maxInFlight == 4);
  CHECK(c.retries == 5);
  CHECK(c.headers.empty());

  c = parseHttpSinkOptions(withUrl({{"http.method", "put"},
                                    {"http.header.Authorization", "Bearer x"},
                                    {"http.header.X-Team", "fraud; ops"},
                                    {"batch.max.rows", "50"},
                                    {"max.in.flight", "1"}}),
                           0);
  CHECK(c.method == "PUT");
  REQUIRE(c.headers.size() == 2);
  CHECK(c.headers[0] == std::pair<std::string, std::string>{"Authorization", "Bearer x"});
  CHECK(c.headers[1] == std::pair<std::string, std::string>{"X-Team", "fraud; ops"});
  CHECK(c.batchMaxRows == 50);
  CHECK(c.maxInFlight == 1);

  // A missing url is at the statement; a bad one at its value, with a hint.
  SqlError e = sqlErrorOf([] { parseHttpSinkOptions(opts({{"connector", "http"}}), 7); });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == 7);
  e = sqlErrorOf([] {
    parseHttpSinkOptions(opts({{"connector", "http"}, {"url", "localhost:8080"}}), 7);
  });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.message() ==
        "invalid value 'localhost:8080' for option 'url': the scheme must be http:// or https://");
  CHECK(e.position() == 150);
  CHECK_FALSE(e.hint().empty());

  // Entry i of opts() has its key at 100*i and its value at 100*i + 50.
  e = sqlErrorOf([] { parseHttpSinkOptions(withUrl({{"http.method", "GET"}}), 0); });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == 250);
  e = sqlErrorOf([] { parseHttpSinkOptions(withUrl({{"http.header.Bad Name", "x"}}), 0); });
  CHECK(e.position() == 200);
  e = sqlErrorOf([] { parseHttpSinkOptions(withUrl({{"http.header.Content-Length", "3"}}), 0); });
  CHECK(e.message() == "header 'Content-Length' is written by the sink itself");
  CHECK(e.position() == 200);
  e = sqlErrorOf([] { parseHttpSinkOptions(withUrl({{"http.header.X", "a\r\nEvil: 1"}}), 0); });
  CHECK(e.position() == 250);
  e = sqlErrorOf([] { parseHttpSinkOptions(withUrl({{"batch.max.rows", "0"}}), 0); });
  CHECK(e.position() == 250);
  e = sqlErrorOf([] { parseHttpSinkOptions(withUrl({{"max.in.flight", "1000"}}), 0); });
  CHECK(e.position() == 250);
  e = sqlErrorOf([] {
    parseHttpSinkOptions(withUrl({{"retry.backoff.ms", "500"}, {"retry.backoff.max.ms", "100"}}),
                         0);
  });
  CHECK(e.position() == 350);
  e = sqlErrorOf([] { parseHttpSinkOptions(withUrl({{"retires", "3"}}), 0); });
  CHECK(e.position() == 200);
  e = sqlErrorOf([] { parseHttpSinkOptions(withUrl({{"mode", "upsert"}}), 0); });
  CHECK(e.sqlstate() == "0A000");
  e = sqlErrorOf([] { parseHttpSinkOptions(withUrl({{"format", "csv"}}), 0); });
  CHECK(e.position() == 250);
  // 'http.ca' is for https only, and is a file on the server's machine.
  e = sqlErrorOf([] { parseHttpSinkOptions(withUrl({{"http.ca", "/etc/ca.pem"}}), 0); });
  CHECK(e.position() == 200);
  Options https = opts({{"connector", "http"}, {"url", "https://h/"}, {"http.ca", "/etc/ca.pem"}});
  CHECK(parseHttpSinkOptions(https, 0).caFile == "/etc/ca.pem");
  ServerSideOptions side = HttpConnector().serverSideOptions(https);
  REQUIRE(side.files.size() == 1);
  CHECK(side.files[0]->key == "http.ca");
  CHECK(HttpConnector().serverSideOptions(withUrl({})).files.empty());
}

TEST_CASE("http sink: which answers are retried") {
  CHECK(classifyHttpStatus(200) == HttpVerdict::Delivered);
  CHECK(classifyHttpStatus(204) == HttpVerdict::Delivered);
  CHECK(classifyHttpStatus(408) == HttpVerdict::Retry);
  CHECK(classifyHttpStatus(429) == HttpVerdict::Retry);
  CHECK(classifyHttpStatus(500) == HttpVerdict::Retry);
  CHECK(classifyHttpStatus(503) == HttpVerdict::Retry);
  CHECK(classifyHttpStatus(400) == HttpVerdict::Permanent);
  CHECK(classifyHttpStatus(401) == HttpVerdict::Permanent);
  CHECK(classifyHttpStatus(404) == HttpVerdict::Permanent);
  CHECK(classifyHttpStatus(301) == HttpVerdict::Permanent);
}

TEST_CASE("http sink: backoff and Retry-After") {
  CHECK(httpRetryDelayMs(1, 100, 10000, -1) == 100);
  CHECK(httpRetryDelayMs(2, 100, 10000, -1) == 200);
  CHECK(httpRetryDelayMs(4, 100, 10000, -1) == 800);
  CHECK(httpRetryDelayMs(30, 100, 10000, -1) == 10000);
  CHECK(httpRetryDelayMs(1000, 100, 10000, -1) == 10000);
  // The server's Retry-After wins over the backoff, within the cap.
  CHECK(httpRetryDelayMs(1, 100, 10000, 2000) == 2000);
  CHECK(httpRetryDelayMs(1, 100, 10000, 0) == 0);
  CHECK(httpRetryDelayMs(1, 100, 10000, 3600000) == 10000);

  CHECK(parseRetryAfterMs("2") == 2000);
  CHECK(parseRetryAfterMs(" 0 ") == 0);
  CHECK(parseRetryAfterMs("Wed, 21 Oct 2015 07:28:00 GMT") == -1);
  CHECK(parseRetryAfterMs("-1") == -1);
  CHECK(parseRetryAfterMs("") == -1);
  CHECK(parseRetryAfterMs("99999999999") == -1);
}

TEST_CASE("http sink: batch bodies") {
  CHECK(httpBatchBody({R"({"a":1})"}, false) == R"({"a":1})");
  CHECK(httpBatchBody({R"({"a":1})"}, true) == R"([{"a":1}])");
  CHECK(httpBatchBody({R"({"a":1})", R"({"a":2})", "{}"}, true) == R"([{"a":1},{"a":2},{}])");
}

TEST_CASE("http sink: a server that is down fails the flush, naming the URL") {
  SinkSpec sink;
  sink.name = "hook";
  sink.connector = "http";
  sink.format = "json";
  std::string url = "http://127.0.0.1:" + std::to_string(closedPort()) + "/alerts";
  sink.options = opts({{"connector", "http"},
                       {"url", url},
                       {"retries", "2"},
                       {"retry.backoff.ms", "1"},
                       {"request.timeout.ms", "5000"}});
  sink.input.columns.push_back({"id", t(TypeId::BigInt), false});
  auto writer = makeHttpSink(sink, "f", 0);
  CHECK(writer->description() == "HttpSink[" + url + "]");
  writer->write({Value::bigint(1)}, 0);
  writer->write({Value::bigint(2)}, 0);
  SqlError e = sqlErrorOf([&] { writer->flush(30000); });
  CHECK(e.sqlstate() == "58030");
  CHECK(e.message().find("2 rows could not be delivered") != std::string::npos);
  CHECK(e.message().find(url) != std::string::npos);
  CHECK(e.message().find("cannot connect") != std::string::npos);
  CHECK(writer->deliveryErrors() == 2);
  // The failure is reported once; nothing new is pending.
  writer->flush(30000);
}

TEST_CASE("http sink: the options CREATE SINK read are what the writer runs with") {
  const Connector& http = *ConnectorRegistry::builtin().find("http");
  SinkSpec sink = idSink("http://127.0.0.1:1/written", {});
  // The plan carries what the connector read at CREATE SINK; the text is not
  // read again when the writer opens.
  sink.parsed = std::make_shared<const SinkOptions>(
      http.parseSink(opts({{"connector", "http"}, {"url", "http://127.0.0.1:1/read"}})));
  REQUIRE(sink.parsed->own != nullptr);
  auto writer = makeHttpSink(sink, "f", 0);
  CHECK(writer->description() == "HttpSink[http://127.0.0.1:1/read]");
}

TEST_CASE("http sink: closing a writer with rows queued does not wait for them") {
  SinkSpec sink;
  sink.name = "hook";
  sink.connector = "http";
  sink.format = "json";
  sink.options = opts({{"connector", "http"},
                       {"url", "http://127.0.0.1:" + std::to_string(closedPort()) + "/"},
                       {"retries", "1000"},
                       {"retry.backoff.ms", "60000"},
                       {"retry.backoff.max.ms", "60000"}});
  sink.input.columns.push_back({"id", t(TypeId::BigInt), false});
  auto writer = makeHttpSink(sink, "f", 0);
  for (int i = 0; i < 10; ++i) writer->write({Value::bigint(i)}, 0);
  // Every sender is in a minute-long backoff now or soon: the writer closes
  // without waiting for it (a hang here fails the test by its timeout).
  writer.reset();
  CHECK(writer == nullptr);
}

TEST_CASE("http sink: a flow that stops does not wait out the retries at its last flush") {
  // Every request is answered 503: retried a thousand times, a minute apart.
  TinyServer server(std::vector<int>(100, 503));
  auto writer = makeHttpSink(idSink(server.url(), {{"retries", "1000"},
                                                   {"retry.backoff.ms", "60000"},
                                                   {"retry.backoff.max.ms", "60000"}}),
                             "f", 0);
  for (int i = 0; i < 3; ++i) writer->write({Value::bigint(i)}, 0);
  // The first row was refused: its sender waits out a minute's backoff.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (server.bodies().empty() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE(server.bodies().size() == 1);

  // The flow stops: the row goes once more at once, and nothing after that.
  writer->flowStopping();
  const auto t0 = std::chrono::steady_clock::now();
  SqlError e = sqlErrorOf([&] { writer->flush(30000); });
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
  CHECK(e.sqlstate() == "58030");
  // No row counts as delivered: the final epoch fails, and is not committed.
  CHECK(e.message().find("3 rows could not be delivered") != std::string::npos);
  CHECK(e.message().find("answered HTTP 503") != std::string::npos);
  CHECK(e.message().find("not retried: the flow stops") != std::string::npos);
  CHECK(server.bodies().size() == 2);
  CHECK(writer->deliveryErrors() == 3);
}
