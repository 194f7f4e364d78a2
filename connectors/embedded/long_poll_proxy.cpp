#include "connectors/embedded/long_poll_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <list>
#include <stdexcept>
#include <thread>
#include <unordered_map>

namespace rtsql {

namespace longpoll {

// Big-endian reads over a frame body; any read past the end clears ok and
// returns zero, so a caller checks ok once at the end.
struct Reader {
  std::string_view b;
  size_t pos = 0;
  bool ok = true;

  bool need(size_t n) {
    if (!ok || b.size() - pos < n) ok = false;
    return ok;
  }
  uint64_t be(size_t n) {
    if (!need(n)) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(b[pos + i]);
    pos += n;
    return v;
  }
  int16_t i16() { return static_cast<int16_t>(be(2)); }
  int32_t i32() { return static_cast<int32_t>(be(4)); }
  int64_t i64() { return static_cast<int64_t>(be(8)); }
  void skip(size_t n) {
    if (need(n)) pos += n;
  }
  // A non-flexible (nullable) string: int16 length, -1 for null.
  void skipString() {
    int16_t len = i16();
    if (len < -1) ok = false;
    if (len > 0) skip(static_cast<size_t>(len));
  }
  // A count of items at least `minItemBytes` long each, checked against the
  // bytes left so that a hostile count cannot make a caller loop for long.
  int32_t count(size_t minItemBytes) {
    int32_t n = i32();
    if (n < -1 || (n > 0 && static_cast<size_t>(n) * minItemBytes > b.size() - pos)) ok = false;
    return ok ? std::max(n, 0) : 0;
  }
};

namespace {

void putI32(std::string& body, size_t at, int32_t v) {
  const auto u = static_cast<uint32_t>(v);
  body[at] = static_cast<char>(u >> 24);
  body[at + 1] = static_cast<char>(u >> 16);
  body[at + 2] = static_cast<char>(u >> 8);
  body[at + 3] = static_cast<char>(u);
}

// Rewrites the int32 port at `at` when it is one of the upstream ports.
int rewritePort(std::string& body, size_t at,
                const std::vector<std::pair<int32_t, int32_t>>& ports) {
  Reader r{body, at};
  int32_t port = r.i32();
  if (!r.ok) return 0;
  for (const auto& [from, to] : ports) {
    if (port == from) {
      putI32(body, at, to);
      return 1;
    }
  }
  return 0;
}

}  // namespace

std::optional<RequestHeader> parseRequestHeader(std::string_view body) {
  Reader r{body};
  RequestHeader h;
  h.apiKey = r.i16();
  h.apiVersion = r.i16();
  h.correlationId = r.i32();
  r.skipString();  // client id
  if (!r.ok) return std::nullopt;
  h.bodyOffset = r.pos;
  return h;
}

std::optional<int32_t> clearFetchWait(std::string& body) {
  auto h = parseRequestHeader(body);
  // Versions 12 and up have a flexible header (tagged fields after the client
  // id); the embedded broker answers up to 11.
  if (!h || h->apiKey != kFetch || h->apiVersion < 0 || h->apiVersion > 11) return std::nullopt;
  Reader r{body, h->bodyOffset};
  r.i32();  // replica id
  const size_t waitAt = r.pos;
  int32_t wait = r.i32();
  if (!r.ok) return std::nullopt;
  putI32(body, waitAt, 0);
  return wait;
}

std::optional<ProduceRequest> parseProduce(std::string_view body) {
  auto h = parseRequestHeader(body);
  if (!h || h->apiKey != kProduce || h->apiVersion < 0 || h->apiVersion > 8) return std::nullopt;
  Reader r{body, h->bodyOffset};
  if (h->apiVersion >= 3) r.skipString();  // transactional id
  ProduceRequest out;
  out.acks = r.i16();
  r.i32();  // timeout
  if (!r.ok) return std::nullopt;
  const int32_t topics = r.count(6);
  for (int32_t t = 0; r.ok && t < topics; ++t) {
    const size_t at = r.pos + 2;
    const int16_t len = r.i16();
    r.skip(static_cast<size_t>(std::max<int16_t>(len, 0)));
    if (!r.ok) break;
    out.topics.emplace_back(body.substr(at, static_cast<size_t>(std::max<int16_t>(len, 0))));
    const int32_t partitions = r.count(8);
    for (int32_t p = 0; r.ok && p < partitions; ++p) {
      r.i32();  // partition
      const int32_t records = r.i32();
      if (records < -1) r.ok = false;
      if (records > 0) r.skip(static_cast<size_t>(records));
    }
  }
  out.topicsKnown = r.ok;
  return out;
}

std::optional<std::vector<std::string>> fetchTopics(std::string_view body) {
  auto h = parseRequestHeader(body);
  if (!h || h->apiKey != kFetch || h->apiVersion < 0 || h->apiVersion > 11) return std::nullopt;
  const int16_t v = h->apiVersion;
  Reader r{body, h->bodyOffset};
  r.skip(12);                 // replica id, wait, min bytes
  if (v >= 3) r.i32();        // max bytes
  if (v >= 4) r.skip(1);      // isolation level
  if (v >= 7) r.skip(8);      // session id and epoch
  const size_t partitionBytes = 16 + (v >= 9 ? 4 : 0) + (v >= 5 ? 8 : 0);
  std::vector<std::string> out;
  const int32_t topics = r.count(6);
  for (int32_t t = 0; r.ok && t < topics; ++t) {
    const size_t at = r.pos + 2;
    const int16_t len = r.i16();
    r.skip(static_cast<size_t>(std::max<int16_t>(len, 0)));
    if (!r.ok) break;
    out.emplace_back(body.substr(at, static_cast<size_t>(std::max<int16_t>(len, 0))));
    const int32_t partitions = r.count(partitionBytes);
    r.skip(static_cast<size_t>(partitions) * partitionBytes);
  }
  if (!r.ok) return std::nullopt;
  return out;
}

bool isEmptyFetchAnswer(std::string_view body, int16_t v) {
  if (v < 0 || v > 11) return false;
  Reader r{body};
  r.i32();              // correlation id
  if (v >= 1) r.i32();  // throttle time
  if (v >= 7) {
    if (r.i16() != 0) return false;  // error: the client must see it
    r.i32();                         // session id
  }
  const int32_t topics = r.count(6);
  for (int32_t t = 0; r.ok && t < topics; ++t) {
    r.skipString();
    const int32_t partitions = r.count(18);
    for (int32_t p = 0; r.ok && p < partitions; ++p) {
      r.i32();  // partition
      if (r.i16() != 0) return false;
      r.i64();              // high watermark
      if (v >= 4) r.i64();  // last stable offset
      if (v >= 5) r.i64();  // log start offset
      if (v >= 4) {
        const int32_t aborted = r.count(16);
        r.skip(static_cast<size_t>(aborted) * 16);
      }
      if (v >= 11 && r.i32() != -1) return false;  // read from another replica
      const int32_t records = r.i32();
      if (records > 0 || records < -1) return false;
    }
  }
  return r.ok && r.pos == body.size();
}

namespace {

// A topic name as a view into the body (an int16 length, not null).
std::optional<std::string_view> readName(Reader& r) {
  const int16_t len = r.i16();
  if (len < 0) r.ok = false;
  const size_t at = r.pos;
  r.skip(static_cast<size_t>(std::max<int16_t>(len, 0)));
  if (!r.ok) return std::nullopt;
  return r.b.substr(at, static_cast<size_t>(len));
}

// Offsets into a record batch of format 2 (magic 2).
constexpr size_t kBatchLengthAt = 8;
constexpr size_t kMagicAt = 16;
constexpr size_t kAttributesAt = 21;
constexpr size_t kBatchHeaderBytes = 61;
constexpr int kTransactionalOrControl = 0x30;

// The records of one batch of format 2, neither transactional nor control:
// how many offsets it takes, or 0 when `batch` is not exactly such a batch.
int64_t plainBatchOffsets(std::string_view batch) {
  if (batch.size() < kBatchHeaderBytes) return 0;
  Reader r{batch, kBatchLengthAt};
  const int64_t length = r.i32();
  r.pos = kMagicAt;
  const int magic = static_cast<int>(r.be(1));
  r.pos = kAttributesAt;
  const int attributes = r.i16();
  const int64_t lastOffsetDelta = r.i32();
  if (!r.ok || length + 12 != static_cast<int64_t>(batch.size()) || magic != 2 ||
      (attributes & kTransactionalOrControl) != 0 || lastOffsetDelta < 0) {
    return 0;
  }
  return lastOffsetDelta + 1;
}

void putI64(std::string& body, size_t at, int64_t v) {
  putI32(body, at, static_cast<int32_t>(static_cast<uint64_t>(v) >> 32));
  putI32(body, at + 4, static_cast<int32_t>(v));
}

}  // namespace

std::optional<SingleBatch> singleBatchOfProduce(std::string_view body) {
  auto h = parseRequestHeader(body);
  if (!h || h->apiKey != kProduce || h->apiVersion < 3 || h->apiVersion > 8) return std::nullopt;
  Reader r{body, h->bodyOffset};
  r.skipString();  // transactional id
  r.i16();         // acks
  r.i32();         // timeout
  if (r.i32() != 1) return std::nullopt;
  auto topic = readName(r);
  if (!topic || r.i32() != 1) return std::nullopt;
  SingleBatch out;
  out.topic = std::string(*topic);
  out.partition = r.i32();
  const int32_t len = r.i32();
  if (!r.ok || len <= 0 || static_cast<size_t>(len) != body.size() - r.pos) return std::nullopt;
  out.batch = body.substr(r.pos);
  if (plainBatchOffsets(out.batch) == 0) return std::nullopt;
  return out;
}

std::optional<ProduceResult> singleProduceResult(std::string_view body, int16_t v) {
  if (v < 0 || v > 8) return std::nullopt;
  Reader r{body};
  r.i32();  // correlation id
  if (r.i32() != 1 || !readName(r) || r.i32() != 1) return std::nullopt;
  ProduceResult out;
  out.partition = r.i32();
  out.error = r.i16();
  out.baseOffset = r.i64();
  if (!r.ok) return std::nullopt;
  return out;
}

std::optional<FetchPosition> singleFetchPosition(std::string_view body) {
  auto h = parseRequestHeader(body);
  if (!h || h->apiKey != kFetch || h->apiVersion < 4 || h->apiVersion > 11) return std::nullopt;
  const int16_t v = h->apiVersion;
  Reader r{body, h->bodyOffset};
  r.skip(16);  // replica id, wait, min bytes, max bytes
  r.skip(1);   // isolation level
  if (v >= 7 && (r.i32() != 0 || r.i32() != -1)) return std::nullopt;  // a fetch session
  if (r.i32() != 1) return std::nullopt;
  auto topic = readName(r);
  if (!topic || r.i32() != 1) return std::nullopt;
  FetchPosition out;
  out.topic = std::string(*topic);
  out.partition = r.i32();
  if (v >= 9) r.i32();  // current leader epoch
  out.offset = r.i64();
  if (v >= 5) r.i64();  // log start offset
  r.i32();              // partition max bytes
  // Forgotten topics belong to a fetch session.
  if (v >= 7 && r.i32() > 0) return std::nullopt;
  if (!r.ok) return std::nullopt;
  return out;
}

std::optional<std::string> answerWithBatch(std::string_view answer, int16_t v, int64_t offset,
                                           std::string_view batch) {
  if (v < 4 || v > 11) return std::nullopt;
  const int64_t offsets = plainBatchOffsets(batch);
  if (offsets == 0) return std::nullopt;
  Reader r{answer};
  r.i32();  // correlation id
  r.i32();  // throttle time
  if (v >= 7) {
    if (r.i16() != 0) return std::nullopt;
    r.i32();  // session id
  }
  if (r.i32() != 1 || !readName(r) || r.i32() != 1) return std::nullopt;
  r.i32();  // partition
  if (r.i16() != 0) return std::nullopt;
  const size_t watermarksAt = r.pos;
  // The high watermark and the last stable offset.
  if (r.i64() != offset || r.i64() != offset) return std::nullopt;
  if (v >= 5) r.i64();  // log start offset
  const int32_t aborted = r.i32();
  if (aborted > 0) return std::nullopt;
  if (v >= 11 && r.i32() != -1) return std::nullopt;  // read from another replica
  const size_t recordsAt = r.pos;
  const int32_t records = r.i32();
  if (!r.ok || records > 0 || records < -1 || r.pos != answer.size()) return std::nullopt;
  std::string out(answer.substr(0, recordsAt));
  putI64(out, watermarksAt, offset + offsets);
  putI64(out, watermarksAt + 8, offset + offsets);
  out.append(4, '\0');
  putI32(out, recordsAt, static_cast<int32_t>(batch.size()));
  const size_t batchAt = out.size();
  out.append(batch);
  putI64(out, batchAt, offset);
  return out;
}

int rewriteBrokerPorts(std::string& body, int16_t apiKey, int16_t v,
                       const std::vector<std::pair<int32_t, int32_t>>& ports) {
  Reader r{body};
  r.i32();  // correlation id
  if (apiKey == kMetadata && v >= 0 && v <= 8) {
    if (v >= 3) r.i32();  // throttle time
    const int32_t brokers = r.count(10);
    std::vector<size_t> at;
    for (int32_t i = 0; r.ok && i < brokers; ++i) {
      r.i32();  // node id
      r.skipString();
      at.push_back(r.pos);
      r.i32();
      if (v >= 1) r.skipString();  // rack
    }
    if (!r.ok) return 0;
    int n = 0;
    for (size_t a : at) n += rewritePort(body, a, ports);
    return n;
  }
  if (apiKey == kFindCoordinator && v >= 0 && v <= 2) {
    if (v >= 1) r.i32();  // throttle time
    r.i16();              // error
    if (v >= 1) r.skipString();
    r.i32();  // node id
    r.skipString();
    const size_t at = r.pos;
    r.i32();
    return r.ok ? rewritePort(body, at, ports) : 0;
  }
  return 0;
}

}  // namespace longpoll

namespace {

using longpoll::Reader;
using Clock = std::chrono::steady_clock;

// A connection stops reading when what it has not yet passed on exceeds this
// (a frame being read may be larger: it is read whole).
constexpr size_t kBufferedHighWater = size_t{8} << 20;

// Bytes received or to send; consumed from the front without moving the rest
// each time.
struct Buffer {
  std::string data;
  size_t start = 0;

  size_t size() const { return data.size() - start; }
  bool empty() const { return size() == 0; }
  std::string_view view() const { return std::string_view(data).substr(start); }
  void consume(size_t n) {
    start += n;
    if (start == data.size()) {
      data.clear();
      start = 0;
    } else if (start > (size_t{1} << 20) && start > data.size() / 2) {
      data.erase(0, start);
      start = 0;
    }
  }
};

// The size of the first frame in `b` with its length prefix, 0 when it is not
// all there yet, or nullopt when its length is out of bounds.
std::optional<size_t> frameLength(const Buffer& b) {
  if (b.size() < 4) return 0;
  std::string_view v = b.view();
  uint32_t len = 0;
  for (int i = 0; i < 4; ++i) len = (len << 8) | static_cast<uint8_t>(v[i]);
  if (len > longpoll::kMaxFrameBytes) return std::nullopt;
  return b.size() >= 4 + size_t{len} ? 4 + size_t{len} : 0;
}

void putFrameLength(std::string& out, size_t length) {
  for (int i = 0; i < 4; ++i) out[static_cast<size_t>(i)] = static_cast<char>(length >> (24 - 8 * i));
}

void noDelay(int fd) {
  int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  return a;
}

struct Pending {
  int32_t correlationId = 0;
  int16_t apiKey = -1;
  int16_t apiVersion = -1;
  // A produce's topics; unknown when its request could not be read.
  std::vector<std::string> topics;
  bool topicsKnown = false;
  // A produce of one batch to one partition: the batch, to answer a held
  // fetch with once it is written (longpoll::answerWithBatch).
  std::string batchTopic;
  int32_t batchPartition = -1;
  std::string batch;
};

// A batch a produce's answer said was written, in this turn of the loop.
struct Appended {
  std::string topic;
  int32_t partition = -1;
  int64_t baseOffset = -1;
  std::string batch;
};

// The largest batch the proxy keeps a copy of until its produce is answered.
constexpr size_t kMaxCopiedBatch = size_t{1} << 20;

struct Connection {
  int client = -1;
  int upstream = -1;
  bool connected = false;  // the upstream connect has completed
  Buffer fromClient, toUpstream, fromUpstream, toClient;
  std::vector<Pending> pending;  // forwarded requests whose answers are due

  // The fetch being long-polled: once forwarded, nothing more of the client's
  // is forwarded until it is answered.
  bool fetching = false;
  std::string fetchFrame;  // with its wait cleared, to ask again
  Pending fetch{};
  Clock::time_point deadline;
  bool held = false;
  std::string heldAnswer;
  uint64_t askedAt = 0;  // Impl::writes when the fetch was last asked
  std::vector<std::string> fetchTopics;
  bool fetchTopicsKnown = false;
  std::optional<longpoll::FetchPosition> fetchAt;  // a fetch of one partition

  ~Connection() {
    if (client >= 0) close(client);
    if (upstream >= 0) close(upstream);
  }
};

}  // namespace

struct LongPollProxy::Impl {
  struct Listener {
    int fd = -1;
    int upstreamPort = 0;
  };
  std::vector<Listener> listeners;
  std::vector<std::pair<int32_t, int32_t>> ports;  // upstream -> own
  int stopPipe[2] = {-1, -1};
  std::list<Connection> connections;
  // Produce answers seen, and the count at the last one of each topic: a held
  // fetch asks again once a topic it reads was written since it asked (any
  // topic, when the topics of either are unknown).
  uint64_t writes = 0;
  uint64_t unknownWrite = 0;
  std::unordered_map<std::string, uint64_t> written;
  std::vector<Appended> appended;
  std::atomic<uint64_t> answeredFromProduce{0};
  std::thread thread;

  ~Impl() {
    for (auto& l : listeners) {
      if (l.fd >= 0) close(l.fd);
    }
    for (int fd : stopPipe) {
      if (fd >= 0) close(fd);
    }
  }

  void run();
  void accept(const Listener& l);
  bool readInto(int fd, Buffer& b);
  bool writeFrom(int fd, Buffer& b);
  bool handleUpstream(Connection& c);
  bool handleClient(Connection& c);
  void ask(Connection& c);
  void noteWrite(const Pending& produce);
  bool writtenSince(const Connection& c) const;
  bool answerFromProduce(Connection& c);
};

// A held fetch of one partition, at exactly where a batch was just written:
// answered here with that batch, so the mock need not walk its log for it.
bool LongPollProxy::Impl::answerFromProduce(Connection& c) {
  if (!c.fetchAt) return false;
  for (const Appended& a : appended) {
    if (a.partition != c.fetchAt->partition || a.baseOffset != c.fetchAt->offset ||
        a.topic != c.fetchAt->topic) {
      continue;
    }
    auto body = longpoll::answerWithBatch(std::string_view(c.heldAnswer).substr(4),
                                          c.fetch.apiVersion, a.baseOffset, a.batch);
    if (!body) return false;
    std::string length(4, '\0');
    putFrameLength(length, body->size());
    c.toClient.data.append(length);
    c.toClient.data.append(*body);
    c.held = false;
    c.heldAnswer.clear();
    c.fetching = false;
    answeredFromProduce.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  return false;
}

void LongPollProxy::Impl::noteWrite(const Pending& produce) {
  ++writes;
  // A bound on the topics remembered: past it, every held fetch asks again
  // once and the map starts over.
  if (!produce.topicsKnown || written.size() + produce.topics.size() > 10000) {
    written.clear();
    unknownWrite = writes;
    return;
  }
  for (const std::string& t : produce.topics) written[t] = writes;
}

bool LongPollProxy::Impl::writtenSince(const Connection& c) const {
  if (unknownWrite > c.askedAt) return true;
  if (!c.fetchTopicsKnown) return writes > c.askedAt;
  for (const std::string& t : c.fetchTopics) {
    auto it = written.find(t);
    if (it != written.end() && it->second > c.askedAt) return true;
  }
  return false;
}

void LongPollProxy::Impl::accept(const Listener& l) {
  for (int i = 0; i < 64; ++i) {
    int fd = ::accept4(l.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    Connection& c = connections.emplace_back();
    c.client = fd;
    noDelay(fd);
    c.upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c.upstream < 0) {
      connections.pop_back();
      continue;
    }
    noDelay(c.upstream);
    sockaddr_in a = loopback(l.upstreamPort);
    int rc = ::connect(c.upstream, reinterpret_cast<sockaddr*>(&a), sizeof a);
    if (rc == 0) {
      c.connected = true;
    } else if (errno != EINPROGRESS) {
      connections.pop_back();
    }
  }
}

bool LongPollProxy::Impl::readInto(int fd, Buffer& b) {
  char chunk[65536];
  for (int i = 0; i < 16; ++i) {
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n > 0) {
      b.data.append(chunk, static_cast<size_t>(n));
      if (static_cast<size_t>(n) < sizeof chunk) return true;
      continue;
    }
    if (n == 0) return false;  // closed
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  }
  return true;
}

bool LongPollProxy::Impl::writeFrom(int fd, Buffer& b) {
  while (!b.empty()) {
    std::string_view v = b.view();
    ssize_t n = ::send(fd, v.data(), v.size(), MSG_NOSIGNAL);
    if (n > 0) {
      b.consume(static_cast<size_t>(n));
      continue;
    }
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
  }
  return true;
}

void LongPollProxy::Impl::ask(Connection& c) {
  c.toUpstream.data.append(c.fetchFrame);
  c.pending.push_back(c.fetch);
  c.held = false;
  c.heldAnswer.clear();
  c.askedAt = writes;
}

// Answers from the broker: passed on, ports rewritten, an empty fetch held.
// Frames are read in place and copied once, into the client's buffer.
bool LongPollProxy::Impl::handleUpstream(Connection& c) {
  for (;;) {
    auto len = frameLength(c.fromUpstream);
    if (!len) return false;
    if (*len == 0) return true;
    const std::string_view frame = c.fromUpstream.view().substr(0, *len);
    const std::string_view body = frame.substr(4);
    Reader r{body};
    const int32_t correlationId = r.i32();
    auto it = std::find_if(c.pending.begin(), c.pending.end(),
                           [&](const Pending& p) { return p.correlationId == correlationId; });
    if (it == c.pending.end()) {
      c.toClient.data.append(frame);
      c.fromUpstream.consume(*len);
      continue;
    }
    Pending p = std::move(*it);
    c.pending.erase(it);
    if (c.fetching && p.correlationId == c.fetch.correlationId && p.apiKey == longpoll::kFetch) {
      if (Clock::now() < c.deadline && longpoll::isEmptyFetchAnswer(body, p.apiVersion)) {
        if (writtenSince(c)) {
          ask(c);  // records were written while it was asked
        } else {
          c.held = true;
          c.heldAnswer.assign(frame);
        }
      } else {
        c.fetching = false;
        c.toClient.data.append(frame);
      }
    } else if (p.apiKey == longpoll::kMetadata || p.apiKey == longpoll::kFindCoordinator) {
      std::string edited(body);
      longpoll::rewriteBrokerPorts(edited, p.apiKey, p.apiVersion, ports);
      c.toClient.data.append(frame.substr(0, 4));
      c.toClient.data.append(edited);
    } else {
      if (p.apiKey == longpoll::kProduce) {
        noteWrite(p);
        if (!p.batch.empty()) {
          auto result = longpoll::singleProduceResult(body, p.apiVersion);
          if (result && result->error == 0 && result->partition == p.batchPartition &&
              result->baseOffset >= 0) {
            appended.push_back(
                {std::move(p.batchTopic), p.batchPartition, result->baseOffset, std::move(p.batch)});
          }
        }
      }
      c.toClient.data.append(frame);
    }
    c.fromUpstream.consume(*len);
  }
}

// Requests from the client: forwarded, a fetch's wait cleared. Frames are
// read in place; only a fetch is copied, to be edited and asked again.
bool LongPollProxy::Impl::handleClient(Connection& c) {
  while (!c.fetching) {
    auto len = frameLength(c.fromClient);
    if (!len) return false;
    if (*len == 0) return true;
    const std::string_view frame = c.fromClient.view().substr(0, *len);
    const std::string_view body = frame.substr(4);
    auto header = longpoll::parseRequestHeader(body);
    if (!header) {
      c.toUpstream.data.append(frame);
      c.fromClient.consume(*len);
      continue;
    }
    Pending p;
    p.correlationId = header->correlationId;
    p.apiKey = header->apiKey;
    p.apiVersion = header->apiVersion;
    bool answered = true;
    if (header->apiKey == longpoll::kFetch) {
      std::string edited(body);
      std::optional<int32_t> wait = longpoll::clearFetchWait(edited);
      if (wait && *wait > 0) {
        c.fetching = true;
        c.fetch = p;
        auto topics = longpoll::fetchTopics(edited);
        c.fetchTopicsKnown = topics.has_value();
        c.fetchTopics = topics ? std::move(*topics) : std::vector<std::string>();
        c.fetchAt = longpoll::singleFetchPosition(edited);
        c.fetchFrame.assign(frame.substr(0, 4));
        c.fetchFrame.append(edited);
        c.deadline = Clock::now() + std::chrono::milliseconds(*wait);
        c.fromClient.consume(*len);
        ask(c);
        continue;
      }
    } else if (header->apiKey == longpoll::kProduce) {
      if (auto produce = longpoll::parseProduce(body)) {
        p.topics = std::move(produce->topics);
        p.topicsKnown = produce->topicsKnown;
        answered = produce->acks != 0;
        auto one = answered ? longpoll::singleBatchOfProduce(body) : std::nullopt;
        if (one && one->batch.size() <= kMaxCopiedBatch) {
          p.batchTopic = std::move(one->topic);
          p.batchPartition = one->partition;
          p.batch.assign(one->batch);
        }
      }
    }
    c.toUpstream.data.append(frame);
    c.fromClient.consume(*len);
    if (answered) {
      c.pending.push_back(std::move(p));
    } else {
      noteWrite(p);  // no answer will come: counted once it is on its way
    }
  }
  return true;
}

void LongPollProxy::Impl::run() {
  std::vector<pollfd> fds;
  std::vector<Connection*> order;
  for (;;) {
    fds.clear();
    order.clear();
    fds.push_back({stopPipe[0], POLLIN, 0});
    for (const auto& l : listeners) fds.push_back({l.fd, POLLIN, 0});
    int timeoutMs = -1;
    const auto now = Clock::now();
    for (Connection& c : connections) {
      order.push_back(&c);
      short cev = 0, uev = 0;
      if (c.fromClient.size() < kBufferedHighWater && c.toUpstream.size() < kBufferedHighWater)
        cev |= POLLIN;
      if (!c.toClient.empty()) cev |= POLLOUT;
      if (c.connected && c.fromUpstream.size() < kBufferedHighWater &&
          c.toClient.size() < kBufferedHighWater)
        uev |= POLLIN;
      if (!c.connected || !c.toUpstream.empty()) uev |= POLLOUT;
      fds.push_back({c.client, cev, 0});
      fds.push_back({c.upstream, uev, 0});
      if (c.held) {
        auto left = std::chrono::ceil<std::chrono::milliseconds>(c.deadline - now).count();
        int ms = static_cast<int>(std::clamp<int64_t>(left, 0, 60000));
        timeoutMs = timeoutMs < 0 ? ms : std::min(timeoutMs, ms);
      }
    }
    int rc = ::poll(fds.data(), fds.size(), timeoutMs);
    if (rc < 0 && errno != EINTR) return;
    if (fds[0].revents) return;  // destroyed
    for (size_t i = 0; i < listeners.size(); ++i) {
      if (fds[1 + i].revents & POLLIN) accept(listeners[i]);
    }
    size_t at = 1 + listeners.size();
    for (Connection* c : order) {
      const short cre = fds[at].revents, ure = fds[at + 1].revents;
      at += 2;
      bool alive = true;
      if (!c->connected && (ure & (POLLOUT | POLLERR | POLLHUP))) {
        int err = 0;
        socklen_t elen = sizeof err;
        getsockopt(c->upstream, SOL_SOCKET, SO_ERROR, &err, &elen);
        c->connected = err == 0;
        alive = c->connected;
      }
      if (alive && (cre & (POLLIN | POLLHUP | POLLERR))) alive = readInto(c->client, c->fromClient);
      if (alive && c->connected && (ure & (POLLIN | POLLHUP | POLLERR)))
        alive = readInto(c->upstream, c->fromUpstream);
      if (alive) alive = handleUpstream(*c) && handleClient(*c);
      if (!alive) c->client = (close(c->client), -1);
    }
    // A held fetch asks again once records were written, or answers empty
    // when the client's wait is over; then the client's next requests go.
    const auto after = Clock::now();
    for (Connection& c : connections) {
      if (c.client < 0 || !c.held) continue;
      if (after >= c.deadline) {
        c.toClient.data.append(c.heldAnswer);
        c.held = false;
        c.heldAnswer.clear();
        c.fetching = false;
        if (!handleClient(c)) c.client = (close(c.client), -1);
      } else if (writtenSince(c)) {
        if (!answerFromProduce(c)) {
          ask(c);
        } else if (!handleClient(c)) {
          c.client = (close(c.client), -1);
        }
      }
    }
    appended.clear();
    for (auto it = connections.begin(); it != connections.end();) {
      bool alive = it->client >= 0;
      if (alive && it->connected) alive = writeFrom(it->upstream, it->toUpstream);
      if (alive) alive = writeFrom(it->client, it->toClient);
      it = alive ? std::next(it) : connections.erase(it);
    }
  }
}

LongPollProxy::LongPollProxy(const std::vector<int>& upstreamPorts)
    : impl_(std::make_unique<Impl>()) {
  if (::pipe2(impl_->stopPipe, O_CLOEXEC) != 0) throw std::runtime_error("no pipe for the proxy");
  for (int port : upstreamPorts) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error(std::string("proxy socket: ") + std::strerror(errno));
    impl_->listeners.push_back({fd, port});
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in a = loopback(0);
    socklen_t alen = sizeof a;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 128) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &alen) != 0) {
      throw std::runtime_error(std::string("proxy listener: ") + std::strerror(errno));
    }
    const int own = ntohs(a.sin_port);
    impl_->ports.emplace_back(port, own);
    if (!bootstrap_.empty()) bootstrap_ += ',';
    bootstrap_ += "127.0.0.1:" + std::to_string(own);
  }
  impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
  // Counted with the broker (rdk:mock) in bench/scenarios/idle.sh.
  pthread_setname_np(impl_->thread.native_handle(), "mock-proxy");
}

uint64_t LongPollProxy::answeredFromProduce() const {
  return impl_->answeredFromProduce.load(std::memory_order_relaxed);
}

LongPollProxy::~LongPollProxy() {
  char b = 1;
  while (::write(impl_->stopPipe[1], &b, 1) < 0 && errno == EINTR) {
  }
  impl_->thread.join();
  impl_->connections.clear();
}

}  // namespace rtsql
