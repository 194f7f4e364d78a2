// rtsqld's outbound connections: the operator's allow-list (CIDR matching,
// internal addresses, IPv6, ports) and the HTTP client every connector uses,
// against hostile servers on 127.0.0.1 written here: one that announces a
// gigabyte and streams it, one that chunks for ever, one that never answers,
// one that trickles. The client must stop at the byte cap, at its deadline,
// on a cancel flag set by another thread, on its thread's interrupt check and
// when the process stops; the policy must refuse before any connection.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/ip/address.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "common/interrupt.h"
#include "connectors/net/http_client.h"
#include "connectors/net/outbound_policy.h"

using namespace rtsql;
using namespace rtsql::net;
namespace ip = boost::asio::ip;

namespace {

ip::address addr(const char* text) {
  return ip::make_address(text);
}

// A server on 127.0.0.1 that runs `behave` on each connection it accepts (one
// at a time), after reading the request's head. It counts connections and
// bytes sent, and stops when destroyed (its sockets shut down).
class HostileServer {
 public:
  using Behaviour = std::function<void(int fd, HostileServer& self)>;

  explicit HostileServer(Behaviour behave) : behave_(std::move(behave)) {
    listen_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(listen_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(listen_, 8) == 0);
    socklen_t len = sizeof a;
    ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~HostileServer() {
    stop_ = true;
    ::shutdown(listen_, SHUT_RDWR);
    {
      std::lock_guard lock(mu_);
      if (client_ >= 0) ::shutdown(client_, SHUT_RDWR);
    }
    thread_.join();
    ::close(listen_);
  }

  std::string url(const std::string& path = "/") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  HttpUrl parsedUrl(const std::string& path = "/") const {
    std::string why;
    return *parseHttpUrl(url(path), why);
  }
  int connections() const { return connections_.load(); }
  uint64_t sent() const { return sent_.load(); }
  bool stopping() const { return stop_.load(); }

  // Waits (bounded) until a request's head arrived.
  bool waitForRequest() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(60), [&] { return requests_ > 0; });
  }

  // Sends all of `data`; false once the client is gone.
  bool send(int fd, const std::string& data) {
    size_t off = 0;
    while (off < data.size()) {
      const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
      sent_ += static_cast<uint64_t>(n);
    }
    return true;
  }

 private:
  void serve() {
    while (!stop_) {
      const int fd = ::accept(listen_, nullptr, nullptr);
      if (fd < 0) return;
      ++connections_;
      {
        std::lock_guard lock(mu_);
        client_ = fd;
      }
      std::string head;
      char buf[4096];
      while (head.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        head.append(buf, static_cast<size_t>(n));
      }
      {
        std::lock_guard lock(mu_);
        ++requests_;
      }
      cv_.notify_all();
      behave_(fd, *this);
      {
        std::lock_guard lock(mu_);
        client_ = -1;
      }
      ::close(fd);
    }
  }

  Behaviour behave_;
  int listen_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::atomic<uint64_t> sent_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  int requests_ = 0;
  int client_ = -1;
};

// Holds the connection open without a byte until the server stops.
void silent(int fd, HostileServer& self) {
  char buf[256];
  while (!self.stopping() && ::recv(fd, buf, sizeof buf, 0) > 0) {
  }
}

// Sends `head` then a body of `chunk`s until the client goes.
HostileServer::Behaviour streaming(std::string head, std::string chunk) {
  return [head, chunk](int fd, HostileServer& self) {
    if (!self.send(fd, head)) return;
    // At most 2 GiB, so that a client that never stops still ends the test.
    for (uint64_t i = 0; i < (2ull << 30) / chunk.size() && !self.stopping(); ++i) {
      if (!self.send(fd, chunk)) return;
    }
  };
}

HttpRequest get() {
  HttpRequest r;
  r.target = "/";
  return r;
}

// The process's policy for the life of a scope.
struct PolicyScope {
  explicit PolicyScope(const std::vector<std::string>& entries) {
    OutboundPolicy::setProcess(OutboundPolicy::parse(entries));
  }
  ~PolicyScope() { OutboundPolicy::setProcess(OutboundPolicy()); }
};

}  // namespace

TEST_CASE("outbound policy: entries, networks and ports") {
  CHECK_FALSE(OutboundPolicy().configured());
  CHECK(OutboundPolicy().allows("169.254.169.254", addr("169.254.169.254"), 80));

  OutboundPolicy p = OutboundPolicy::parse(
      {"10.0.0.0/8", "registry.internal:8081, 192.168.1.7:443", "[2001:db8::/32]:9000"});
  REQUIRE(p.entries().size() == 4);
  CHECK(p.allows("x", addr("10.1.2.3"), 1));
  CHECK_FALSE(p.allows("x", addr("11.1.2.3"), 1));
  CHECK(p.allows("Registry.Internal", addr("203.0.113.5"), 8081));
  CHECK_FALSE(p.allows("registry.internal", addr("203.0.113.5"), 8082));
  CHECK(p.allows("x", addr("192.168.1.7"), 443));
  CHECK_FALSE(p.allows("x", addr("192.168.1.7"), 80));
  CHECK_FALSE(p.allows("x", addr("192.168.1.8"), 443));
  CHECK(p.allows("x", addr("2001:db8:ffff::1"), 9000));
  CHECK_FALSE(p.allows("x", addr("2001:db9::1"), 9000));
  CHECK_FALSE(p.allows("x", addr("2001:db8::1"), 9001));
  // An IPv4-mapped address is its IPv4 one.
  CHECK(p.allows("x", addr("::ffff:10.9.9.9"), 5));

  CHECK(inNetwork(addr("172.16.5.4"), addr("172.16.0.0"), 12));
  CHECK_FALSE(inNetwork(addr("172.32.0.1"), addr("172.16.0.0"), 12));
  CHECK(inNetwork(addr("1.2.3.4"), addr("0.0.0.0"), 0));
  CHECK_FALSE(inNetwork(addr("::1"), addr("0.0.0.0"), 0));  // another family

  for (const char* bad : {"", "10.0.0.0/33", "[::1", "host:0", "host:70000", "a b", "10.0.0.0/x",
                          "[::1]x", "::/129"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(OutboundPolicy::parse({bad}), std::invalid_argument);
  }
}

TEST_CASE("outbound policy: loopback, link-local and metadata addresses only when listed") {
  for (const char* a : {"127.0.0.1", "127.8.9.10", "169.254.169.254", "0.0.0.0", "::1", "::",
                        "fe80::1", "fd00:ec2::254", "100.100.100.200", "::ffff:127.0.0.1",
                        "::ffff:169.254.169.254"}) {
    CAPTURE(a);
    CHECK(OutboundPolicy::internal(addr(a)));
  }
  for (const char* a : {"10.0.0.1", "8.8.8.8", "2001:db8::1", "fd00::1", "169.255.0.1"}) {
    CAPTURE(a);
    CHECK_FALSE(OutboundPolicy::internal(addr(a)));
  }
  // A broad entry does not reach them...
  OutboundPolicy everything = OutboundPolicy::parse({"0.0.0.0/0", "::/0"});
  CHECK(everything.allows("x", addr("8.8.8.8"), 80));
  CHECK(everything.allows("x", addr("2001:db8::1"), 80));
  for (const char* a : {"127.0.0.1", "169.254.169.254", "::1", "fe80::1", "fd00:ec2::254",
                        "::ffff:127.0.0.1"}) {
    CAPTURE(a);
    CHECK_FALSE(everything.allows("x", addr(a), 80));
  }
  // ...an entry inside their range does, and a host the operator named.
  OutboundPolicy narrow = OutboundPolicy::parse({"127.0.0.1:8081", "fe80::/10", "metadata.local"});
  CHECK(narrow.allows("x", addr("127.0.0.1"), 8081));
  CHECK_FALSE(narrow.allows("x", addr("127.0.0.2"), 8081));
  CHECK_FALSE(narrow.allows("x", addr("127.0.0.1"), 8082));
  CHECK(narrow.allows("x", addr("fe80::abcd"), 1));
  CHECK(narrow.allows("metadata.local", addr("169.254.169.254"), 80));
  CHECK_FALSE(narrow.allows("other.local", addr("169.254.169.254"), 80));

  // Before resolution: literals are judged, names only when no entry could match.
  CHECK_FALSE(narrow.mayAllow("169.254.169.254", 80));
  CHECK(narrow.mayAllow("127.0.0.1", 8081));
  CHECK(narrow.mayAllow("metadata.local", 80));
  OutboundPolicy named = OutboundPolicy::parse({"registry.internal"});
  CHECK_FALSE(named.mayAllow("evil.example", 80));
  CHECK(OutboundPolicy::parse({"10.0.0.0/8"}).mayAllow("evil.example", 80));
}

TEST_CASE("outbound client: an answer, its size and the connection kept") {
  HostileServer server([](int fd, HostileServer& self) {
    self.send(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 5\r\nConnection: close\r\n\r\nnope!");
  });
  HttpClient client(server.parsedUrl());
  HttpResult r = client.exchange(get(), {10000, 1 << 20});
  REQUIRE(r.ok());
  CHECK(r.answer.status == 404);
  CHECK(r.answer.body == "nope!");
  CHECK(r.answer.bytes > 5);
  CHECK_FALSE(client.connected());
}

TEST_CASE("outbound client: the byte cap holds on what is received, whatever is announced") {
  const std::string mib(1 << 20, 'x');
  struct Case {
    const char* what;
    std::string head;
  };
  for (const Case& c :
       {Case{"Content-Length of 1 GiB", "HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\n"},
        Case{"a small Content-Length that lies",
             "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"},
        Case{"no length, to the end of the connection", "HTTP/1.1 200 OK\r\n\r\n"}}) {
    CAPTURE(c.what);
    HostileServer server(streaming(c.head, mib));
    HttpClient client(server.parsedUrl());
    HttpResult r = client.exchange(get(), {60000, 16u << 20});
    if (std::string(c.what).starts_with("a small")) {
      // The announced 100 bytes are read; the rest is never taken.
      REQUIRE(r.ok());
      CHECK(r.answer.body.size() == 100);
      continue;
    }
    CHECK(r.failure == Failure::TooLarge);
    CHECK(r.error.find("larger than 16777216 bytes") != std::string::npos);
  }
  // Chunked, each chunk 1 MiB, for ever.
  std::string chunk = "100000\r\n" + mib + "\r\n";
  HostileServer chunked(streaming("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", chunk));
  HttpClient client(chunked.parsedUrl());
  HttpResult r = client.exchange(get(), {60000, 16u << 20});
  CHECK(r.failure == Failure::TooLarge);
  // Headers count too.
  std::string header = "X-Pad: " + std::string(1000, 'h') + "\r\n";
  std::string many;
  for (int i = 0; i < 100; ++i) many += header;
  HostileServer headers([&](int fd, HostileServer& self) {
    self.send(fd, "HTTP/1.1 200 OK\r\n" + many + "Content-Length: 0\r\n\r\n");
  });
  HttpClient headersClient(headers.parsedUrl());
  CHECK(headersClient.exchange(get(), {60000, 50000}).failure == Failure::TooLarge);
}

TEST_CASE("outbound client: one deadline for the whole exchange, even when bytes trickle") {
  HostileServer server([](int fd, HostileServer& self) {
    if (!self.send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")) return;
    for (int i = 0; i < 100000 && !self.stopping(); ++i) {
      if (!self.send(fd, "x")) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  HttpClient client(server.parsedUrl());
  HttpResult r = client.exchange(get(), {1000, 1 << 20});
  CHECK(r.failure == Failure::TimedOut);
}

TEST_CASE("outbound client: another thread's cancel ends a wait on a silent server") {
  HostileServer server(silent);
  HttpClient client(server.parsedUrl());
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    if (server.waitForRequest()) cancel = true;
  });
  // Far longer than the test may take: only the cancel ends it.
  HttpResult r = client.exchange(get(), {600000, 1 << 20}, &cancel);
  canceller.join();
  CHECK(r.failure == Failure::Cancelled);
  CHECK_FALSE(client.connected());
}

TEST_CASE("outbound client: the thread's interrupt check ends a wait (a statement's cancel)") {
  HostileServer server(silent);
  HttpClient client(server.parsedUrl());
  std::atomic<bool> stop{false};
  std::thread canceller([&] {
    if (server.waitForRequest()) stop = true;
  });
  bool interrupted = false;
  {
    InterruptScope scope(
        [](const void* flag) { return static_cast<const std::atomic<bool>*>(flag)->load(); },
        &stop);
    try {
      client.exchange(get(), {600000, 1 << 20});
    } catch (const Interrupted&) {
      interrupted = true;
    }
  }
  canceller.join();
  CHECK(interrupted);
}

TEST_CASE("outbound client: the policy refuses before any connection") {
  HostileServer server([](int fd, HostileServer& self) {
    self.send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  });
  {
    PolicyScope policy({"10.0.0.0/8", "0.0.0.0/0"});
    HttpClient client(server.parsedUrl());
    HttpResult r = client.exchange(get(), {10000, 1 << 20});
    CHECK(r.failure == Failure::Refused);
    CHECK(r.error.find("127.0.0.1") != std::string::npos);
    CHECK(r.error.find("--outbound-allow") != std::string::npos);
  }
  {
    PolicyScope policy({"127.0.0.1"});
    HttpClient client(server.parsedUrl());
    CHECK(client.exchange(get(), {10000, 1 << 20}).ok());
  }
  CHECK(server.connections() == 1);
}

TEST_CASE("outbound client: no network under a NoWaitScope") {
  HostileServer server(silent);
  HttpClient client(server.parsedUrl());
  NoWaitScope noWait;
  HttpResult r = client.exchange(get(), {600000, 1 << 20});
  CHECK(r.failure == Failure::Unreachable);
  CHECK(server.connections() == 0);
}
