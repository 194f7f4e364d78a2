// A Kinesis API client: one keep-alive HTTP/1.1 connection through rtsqld's
// outbound client (connectors/net/http_client.h: the outbound policy, a cap
// on the answer's bytes, cancel on STOP FLOW and shutdown), each request
// signed with SigV4 (connectors/aws/sigv4.h). A request, connecting
// included, is bounded by the request timeout, so a dead or silent endpoint
// costs at most that much before call() throws. An error names the status,
// the service's exception type and the answer's size, not its text. Used by
// one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "connectors/aws/sigv4.h"

namespace rtsql::kinesis {

struct ClientConfig {
  std::string endpoint;  // "https://kinesis.us-east-1.amazonaws.com", "http://127.0.0.1:4567"
  std::string region;
  aws::Credentials credentials;
  int64_t requestTimeoutMs = 10000;
};

// A failed call. `serviceError` is the exception type the service answered
// ("ExpiredIteratorException"), empty for a failure to reach it (refused,
// timed out, not HTTP), which `transport` marks.
class CallError : public std::runtime_error {
 public:
  CallError(std::string message, std::string serviceError, int status, bool transport)
      : std::runtime_error(std::move(message)),
        serviceError_(std::move(serviceError)),
        status_(status),
        transport_(transport) {}
  const std::string& serviceError() const { return serviceError_; }
  int status() const { return status_; }
  bool transport() const { return transport_; }
  // Worth trying again after a pause (protocol.h, isRetryable), or a
  // transport failure.
  bool retryable() const;

 private:
  std::string serviceError_;
  int status_;
  bool transport_;
};

class Client {
 public:
  // Throws std::invalid_argument when the endpoint is not an http(s) URL.
  explicit Client(ClientConfig config);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends `action` ("GetRecords") with `body` and returns the answer's body
  // (status 200). Throws CallError otherwise.
  std::string call(std::string_view action, const std::string& body);

  const std::string& endpoint() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rtsql::kinesis
