// rtsqld's one outbound HTTP/1.1 client, used by the schema registry client,
// the HTTP sink and the Kinesis client: one connection (http, or https
// through OpenSSL) to the destination a statement named, kept alive between
// exchanges when the server allows.
//
// Everything a remote service sends is hostile input, and every wait on it
// must end. So each exchange
//   - connects only to addresses the process's outbound policy allows
//     (connectors/net/outbound_policy.h), checked on what the name resolved
//     to, right before connecting; redirects are never followed (a 3xx is an
//     answer like any other);
//   - ends at one deadline: connecting, the TLS handshake, sending and the
//     whole answer together take at most `timeoutMs`, so a server that
//     trickles a byte at a time gains nothing;
//   - counts the bytes it receives, the status line and headers included,
//     and stops reading past `maxAnswerBytes`, whatever Content-Length says
//     or however the body is chunked, so what it holds stays within that;
//   - ends early (Failure::Cancelled) when the caller's flag turns true on
//     another thread (a sink closing), when the process stops its outbound
//     traffic (stopAllOutbound(), on SIGTERM and SIGINT), and throws
//     Interrupted when the thread's interrupt check fires (common/interrupt.h:
//     a cancel request, statement_timeout or a client gone on a session's
//     thread; STOP FLOW on a flow's task thread). These are polled every
//     kPollMillis while it waits.
// Host names are resolved with the system's resolver, bounded by its own
// timeouts (resolv.conf) rather than by these.
//
// One thread uses a client at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "connectors/net/http_url.h"

namespace boost::asio::ssl {
class context;
}

namespace rtsql::net {

// How often a waiting exchange looks at its cancel flags.
inline constexpr int kPollMillis = 20;

struct HttpRequest {
  std::string method = "GET";  // GET, POST, PUT
  std::string target;          // path and query
  std::vector<std::pair<std::string, std::string>> headers;  // besides Host, User-Agent
  std::string body;
  bool keepAlive = false;
};

struct HttpAnswer {
  int status = 0;
  std::string reason;
  std::string body;
  int64_t retryAfterMs = -1;  // a Retry-After in delay-seconds, or -1
  size_t bytes = 0;           // received, status line and headers included
};

struct HttpLimits {
  int64_t timeoutMs = 10000;
  uint64_t maxAnswerBytes = 16u << 20;
};

enum class Failure {
  None,
  Refused,      // the outbound policy does not allow the destination
  Unreachable,  // cannot resolve or connect, or the connection broke
  TimedOut,     // the deadline passed
  TooLarge,     // the answer passed maxAnswerBytes
  Malformed,    // not an HTTP answer
  Cancelled     // the caller's flag, or the process stopping
};

struct HttpResult {
  Failure failure = Failure::None;
  std::string error;  // what failed, without anything the server sent
  HttpAnswer answer;
  bool ok() const { return failure == Failure::None; }
};

// A TLS context that checks servers against the system's CAs, or against the
// PEM file `caFile` when it is not empty. Throws SqlError 58030 when the file
// cannot be read.
std::shared_ptr<boost::asio::ssl::context> makeTlsClientContext(const std::string& caFile = {});

class HttpClient {
 public:
  // `tls` is needed for an https URL (made with makeTlsClientContext() when
  // null).
  explicit HttpClient(HttpUrl url, std::shared_ptr<boost::asio::ssl::context> tls = nullptr);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // One request and its answer (see above). `cancel`, when given, may be set
  // by another thread. A kept-alive connection that the server closed
  // meanwhile is opened again once. Throws Interrupted (only that).
  HttpResult exchange(const HttpRequest& request, const HttpLimits& limits,
                      const std::atomic<bool>* cancel = nullptr);

  // Closes the connection (the next exchange opens a new one).
  void close();
  bool connected() const;
  // The Host header of the URL ("host", "host:port", "[v6]:port").
  const std::string& hostHeader() const;
  const HttpUrl& url() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// While one lives on a thread, exchanges on that thread do not touch the
// network: they fail at once (Failure::Unreachable). rtsqld restores its
// catalog under one, so that a restart never waits on a remote service; what
// needed one is restored later (server/durability.cpp).
class NoWaitScope {
 public:
  NoWaitScope();
  ~NoWaitScope();
  NoWaitScope(const NoWaitScope&) = delete;
  NoWaitScope& operator=(const NoWaitScope&) = delete;

 private:
  bool previous_;
};

// Ends every outbound wait of the process now and refuses new ones: rtsqld
// stops (SIGTERM, SIGINT). Exchanges then fail with Failure::Cancelled.
void stopAllOutbound();
bool outboundStopped();

// For messages: what `failure` is, in a few words.
const char* failureName(Failure failure);

}  // namespace rtsql::net

namespace rtsql {

// A Retry-After value in delay-seconds as milliseconds; -1 for anything else
// (an HTTP date is not followed: the caller's backoff applies).
int64_t parseRetryAfterMs(std::string_view value);

}  // namespace rtsql
