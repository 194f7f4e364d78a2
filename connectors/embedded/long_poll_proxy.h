// A loopback TCP proxy in front of the embedded broker that gives its fetches
// Kafka's long poll. librdkafka's mock cluster answers a fetch that finds no
// records only when the fetch's own wait (MaxWait) runs out, and a record
// written meanwhile does not cut that wait short: a consumer had to ask with a
// wait of one millisecond to see records at once, a thousand requests a second
// per idle consumer and most of an idle server's CPU. The proxy forwards each
// fetch with no wait; when the answer holds no records it keeps the answer and
// asks again as soon as the answer to a Produce to one of its topics passes
// through (the records are in the log by then), and gives the client the empty answer only when the
// client's own wait ends. Consumers wait as long as on Apache Kafka, and records
// reach them as soon as they are written.
//
// Clients learn where the brokers are from Metadata and FindCoordinator
// answers; the proxy puts its own ports in them, so every connection passes
// through it. One connection's requests are answered in order, as Kafka does:
// after a fetch it holds, the proxy forwards nothing more of that client's
// until the fetch is answered.
//
// The bytes come from any local process: a frame larger than kMaxFrameBytes
// closes its connection, every count and length is checked against the bytes
// that remain, and a frame the proxy cannot read is forwarded unchanged. Every
// wait ends when the proxy is destroyed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rtsql {

// The few protocol reads and edits the proxy makes, on a frame's body (the
// bytes after its 4-byte length). Apart from the proxy so they can be tested
// on bytes.
namespace longpoll {

inline constexpr int16_t kProduce = 0;
inline constexpr int16_t kFetch = 1;
inline constexpr int16_t kMetadata = 3;
inline constexpr int16_t kFindCoordinator = 10;
inline constexpr size_t kMaxFrameBytes = size_t{256} << 20;

struct RequestHeader {
  int16_t apiKey = -1;
  int16_t apiVersion = -1;
  int32_t correlationId = 0;
  size_t bodyOffset = 0;  // where the request's own fields start (header v1)
};

// The request header, or nullopt when the bytes are too short.
std::optional<RequestHeader> parseRequestHeader(std::string_view body);

// A Fetch request of a version the proxy reads (0 to 11): sets its wait to
// zero and returns the wait the client asked for. nullopt (the request
// unchanged) for anything else.
std::optional<int32_t> clearFetchWait(std::string& body);

// A Produce request: its acks (0: no answer will come) and the topics it
// writes to (topicsKnown false when they could not all be read).
struct ProduceRequest {
  int16_t acks = -1;
  std::vector<std::string> topics;
  bool topicsKnown = false;
};
std::optional<ProduceRequest> parseProduce(std::string_view body);

// The topics a Fetch request (versions 0 to 11) reads, or nullopt.
std::optional<std::vector<std::string>> fetchTopics(std::string_view body);

// Whether a Fetch answer of `apiVersion` has no records and no error in any of
// its partitions: only such an answer is held. False for any answer it cannot
// read to the end.
bool isEmptyFetchAnswer(std::string_view body, int16_t apiVersion);

// Rewrites the broker ports of a Metadata or FindCoordinator answer through
// `ports` (upstream port -> proxy port). Returns how many it rewrote; an answer
// it cannot read is left as it is.
int rewriteBrokerPorts(std::string& body, int16_t apiKey, int16_t apiVersion,
                       const std::vector<std::pair<int32_t, int32_t>>& ports);

}  // namespace longpoll

class LongPollProxy {
 public:
  // One loopback listener per port in `upstreamPorts` (the mock's brokers,
  // on 127.0.0.1). Throws std::runtime_error when a listener cannot be opened.
  explicit LongPollProxy(const std::vector<int>& upstreamPorts);
  ~LongPollProxy();
  LongPollProxy(const LongPollProxy&) = delete;
  LongPollProxy& operator=(const LongPollProxy&) = delete;

  // "127.0.0.1:PORT" of each listener, comma-separated, in upstream order.
  const std::string& bootstrap() const { return bootstrap_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string bootstrap_;
};

}  // namespace rtsql
