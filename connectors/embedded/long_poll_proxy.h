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
// The mock finds where a fetch starts by walking the partition's batches from
// the oldest, so a fetch that gets records costs more the longer the log is
// (the quick start's trickle writes a batch per row: 5.8% of a core once its
// topic held 30,000, 1.8% with what follows). When a produce's answer says
// its batch went exactly where a held fetch of that one partition reads, the
// proxy answers the fetch itself with the batch it passed on, from the mock's
// own empty answer with the watermarks moved past it; the consumer's next
// fetch is at the log's end, which the mock answers without walking.
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

// A Produce request (versions 3 to 8) that writes one record batch to one
// partition of one topic: where, and the batch (a view into `body`).
struct SingleBatch {
  std::string topic;
  int32_t partition = -1;
  std::string_view batch;
};
std::optional<SingleBatch> singleBatchOfProduce(std::string_view body);

// A Produce answer (versions 0 to 8) for one partition of one topic.
struct ProduceResult {
  int32_t partition = -1;
  int16_t error = -1;
  int64_t baseOffset = -1;
};
std::optional<ProduceResult> singleProduceResult(std::string_view body, int16_t apiVersion);

// A Fetch request (versions 4 to 11, outside any fetch session) of one
// partition of one topic: where it reads from.
struct FetchPosition {
  std::string topic;
  int32_t partition = -1;
  int64_t offset = -1;
};
std::optional<FetchPosition> singleFetchPosition(std::string_view body);

// An empty Fetch answer (versions 4 to 11, one partition, no error, its high
// watermark and last stable offset both `offset`) made into the answer that
// carries `batch` written at `offset`: the batch's base offset set, both
// watermarks moved past it. `batch` must be one record batch of format 2,
// neither transactional nor a control batch. nullopt when either is not of
// that shape.
std::optional<std::string> answerWithBatch(std::string_view emptyAnswer, int16_t apiVersion,
                                           int64_t offset, std::string_view batch);

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

  // How many held fetches the proxy answered itself with the batch a produce
  // had just written where they read (see the file comment).
  uint64_t answeredFromProduce() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string bootstrap_;
};

}  // namespace rtsql
