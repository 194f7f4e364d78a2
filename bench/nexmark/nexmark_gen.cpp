// rtsql_nexmark_gen: the Nexmark event generator of the benchmarks.
//
// Produces the three Nexmark streams, Person, Auction and Bid, in the standard
// 1:3:46 proportion, as JSON records into the topics <prefix>person,
// <prefix>auction and <prefix>bid, and optionally the same records as JSON lines
// files (person.jsonl, auction.jsonl, bid.jsonl) for the batch reference.
//
// The events are those of the Nexmark generator (connectors/nexmark/generator.h),
// the one the `nexmark` source of rtsqld makes in the server: the output is
// identical for the same --seed, --events, --event-rate and --base-time,
// whatever the pacing.
//
// date_time is the event time: base + n / event-rate seconds. Records carry the
// wall-clock time they are sent as their Kafka timestamp, so a flow's e2e latency
// (sink write minus Kafka timestamp) means what it says.
#include <librdkafka/rdkafka.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "connectors/nexmark/generator.h"

namespace {

using rtsql::nexmark::EventKind;

struct Config {
  std::string bootstrap = "127.0.0.1:9092";
  std::string prefix;
  int64_t events = 100000;
  double rate = 0;        // events per second sent; 0 = as fast as possible
  double eventRate = 0;   // events per second of event time; 0 = rate, or 10,000
  int64_t seed = 0;
  int partitions = 0;     // 0 = leave topics as the broker makes them
  int64_t baseTimeMs = -1;  // event time of event 0; -1 = now
  std::string files;
  bool noKafka = false;
  bool quiet = false;
};

struct Event {
  EventKind kind;
  std::string key;
  std::string json;
};

// Event n as the JSON record the topics and files get.
void makeEvent(int64_t n, const rtsql::nexmark::Generator& gen, Event& e,
               rtsql::nexmark::Person& person, rtsql::nexmark::Auction& auction,
               rtsql::nexmark::Bid& bid) {
  e.kind = rtsql::nexmark::kindOf(n);
  switch (e.kind) {
    case EventKind::Person:
      gen.person(n, person);
      rtsql::nexmark::toJson(person, e.json, e.key);
      break;
    case EventKind::Auction:
      gen.auction(n, auction);
      rtsql::nexmark::toJson(auction, e.json, e.key);
      break;
    case EventKind::Bid:
      gen.bid(n, bid);
      rtsql::nexmark::toJson(bid, e.json, e.key);
      break;
  }
}

struct Delivery {
  int64_t errors = 0;
  char firstError[256] = {0};
};

void onDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    auto* d = static_cast<Delivery*>(opaque);
    if (d->errors++ == 0) {
      std::snprintf(d->firstError, sizeof d->firstError, "%s", rd_kafka_err2str(m->err));
    }
  }
}

bool setConf(rd_kafka_conf_t* conf, const char* key, const std::string& value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key, value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
    std::fprintf(stderr, "rtsql_nexmark_gen: %s=%s: %s\n", key, value.c_str(), err);
    return false;
  }
  return true;
}

// Creates the topics with `partitions` partitions through the admin API.
// A broker without CreateTopics (rtsqld's embedded one creates topics on first
// use, with its own partition count) or a topic that exists is reported, not fatal.
void createTopics(rd_kafka_t* rk, const std::vector<std::string>& topics, int partitions) {
  std::vector<rd_kafka_NewTopic_t*> news;
  char err[512];
  for (const auto& t : topics) {
    rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(t.c_str(), partitions, -1, err, sizeof err);
    if (nt != nullptr) news.push_back(nt);
  }
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_operation_timeout(opts, 10000, err, sizeof err);
  rd_kafka_AdminOptions_set_request_timeout(opts, 10000, err, sizeof err);
  rd_kafka_CreateTopics(rk, news.data(), news.size(), opts, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 15000);
  if (ev == nullptr) {
    std::fprintf(stderr, "rtsql_nexmark_gen: CreateTopics: no answer in 15 s\n");
  } else if (rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    std::fprintf(stderr, "rtsql_nexmark_gen: CreateTopics: %s (topics are created on use)\n",
                 rd_kafka_event_error_string(ev));
  } else if (const rd_kafka_CreateTopics_result_t* res = rd_kafka_event_CreateTopics_result(ev)) {
    size_t n = 0;
    const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(res, &n);
    for (size_t i = 0; i < n; ++i) {
      if (rd_kafka_topic_result_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        std::fprintf(stderr, "rtsql_nexmark_gen: topic %s: %s\n",
                     rd_kafka_topic_result_name(results[i]),
                     rd_kafka_topic_result_error_string(results[i]));
      }
    }
  }
  if (ev != nullptr) rd_kafka_event_destroy(ev);
  rd_kafka_AdminOptions_destroy(opts);
  rd_kafka_queue_destroy(q);
  for (auto* nt : news) rd_kafka_NewTopic_destroy(nt);
}

int run(const Config& cfg) {
  const std::array<std::string, 3> topics = {cfg.prefix + "person", cfg.prefix + "auction",
                                             cfg.prefix + "bid"};
  const double eventRate = cfg.eventRate > 0 ? cfg.eventRate : (cfg.rate > 0 ? cfg.rate : 10000);
  const int64_t baseMs = cfg.baseTimeMs >= 0 ? cfg.baseTimeMs : rtsql::nowMicros() / 1000;
  const rtsql::nexmark::Generator gen({cfg.seed, baseMs, eventRate});

  std::array<std::ofstream, 3> files;
  if (!cfg.files.empty()) {
    std::filesystem::create_directories(cfg.files);
    const std::array<const char*, 3> names = {"person.jsonl", "auction.jsonl", "bid.jsonl"};
    for (size_t i = 0; i < 3; ++i) {
      files[i].open(std::filesystem::path(cfg.files) / names[i], std::ios::trunc);
      if (!files[i]) {
        std::fprintf(stderr, "rtsql_nexmark_gen: cannot write %s/%s\n", cfg.files.c_str(),
                     names[i]);
        return 1;
      }
    }
  }

  rd_kafka_t* rk = nullptr;
  Delivery delivery;
  if (!cfg.noKafka) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    const bool paced = cfg.rate > 0;
    bool ok = setConf(conf, "bootstrap.servers", cfg.bootstrap) &&
              setConf(conf, "linger.ms", paced ? "1" : "5") &&
              setConf(conf, "acks", "1") &&
              setConf(conf, "queue.buffering.max.messages", "1000000") &&
              setConf(conf, "message.timeout.ms", "60000");
    if (!ok) return 2;
    rd_kafka_conf_set_opaque(conf, &delivery);
    rd_kafka_conf_set_dr_msg_cb(conf, onDelivery);
    char err[512];
    rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (rk == nullptr) {
      std::fprintf(stderr, "rtsql_nexmark_gen: %s\n", err);
      return 1;
    }
    if (cfg.partitions > 0) {
      createTopics(rk, {topics.begin(), topics.end()}, cfg.partitions);
    }
  }

  if (rk != nullptr && cfg.rate > 0) {
    // A paced run's latency counts from each send: learn the topics' leaders
    // first, so that the first events do not wait in the producer for them.
    for (const std::string& t : topics) {
      rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, t.c_str(), nullptr);
      const rd_kafka_metadata_t* md = nullptr;
      if (rd_kafka_metadata(rk, 0, rkt, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        rd_kafka_metadata_destroy(md);
      }
      rd_kafka_topic_destroy(rkt);
    }
  }

  std::array<int64_t, 3> counts{};
  std::array<int64_t, 3> bytes{};
  Event e;
  rtsql::nexmark::Person person;
  rtsql::nexmark::Auction auction;
  rtsql::nexmark::Bid bid;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t n = 0; n < cfg.events; ++n) {
    if (cfg.rate > 0) {
      // Event n is due at start + n / rate, an absolute time: sending slowly
      // does not make the rate drift, a late event goes at once.
      const auto due = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   std::chrono::duration<double>(static_cast<double>(n) / cfg.rate));
      if (due > std::chrono::steady_clock::now()) std::this_thread::sleep_until(due);
    }
    makeEvent(n, gen, e, person, auction, bid);
    const size_t k = static_cast<size_t>(e.kind);
    ++counts[k];
    bytes[k] += static_cast<int64_t>(e.json.size());
    if (!cfg.files.empty()) {
      files[k] << e.json << '\n';
    }
    if (rk != nullptr) {
      const int64_t sentMs = rtsql::nowMicros() / 1000;
      for (int attempt = 0;; ++attempt) {
        const rd_kafka_resp_err_t err = rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(topics[k].c_str()),
            RD_KAFKA_V_KEY(e.key.data(), e.key.size()),
            RD_KAFKA_V_VALUE(e.json.data(), e.json.size()),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(sentMs),
            RD_KAFKA_V_END);
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL || attempt >= 6000) {
          std::fprintf(stderr, "rtsql_nexmark_gen: produce to %s: %s\n", topics[k].c_str(),
                       rd_kafka_err2str(err));
          rd_kafka_destroy(rk);
          return 1;
        }
        rd_kafka_poll(rk, 10);  // a full queue: wait (at most a minute) for deliveries
      }
      rd_kafka_poll(rk, 0);
    }
  }
  for (auto& f : files) f.flush();
  int rc = 0;
  if (rk != nullptr) {
    if (rd_kafka_flush(rk, 60000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::fprintf(stderr, "rtsql_nexmark_gen: %d records not delivered in 60 s\n",
                   rd_kafka_outq_len(rk));
      rc = 1;
    }
    if (delivery.errors > 0) {
      std::fprintf(stderr, "rtsql_nexmark_gen: %" PRId64 " delivery errors (first: %s)\n",
                   delivery.errors, delivery.firstError);
      rc = 1;
    }
    rd_kafka_destroy(rk);
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!cfg.quiet) {
    std::printf("{\"events\":%" PRId64 ",\"persons\":%" PRId64 ",\"auctions\":%" PRId64
                ",\"bids\":%" PRId64 ",\"bytes\":%" PRId64
                ",\"seconds\":%.3f,\"eventsPerSecond\":%.0f,"
                "\"baseTimeMs\":%" PRId64 ",\"lastEventTimeMs\":%" PRId64 ",\"eventRate\":%.0f}\n",
                cfg.events, counts[0], counts[1], counts[2], bytes[0] + bytes[1] + bytes[2], secs,
                secs > 0 ? static_cast<double>(cfg.events) / secs : 0.0, baseMs,
                gen.eventTimeMs(std::max<int64_t>(cfg.events - 1, 0)), eventRate);
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  CLI::App app{"Nexmark event generator: Person, Auction and Bid records as JSON"};
  app.add_option("--bootstrap", cfg.bootstrap, "Kafka bootstrap servers")->capture_default_str();
  app.add_option("--prefix", cfg.prefix,
                 "topic name prefix: topics <prefix>person, <prefix>auction, <prefix>bid");
  app.add_option("--events", cfg.events, "total number of events")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--rate", cfg.rate, "events sent per second; 0 = as fast as possible")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--event-rate", cfg.eventRate,
                 "events per second of event time (date_time); default: --rate, or 10000")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", cfg.seed, "seed of the field values")->capture_default_str();
  app.add_option("--partitions", cfg.partitions,
                 "create the topics with this many partitions (brokers with CreateTopics)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--base-time", cfg.baseTimeMs,
                 "event time of the first event, epoch milliseconds; default: now");
  app.add_option("--files", cfg.files,
                 "also write person.jsonl, auction.jsonl and bid.jsonl into this directory");
  app.add_flag("--no-kafka", cfg.noKafka, "only write --files, produce nothing");
  app.add_flag("--quiet", cfg.quiet, "no summary line on stdout");
  CLI11_PARSE(app, argc, argv);
  if (cfg.noKafka && cfg.files.empty()) {
    std::fprintf(stderr, "rtsql_nexmark_gen: --no-kafka needs --files\n");
    return 2;
  }
  return run(cfg);
}
