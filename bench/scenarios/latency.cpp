// rtsql_latency: the end-to-end latency collector of the benchmarks.
//
// A producer thread sends JSON records to an input topic at a fixed rate; each
// record carries the wall-clock time it was sent (`ts_us`, microseconds). A flow
// reads the input topic and writes to an output topic, passing `ts_us` through; a
// consumer thread reads the output topic and takes receive time minus `ts_us` as
// the record's latency. With --floor there is no flow: the consumer reads the
// input topic itself, which measures what the broker and the client settings cost
// on their own, the floor every flow's latency is compared with.
//
// Both clocks are the same machine's wall clock, so no clock skew enters. Records
// sent during the warm-up are counted (sent, received, lost) but kept out of the
// histogram. Every wait is bounded: the run takes warm-up + seconds + drain.
//
// Two options shape the input for the stateful benchmarks:
//   --dup-ratio R  a fraction R of the records repeat an earlier record's event
//                  (same event_id, event time and fields, a new ts_us), as a
//                  producer's retries do. A deduplicating flow should pass only
//                  the originals: they are what is expected back, and a repeat
//                  that comes out is counted as `repeatsPassed`.
//   --in2 TOPIC    every record slot also sends a second record with the same
//                  event_id to TOPIC just before the one to --in (an impression,
//                  then its click), for a stream-stream join. The pair's output
//                  is expected to carry the later stamp, the click's ts_us: the
//                  moment the match became possible.
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"

namespace {

// The writer's schema of --format avro; `ts` is the event time.
constexpr const char* kAvroSchema =
    R"({"type":"record","name":"click","fields":[)"
    R"({"name":"ts_us","type":"long"},)"
    R"({"name":"ts","type":{"type":"long","logicalType":"timestamp-micros"}},)"
    R"({"name":"seq","type":"long"},{"name":"event_id","type":"long"},)"
    R"({"name":"user_id","type":"string"},{"name":"url","type":"string"},)"
    R"({"name":"amount","type":"double"},{"name":"merchant_id","type":"long"},)"
    R"({"name":"pad","type":"string"}]})";

struct Options {
  std::string bootstrap = "127.0.0.1:9092";
  std::string inTopic = "bench_in";
  std::string outTopic = "bench_out";
  double rate = 1000;
  double seconds = 10;
  double warmup = 2;
  double drain = 5;
  int size = 200;
  int keys = 100;
  int merchants = 10000;
  double dupRatio = 0;
  int dupDistance = 100;  // a repeat copies one of the last this-many originals
  std::string in2Topic;   // empty: one input topic
  bool json = false;
  bool floor = false;
  bool avro = false;  // --format avro: input records are Avro datums of kAvroSchema
  std::string debug;  // librdkafka debug contexts, e.g. "cgrp,fetch"
};

[[noreturn]] void usage(const char* why) {
  if (why != nullptr) std::fprintf(stderr, "rtsql_latency: %s\n", why);
  std::fprintf(stderr,
               "usage: rtsql_latency --bootstrap HOST:PORT --in TOPIC [--out TOPIC]\n"
               "       [--rate N] [--seconds S] [--warmup S] [--drain S] [--size BYTES]\n"
               "       [--keys K] [--merchants M] [--dup-ratio R] [--dup-distance N]\n"
               "       [--in2 TOPIC] [--json] [--floor] [--format json|avro] [--debug CONTEXTS]\n"
               "  --floor         consume the input topic itself (no flow): the broker's own\n"
               "                  produce-to-consume latency with the same client settings\n"
               "  --dup-ratio R   fraction of records repeating one of the last N originals\n"
               "                  (--dup-distance, default 100); only originals are expected\n"
               "  --in2 TOPIC     also send each record's partner (same event_id) to TOPIC,\n"
               "                  just before it: the second stream of a join\n"
               "  --format avro   send the records as Avro datums of the schema\n"
               "                  `rtsql_latency --avro-schema` prints, of the same --size;\n"
               "                  the flow's output stays JSON\n");
  std::exit(2);
}

Options parseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage(("missing value for " + std::string(a)).c_str());
      return argv[++i];
    };
    auto number = [&]() -> double {
      const char* v = value();
      char* end = nullptr;
      double d = std::strtod(v, &end);
      if (end == v || *end != '\0' || !(d >= 0)) {
        usage(("bad number for " + std::string(a) + ": " + v).c_str());
      }
      return d;
    };
    if (a == "--bootstrap") o.bootstrap = value();
    else if (a == "--in") o.inTopic = value();
    else if (a == "--out") o.outTopic = value();
    else if (a == "--rate") o.rate = number();
    else if (a == "--seconds") o.seconds = number();
    else if (a == "--warmup") o.warmup = number();
    else if (a == "--drain") o.drain = number();
    else if (a == "--size") o.size = static_cast<int>(number());
    else if (a == "--keys") o.keys = std::max(1, static_cast<int>(number()));
    else if (a == "--merchants") o.merchants = std::max(1, static_cast<int>(number()));
    else if (a == "--dup-ratio") o.dupRatio = number();
    else if (a == "--dup-distance") o.dupDistance = std::max(1, static_cast<int>(number()));
    else if (a == "--in2") o.in2Topic = value();
    else if (a == "--json") o.json = true;
    else if (a == "--floor") o.floor = true;
    else if (a == "--format") {
      std::string_view f = value();
      if (f != "json" && f != "avro") usage("--format is json or avro");
      o.avro = f == "avro";
    } else if (a == "--avro-schema") {
      std::printf("%s\n", kAvroSchema);
      std::exit(0);
    } else if (a == "--debug")
      o.debug = value();
    else if (a == "--help" || a == "-h") usage(nullptr);
    else usage(("unknown argument " + std::string(a)).c_str());
  }
  if (o.rate <= 0) usage("--rate must be positive");
  if (o.seconds <= 0) usage("--seconds must be positive");
  if (o.dupRatio >= 1) usage("--dup-ratio must be below 1");
  // A repeated event would have a repeated partner too, and a join would match
  // each copy with each: the expected output is then no longer one per event.
  if (o.dupRatio > 0 && !o.in2Topic.empty()) usage("--dup-ratio and --in2 do not combine");
  return o;
}

struct Shared {
  std::mutex mu;
  std::vector<int64_t> sentTs;  // expected back; strictly increasing, so sorted
  std::vector<int64_t> dupTs;   // repeats a deduplicating flow should drop; sorted
  std::atomic<bool> producing{true};
  std::atomic<int64_t> sent{0};
  std::atomic<int64_t> expected{0};  // sentTs.size(), readable without the lock
  std::atomic<int64_t> deliveryErrors{0};
};

void deliveryReport(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    static_cast<Shared*>(opaque)->deliveryErrors.fetch_add(1);
  }
}

// Client settings shared by the floor and the flow runs, so that the ratio to
// the floor isolates what the flow adds. Both sides are tuned for latency: no
// linger on the producer, no fetch wait on the consumer.
bool setConf(rd_kafka_conf_t* conf, const char* key, const std::string& value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key, value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
    std::fprintf(stderr, "rtsql_latency: %s=%s: %s\n", key, value.c_str(), err);
    return false;
  }
  return true;
}

rd_kafka_t* makeClient(rd_kafka_type_t type, const Options& o, const std::string& group,
                       void* opaque = nullptr) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  bool ok = setConf(conf, "bootstrap.servers", o.bootstrap) &&
            setConf(conf, "client.id", "rtsql_latency") &&
            setConf(conf, "topic.metadata.refresh.interval.ms", "500") &&
            (o.debug.empty() || setConf(conf, "debug", o.debug));
  if (type == RD_KAFKA_PRODUCER) {
    ok = ok && setConf(conf, "linger.ms", "0") && setConf(conf, "acks", "1") &&
         setConf(conf, "enable.idempotence", "false") &&
         setConf(conf, "queue.buffering.max.messages", "1000000");
  } else {
    ok = ok && setConf(conf, "group.id", group) &&
         setConf(conf, "fetch.wait.max.ms", "1") && setConf(conf, "fetch.min.bytes", "1") &&
         setConf(conf, "fetch.error.backoff.ms", "10") &&
         setConf(conf, "enable.auto.commit", "false") &&
         setConf(conf, "auto.offset.reset", "earliest") &&
         setConf(conf, "enable.partition.eof", "false");
  }
  if (ok && opaque != nullptr) {
    rd_kafka_conf_set_dr_msg_cb(conf, deliveryReport);
    rd_kafka_conf_set_opaque(conf, opaque);
  }
  if (!ok) {
    rd_kafka_conf_destroy(conf);
    return nullptr;
  }
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
  if (rk == nullptr) {
    std::fprintf(stderr, "rtsql_latency: cannot create client: %s\n", err);
    rd_kafka_conf_destroy(conf);
  }
  return rk;
}

// Pulls the integer after `"ts_us":` out of a JSON record, allowing whitespace;
// the output's other fields are of no interest, so a full parse is not needed.
bool extractTsUs(const char* data, size_t len, int64_t* out) {
  std::string_view s(data, len);
  size_t at = s.find("\"ts_us\"");
  if (at == std::string_view::npos) return false;
  at += 7;
  while (at < s.size() && (s[at] == ' ' || s[at] == '\t')) ++at;
  if (at >= s.size() || s[at] != ':') return false;
  ++at;
  while (at < s.size() && (s[at] == ' ' || s[at] == '\t' || s[at] == '"')) ++at;
  int64_t v = 0;
  bool any = false;
  while (at < s.size() && s[at] >= '0' && s[at] <= '9') {
    v = v * 10 + (s[at] - '0');
    any = true;
    ++at;
  }
  if (!any) return false;
  *out = v;
  return true;
}

// Assigns every partition of `topic` to the consumer, from the beginning.
// Returns the number of partitions, 0 when the topic does not exist (yet), or
// -1 on an error.
int assignAll(rd_kafka_t* consumer, const std::string& topic) {
  rd_kafka_topic_t* t = rd_kafka_topic_new(consumer, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t e = rd_kafka_metadata(consumer, 0, t, &md, 5000);
  rd_kafka_topic_destroy(t);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    std::fprintf(stderr, "rtsql_latency: metadata of %s: %s\n", topic.c_str(), rd_kafka_err2str(e));
    return -1;
  }
  int n = 0;
  if (md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    n = md->topics[0].partition_cnt;
  }
  rd_kafka_metadata_destroy(md);
  if (n <= 0) return 0;
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(n);
  for (int p = 0; p < n; ++p) {
    rd_kafka_topic_partition_list_add(parts, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  e = rd_kafka_assign(consumer, parts);
  rd_kafka_topic_partition_list_destroy(parts);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    std::fprintf(stderr, "rtsql_latency: assign %s: %s\n", topic.c_str(), rd_kafka_err2str(e));
    return -1;
  }
  return n;
}

// The fields of one record are functions of its event: the event id decides the
// user, url, amount and merchant, so a repeat of an event is the same record
// apart from its stamp ts_us and its position seq. `ts` is the event time in
// epoch milliseconds with a fraction (microsecond exact), which a source reads
// as a TIMESTAMP for windows, watermarks and time-bounded joins.
std::string makeRecord(int64_t tsUs, int64_t seq, int64_t eventId, int64_t eventTsUs, int keys,
                       int merchants, int size) {
  char head[400];
  int userId = static_cast<int>(eventId % keys);
  // merchant_id is the join key of the broadcast-join benchmark: always within
  // 0..merchants-1, so every record finds its row in a table of that many
  // merchants and an inner join keeps every record. Scattered with a prime
  // stride so that consecutive records hit different rows.
  int merchantId = static_cast<int>((eventId * 7919) % merchants);
  // Amounts are always above 10, so a flow filtering `amount > 10` keeps every
  // record and the lost count stays exact.
  double amount = 10.5 + static_cast<double>(eventId % 1000) / 10.0;
  int n = std::snprintf(head, sizeof head,
                        "{\"ts_us\":%" PRId64 ",\"ts\":%" PRId64 ".%03d,\"seq\":%" PRId64
                        ",\"event_id\":%" PRId64
                        ",\"user_id\":\"user%d\",\"url\":\"https://example.com/p/%d\","
                        "\"amount\":%.2f,\"merchant_id\":%d,\"pad\":\"",
                        tsUs, eventTsUs / 1000, static_cast<int>(eventTsUs % 1000), seq, eventId,
                        userId, static_cast<int>(eventId % 97), amount, merchantId);
  std::string rec(head, static_cast<size_t>(n));
  int pad = size - n - 2;
  if (pad > 0) rec.append(static_cast<size_t>(pad), 'x');
  rec += "\"}";
  return rec;
}

// The same record as an Avro datum of kAvroSchema: ts_us first, so that the
// floor reads it back from the first varint. `pad` fills the datum to `size`
// bytes, as the JSON record's, so both formats cost the broker the same.
void putLong(std::string& out, int64_t v) {
  uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  do {
    uint8_t b = z & 0x7f;
    z >>= 7;
    out += static_cast<char>(z ? b | 0x80 : b);
  } while (z);
}

void putString(std::string& out, std::string_view s) {
  putLong(out, static_cast<int64_t>(s.size()));
  out.append(s);
}

std::string makeAvroRecord(int64_t tsUs, int64_t seq, int64_t eventId, int64_t eventTsUs, int keys,
                           int merchants, int size) {
  std::string rec;
  putLong(rec, tsUs);
  putLong(rec, eventTsUs);
  putLong(rec, seq);
  putLong(rec, eventId);
  putString(rec, "user" + std::to_string(eventId % keys));
  putString(rec, "https://example.com/p/" + std::to_string(eventId % 97));
  const double amount = 10.5 + static_cast<double>(eventId % 1000) / 10.0;
  char bytes[8];
  std::memcpy(bytes, &amount, 8);  // little-endian IEEE 754, as Avro's double
  rec.append(bytes, 8);
  putLong(rec, (eventId * 7919) % merchants);
  // The pad's length varint takes 1 byte below 64 bytes of pad, 2 below 8192.
  int64_t pad = static_cast<int64_t>(size) - static_cast<int64_t>(rec.size()) - 1;
  if (pad >= 64) --pad;
  putString(rec, std::string(static_cast<size_t>(std::max<int64_t>(pad, 0)), 'x'));
  return rec;
}

// Reads ts_us, the first field of an Avro record of kAvroSchema.
bool extractAvroTsUs(const char* data, size_t len, int64_t* out) {
  uint64_t z = 0;
  for (size_t i = 0; i < len && i < 10; ++i) {
    const auto b = static_cast<uint8_t>(data[i]);
    z |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *out = static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
      return true;
    }
  }
  return false;
}

// A fixed, well-mixed function of the record index (splitmix64's finaliser), so
// that which records are repeats, and of what, is the same in every run.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  // Nearest-rank: the smallest value with at least p% of the values at or below it.
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  if (rank == 0) rank = 1;
  return static_cast<double>(sorted[std::min(rank, sorted.size()) - 1]) / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parseArgs(argc, argv);
  const std::string readTopic = o.floor ? o.inTopic : o.outTopic;

  Shared shared;
  rd_kafka_t* consumer =
      makeClient(RD_KAFKA_CONSUMER, o, "rtsql_latency_" + std::to_string(rtsql::nowMicros()));
  if (consumer == nullptr) return 1;
  rd_kafka_poll_set_consumer(consumer);

  // A run ignores every record sent before it started, so the same topics can
  // serve several runs in a row (1,000 rec/s, then 10,000 rec/s).
  const int64_t runStartUs = rtsql::nowMicros();
  // When the topic exists, the consumer assigns itself all its partitions from
  // the beginning: no consumer group, so no rebalance to wait for (the embedded
  // broker's group coordinator sometimes left a join unanswered for minutes),
  // and nothing produced after this point can be skipped. A topic that does
  // not exist yet is subscribed to instead and picked up once it appears.
  const int assigned = assignAll(consumer, readTopic);
  if (assigned < 0) return 1;
  if (assigned == 0) {
    rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(topics, readTopic.c_str(), RD_KAFKA_PARTITION_UA);
    if (rd_kafka_resp_err_t e = rd_kafka_subscribe(consumer, topics); e) {
      std::fprintf(stderr, "rtsql_latency: subscribe %s: %s\n", readTopic.c_str(),
                   rd_kafka_err2str(e));
      return 1;
    }
    rd_kafka_topic_partition_list_destroy(topics);
  }

  // Wait (bounded) for the partitions to be assigned (at once after assign, by
  // the group after subscribe), so the consumer is fetching before the first
  // record is sent.
  {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer, 100)) {
        rd_kafka_message_destroy(m);
      }
      rd_kafka_topic_partition_list_t* assigned = nullptr;
      if (rd_kafka_assignment(consumer, &assigned) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        int n = assigned->cnt;
        rd_kafka_topic_partition_list_destroy(assigned);
        if (n > 0) break;
      }
    }
  }

  std::vector<int64_t> latencies;
  // (ts_us, receive time) of every record of this run that came back.
  std::vector<std::pair<int64_t, int64_t>> received;
  int64_t foreign = 0;
  // The warm-up is timed from the first record sent, not from the start of the
  // program, so the wait for the consumer group does not eat into it.
  std::atomic<int64_t> warmupEndUs{INT64_MAX};

  std::thread producerThread([&] {
    rd_kafka_t* producer = makeClient(RD_KAFKA_PRODUCER, o, "", &shared);
    if (producer == nullptr) {
      shared.producing = false;
      return;
    }
    const auto total = static_cast<int64_t>((o.warmup + o.seconds) * o.rate);
    const auto period = std::chrono::nanoseconds(static_cast<int64_t>(1e9 / o.rate));
    const auto start = std::chrono::steady_clock::now();
    warmupEndUs = rtsql::nowMicros() + static_cast<int64_t>(o.warmup * 1e6);
    int64_t lastTs = 0;
    // The last originals (event id, event time), for repeats to copy.
    std::vector<std::pair<int64_t, int64_t>> recent(static_cast<size_t>(o.dupDistance));
    int64_t originals = 0;
    const bool pairs = !o.in2Topic.empty() && !o.floor;
    auto send = [&](const std::string& topic, const std::string& key, const std::string& rec) {
      rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR_NO_ERROR;
      for (int attempt = 0; attempt < 100; ++attempt) {
        e = rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(topic.c_str()),
                              RD_KAFKA_V_KEY(key.data(), key.size()),
                              // F_COPY: librdkafka copies the bytes and never writes them.
                              RD_KAFKA_V_VALUE(const_cast<char*>(rec.data()), rec.size()),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) break;
        rd_kafka_poll(producer, 10);
      }
      return e == RD_KAFKA_RESP_ERR_NO_ERROR;
    };
    auto encode = [&](int64_t tsUs, int64_t seq, int64_t eventId, int64_t eventTsUs) {
      return o.avro ? makeAvroRecord(tsUs, seq, eventId, eventTsUs, o.keys, o.merchants, o.size)
                    : makeRecord(tsUs, seq, eventId, eventTsUs, o.keys, o.merchants, o.size);
    };
    auto stamp = [&] {
      lastTs = std::max(rtsql::nowMicros(), lastTs + 1);
      return lastTs;
    };
    // Each record has an absolute due time start + i * period, so pacing does
    // not drift with the time spent sending; a late record is sent at once.
    for (int64_t i = 0; i < total; ++i) {
      std::this_thread::sleep_until(start + i * period);
      const uint64_t h = mix(static_cast<uint64_t>(i));
      const bool repeat = originals > 0 && o.dupRatio > 0 &&
                          static_cast<double>(h >> 11) * 0x1.0p-53 < o.dupRatio;
      int64_t eventId = i;
      int64_t eventTs = 0;
      if (repeat) {
        const int64_t back =
            1 + static_cast<int64_t>(mix(h) % static_cast<uint64_t>(
                                                  std::min<int64_t>(originals, o.dupDistance)));
        const auto& ev = recent[static_cast<size_t>((originals - back) % o.dupDistance)];
        eventId = ev.first;
        eventTs = ev.second;
      }
      const std::string key = "user" + std::to_string(eventId % o.keys);
      if (pairs) {
        const int64_t ts2 = stamp();
        if (!send(o.in2Topic, key, encode(ts2, i, eventId, repeat ? eventTs : ts2))) {
          shared.deliveryErrors.fetch_add(1);
        }
      }
      const int64_t ts = stamp();
      if (!repeat) {
        eventTs = ts;
        recent[static_cast<size_t>(originals % o.dupDistance)] = {eventId, eventTs};
        ++originals;
      }
      if (send(o.inTopic, key, encode(ts, i, eventId, eventTs))) {
        std::lock_guard<std::mutex> lock(shared.mu);
        // Without a flow (the floor) every record comes back, repeats included.
        if (repeat && !o.floor) {
          shared.dupTs.push_back(ts);
        } else {
          shared.sentTs.push_back(ts);
          shared.expected.fetch_add(1);
        }
        shared.sent.fetch_add(1);
      } else {
        shared.deliveryErrors.fetch_add(1);
      }
      rd_kafka_poll(producer, 0);
    }
    rd_kafka_flush(producer, 10000);
    rd_kafka_destroy(producer);
    shared.producing = false;
  });

  // The consumer runs on this thread until the producer is done and then for at
  // most --drain seconds more, or until every sent record came back.
  std::chrono::steady_clock::time_point drainDeadline{};
  bool draining = false;
  for (;;) {
    if (!shared.producing.load()) {
      if (!draining) {
        draining = true;
        drainDeadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(o.drain * 1000));
      }
      if (static_cast<int64_t>(received.size()) >= shared.expected.load() ||
          std::chrono::steady_clock::now() >= drainDeadline) {
        break;
      }
    }
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer, 50);
    if (m == nullptr) continue;
    int64_t nowUs = rtsql::nowMicros();
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      int64_t ts = 0;
      // The floor reads the input records; a flow's output is JSON.
      const bool avroIn = o.avro && o.floor;
      const auto* payload = static_cast<const char*>(m->payload);
      if ((avroIn ? extractAvroTsUs(payload, m->len, &ts) : extractTsUs(payload, m->len, &ts)) &&
          ts >= runStartUs) {
        received.emplace_back(ts, nowUs);
      } else {
        ++foreign;
      }
    } else if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      std::fprintf(stderr, "rtsql_latency: consume: %s\n", rd_kafka_message_errstr(m));
    }
    rd_kafka_message_destroy(m);
  }
  producerThread.join();
  rd_kafka_consumer_close(consumer);
  rd_kafka_destroy(consumer);

  // Received records are matched against sent ones by ts_us (unique per record),
  // which separates the lost from the duplicated, from repeats a deduplicating
  // flow let through and from strangers. Only the first receipt of an expected
  // record enters the histogram.
  std::sort(received.begin(), received.end());
  int64_t matched = 0, duplicates = 0, unknown = 0, dupPassed = 0;
  const int64_t warmupEnd = warmupEndUs.load();
  for (size_t i = 0; i < received.size(); ++i) {
    const int64_t ts = received[i].first;
    if (i > 0 && ts == received[i - 1].first) {
      ++duplicates;
      continue;
    }
    if (std::binary_search(shared.sentTs.begin(), shared.sentTs.end(), ts)) {
      ++matched;
      if (ts >= warmupEnd) latencies.push_back(received[i].second - ts);
    } else if (std::binary_search(shared.dupTs.begin(), shared.dupTs.end(), ts)) {
      ++dupPassed;
    } else {
      ++unknown;
    }
  }
  const int64_t sent = shared.sent.load();
  const auto expected = static_cast<int64_t>(shared.sentTs.size());
  const auto dupSent = static_cast<int64_t>(shared.dupTs.size());
  const int64_t lost = expected - matched;
  std::sort(latencies.begin(), latencies.end());
  const double ps[] = {0, 50, 90, 95, 99};
  const char* names[] = {"P0", "P50", "P90", "P95", "P99"};
  double values[5];
  values[0] = latencies.empty() ? 0 : static_cast<double>(latencies.front()) / 1000.0;
  for (int i = 1; i < 5; ++i) values[i] = percentile(latencies, ps[i]);
  double maxMs = latencies.empty() ? 0 : static_cast<double>(latencies.back()) / 1000.0;

  if (o.json) {
    std::printf("{\"mode\":\"%s\",\"rate\":%.0f,\"seconds\":%.1f,\"warmup\":%.1f,\"size\":%d,"
                "\"keys\":%d,\"merchants\":%d,\"dupRatio\":%.3f,\"pairs\":%s,\"sent\":%" PRId64
                ",\"expected\":%" PRId64 ",\"received\":%" PRId64 ",\"lost\":%" PRId64
                ",\"duplicates\":%" PRId64 ",\"repeatsSent\":%" PRId64
                ",\"repeatsPassed\":%" PRId64 ",\"unknown\":%" PRId64
                ",\"deliveryErrors\":%" PRId64 ",\"measured\":%zu,\"latencyMs\":{",
                o.floor ? "floor" : "flow", o.rate, o.seconds, o.warmup, o.size, o.keys,
                o.merchants, o.dupRatio, o.in2Topic.empty() || o.floor ? "false" : "true", sent,
                expected, matched, lost, duplicates, dupSent, dupPassed, unknown,
                shared.deliveryErrors.load(), latencies.size());
    for (int i = 0; i < 5; ++i) std::printf("\"%s\":%.3f,", names[i], values[i]);
    std::printf("\"max\":%.3f}}\n", maxMs);
  } else {
    std::printf("mode        %s\n", o.floor ? "floor (broker only)" : "flow");
    std::printf("rate        %.0f rec/s for %.1f s after %.1f s warm-up, %d-byte records\n",
                o.rate, o.seconds, o.warmup, o.size);
    std::printf("sent        %" PRId64 "\nexpected    %" PRId64 "\nreceived    %" PRId64
                "\nlost        %" PRId64 "\nduplicates  %" PRId64 "\n",
                sent, expected, matched, lost, duplicates);
    if (dupSent > 0) {
      std::printf("repeats     %" PRId64 " sent, %" PRId64 " passed\n", dupSent, dupPassed);
    }
    if (unknown + foreign > 0) {
      std::printf("ignored     %" PRId64 " (not sent by this run)\n", unknown + foreign);
    }
    std::printf("latency ms  (%zu measured)\n", latencies.size());
    for (int i = 0; i < 5; ++i) std::printf("  %-4s %10.3f\n", names[i], values[i]);
    std::printf("  %-4s %10.3f\n", "max", maxMs);
  }
  return matched > 0 ? 0 : 1;
}
