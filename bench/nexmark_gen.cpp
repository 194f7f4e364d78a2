// rtsql_nexmark_gen: the Nexmark event generator of the benchmarks.
//
// Produces the three Nexmark streams, Person, Auction and Bid, in the standard
// 1:3:46 proportion, as JSON records into the topics <prefix>person,
// <prefix>auction and <prefix>bid, and optionally the same records as JSON lines
// files (person.jsonl, auction.jsonl, bid.jsonl) for the batch reference.
//
// Event number n (0-based) decides everything about event n: its kind (n mod 50),
// its ids, and a pseudo-random generator seeded with n (mixed with --seed) from
// which every other field is drawn, with the distributions of the reference
// Nexmark generator: person and auction ids that grow with n, sellers and
// bidders among the recent persons with one hot seller/bidder per 100 persons,
// bids on recent auctions with one hot auction per 100 auctions, prices
// 10^U(0,6) * 100 cents, 5 categories from 10, auctions expiring within twice
// the time 100 in-flight auctions take. The output is therefore identical for
// the same --seed, --events, --event-rate and --base-time, whatever the pacing.
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

namespace {

// Proportions and shape of the reference generator.
constexpr int64_t kPersonProportion = 1;
constexpr int64_t kAuctionProportion = 3;
constexpr int64_t kBidProportion = 46;
constexpr int64_t kTotalProportion = kPersonProportion + kAuctionProportion + kBidProportion;
constexpr int64_t kFirstPersonId = 1000;
constexpr int64_t kFirstAuctionId = 1000;
constexpr int64_t kFirstCategoryId = 10;
constexpr int64_t kNumCategories = 5;
constexpr int64_t kNumActivePeople = 1000;
constexpr int64_t kNumInFlightAuctions = 100;
constexpr int64_t kPersonIdLead = 10;
constexpr int64_t kAuctionIdLead = 10;
constexpr int kHotAuctionRatio = 100;
constexpr int kHotSellerRatio = 100;
constexpr int kHotBidderRatio = 100;
constexpr int kHotChannelsRatio = 2;
constexpr int kChannelsNumber = 10000;
constexpr int kAvgPersonBytes = 200;
constexpr int kAvgAuctionBytes = 500;
constexpr int kAvgBidBytes = 100;

constexpr std::array<const char*, 11> kFirstNames = {"Peter", "Paul",  "Luke",  "John",
                                                     "Saul",  "Vicky", "Kate",  "Julie",
                                                     "Sarah", "Deiter", "Walter"};
constexpr std::array<const char*, 9> kLastNames = {"Shultz",  "Abrams", "Spencer",
                                                   "White",   "Bartels", "Walton",
                                                   "Smith",   "Jones",  "Noris"};
constexpr std::array<const char*, 6> kStates = {"AZ", "CA", "ID", "OR", "WA", "WY"};
constexpr std::array<const char*, 10> kCities = {"Phoenix",  "Los Angeles", "San Francisco",
                                                 "Boise",    "Portland",    "Bend",
                                                 "Redmond",  "Seattle",     "Kent",
                                                 "Cheyenne"};
constexpr std::array<const char*, 4> kHotChannels = {"Google", "Facebook", "Baidu", "Apple"};

// The 48-bit linear congruential generator of java.util.Random, so that with
// --seed 0 each event's draws follow the same sequence as the reference
// generator's `new Random(eventId)`.
class JavaRandom {
 public:
  explicit JavaRandom(int64_t seed)
      : seed_((static_cast<uint64_t>(seed) ^ kMultiplier) & kMask) {}

  int32_t nextInt(int32_t bound) {
    int32_t r = next(31);
    const int32_t m = bound - 1;
    if ((bound & m) == 0) {
      return static_cast<int32_t>((static_cast<int64_t>(bound) * r) >> 31);
    }
    for (int32_t u = r; u - (r = u % bound) + m < 0; u = next(31)) {
    }
    return r;
  }
  int64_t nextLong() {
    const int64_t hi = static_cast<int64_t>(next(32));
    const int64_t lo = static_cast<int64_t>(next(32));
    return static_cast<int64_t>(static_cast<uint64_t>(hi) << 32) + lo;
  }
  double nextDouble() {
    const int64_t hi = next(26);
    const int64_t lo = next(27);
    return static_cast<double>((hi << 27) + lo) * 0x1.0p-53;
  }
  // A long in [0, n), as the reference generator draws ids.
  int64_t nextLong(int64_t n) {
    if (n <= 0) return 0;
    if (n < INT32_MAX) return nextInt(static_cast<int32_t>(n));
    const int64_t v = nextLong() % n;
    return v < 0 ? -v : v;
  }

 private:
  static constexpr uint64_t kMultiplier = 0x5DEECE66DULL;
  static constexpr uint64_t kMask = (1ULL << 48) - 1;

  int32_t next(int bits) {
    seed_ = (seed_ * kMultiplier + 0xBULL) & kMask;
    return static_cast<int32_t>(static_cast<int64_t>(seed_ >> (48 - bits)));
  }

  uint64_t seed_;
};

int64_t lastBase0PersonId(int64_t eventId) {
  const int64_t epoch = eventId / kTotalProportion;
  int64_t offset = eventId % kTotalProportion;
  if (offset >= kPersonProportion) offset = kPersonProportion - 1;
  return epoch * kPersonProportion + offset;
}

int64_t lastBase0AuctionId(int64_t eventId) {
  int64_t epoch = eventId / kTotalProportion;
  int64_t offset = eventId % kTotalProportion;
  if (offset < kPersonProportion) {
    // A person event: the last auction is the last one of the previous epoch.
    --epoch;
    offset = kAuctionProportion - 1;
  } else if (offset >= kPersonProportion + kAuctionProportion) {
    offset = kAuctionProportion - 1;
  } else {
    offset -= kPersonProportion;
  }
  return epoch * kAuctionProportion + offset;
}

// A person among the active (most recent) ones, with a small lead into persons
// not created yet, as the reference does.
int64_t nextBase0PersonId(int64_t eventId, JavaRandom& r) {
  const int64_t numPeople = lastBase0PersonId(eventId) + 1;
  const int64_t active = std::min(numPeople, kNumActivePeople);
  const int64_t n = r.nextLong(active + kPersonIdLead);
  return numPeople - active + n;
}

int64_t nextBase0AuctionId(int64_t eventId, JavaRandom& r) {
  const int64_t maxAuction = lastBase0AuctionId(eventId);
  const int64_t minAuction = std::max<int64_t>(maxAuction - kNumInFlightAuctions, 0);
  return minAuction + r.nextLong(maxAuction - minAuction + 1 + kAuctionIdLead);
}

// Letters with an occasional `special` character, 3 to maxLength - 1 long, trimmed.
std::string nextString(JavaRandom& r, int maxLength, char special = ' ') {
  int len = 3 + r.nextInt(maxLength - 3);
  std::string s;
  s.reserve(static_cast<size_t>(len));
  while (len-- > 0) {
    if (r.nextInt(13) == 0) {
      s.push_back(special);
    } else {
      s.push_back(static_cast<char>('a' + r.nextInt(26)));
    }
  }
  const auto b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

std::string nextExactString(JavaRandom& r, int length) {
  std::string s;
  s.reserve(static_cast<size_t>(length));
  for (int i = 0; i < length; ++i) s.push_back(static_cast<char>('a' + r.nextInt(26)));
  return s;
}

// Padding that brings the record to about `average` bytes (within 20%).
std::string nextExtra(JavaRandom& r, int currentSize, int average) {
  if (currentSize > average) return "";
  const int desired = average - currentSize;
  const int delta = static_cast<int>(std::lround(desired * 0.2));
  const int size = desired - delta + (delta == 0 ? 0 : r.nextInt(2 * delta));
  return nextExactString(r, size);
}

// Cents, log-uniform between 1.00 and 1,000,000.00.
int64_t nextPrice(JavaRandom& r) {
  return std::llround(std::pow(10.0, r.nextDouble() * 6.0) * 100.0);
}

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

class EventTime {
 public:
  EventTime(int64_t baseMs, double rate) : baseUs_(baseMs * 1000), delayUs_(1e6 / rate) {}
  // Event time of event n, in milliseconds (Nexmark's resolution).
  int64_t ms(int64_t n) const {
    return (baseUs_ + static_cast<int64_t>(std::floor(static_cast<double>(n) * delayUs_))) /
           1000;
  }

 private:
  int64_t baseUs_;
  double delayUs_;
};

void appendEscaped(std::string& out, std::string_view s) {
  out.push_back('"');
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
}

// "2024-05-01 10:00:00.123" (UTC), a form rtsql's JSON decoder reads as TIMESTAMP.
void appendTime(std::string& out, int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];  // room for any int the format could print, to keep -Wformat quiet
  std::snprintf(buf, sizeof buf, "\"%04d-%02d-%02d %02d:%02d:%02d.%03d\"", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms - static_cast<int64_t>(secs) * 1000));
  out += buf;
}

void appendField(std::string& out, const char* name) {
  out += out.size() > 1 ? ",\"" : "\"";
  out += name;
  out += "\":";
}

enum Kind { kPerson = 0, kAuction = 1, kBid = 2 };

struct Event {
  Kind kind;
  std::string key;
  std::string json;
};

Event makeEvent(int64_t n, const Config& cfg, const EventTime& clock) {
  const uint64_t mix = static_cast<uint64_t>(cfg.seed) * 0x9E3779B97F4A7C15ULL;
  JavaRandom r(static_cast<int64_t>(static_cast<uint64_t>(n) ^ mix));
  const int64_t ts = clock.ms(n);
  const int64_t rem = n % kTotalProportion;
  Event e;
  std::string& o = e.json;
  o.reserve(256);
  o.push_back('{');
  if (rem < kPersonProportion) {
    e.kind = kPerson;
    const int64_t id = lastBase0PersonId(n) + kFirstPersonId;
    std::string name = kFirstNames[static_cast<size_t>(r.nextInt(kFirstNames.size()))];
    name += ' ';
    name += kLastNames[static_cast<size_t>(r.nextInt(kLastNames.size()))];
    std::string email = nextString(r, 7) + "@" + nextString(r, 5) + ".com";
    std::string card;
    for (int i = 0; i < 4; ++i) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "%s%04d", i ? " " : "", r.nextInt(10000));
      card += buf;
    }
    const char* city = kCities[static_cast<size_t>(r.nextInt(kCities.size()))];
    const char* state = kStates[static_cast<size_t>(r.nextInt(kStates.size()))];
    const int size = static_cast<int>(8 + name.size() + email.size() + card.size() +
                                      std::strlen(city) + std::strlen(state));
    const std::string extra = nextExtra(r, size, kAvgPersonBytes);
    e.key = std::to_string(id);
    appendField(o, "id"); o += e.key;
    appendField(o, "name"); appendEscaped(o, name);
    appendField(o, "email_address"); appendEscaped(o, email);
    appendField(o, "credit_card"); appendEscaped(o, card);
    appendField(o, "city"); appendEscaped(o, city);
    appendField(o, "state"); appendEscaped(o, state);
    appendField(o, "date_time"); appendTime(o, ts);
    appendField(o, "extra"); appendEscaped(o, extra);
  } else if (rem < kPersonProportion + kAuctionProportion) {
    e.kind = kAuction;
    const int64_t id = lastBase0AuctionId(n) + kFirstAuctionId;
    int64_t seller;
    if (r.nextInt(kHotSellerRatio) > 0) {
      seller = (lastBase0PersonId(n) / kHotSellerRatio) * kHotSellerRatio;
    } else {
      seller = nextBase0PersonId(n, r);
    }
    seller += kFirstPersonId;
    const int64_t category = kFirstCategoryId + r.nextInt(kNumCategories);
    const int64_t initialBid = nextPrice(r);
    // The auction lasts up to twice the event time that kNumInFlightAuctions
    // auctions take to be created.
    const int64_t ahead = (kNumInFlightAuctions * kTotalProportion) / kAuctionProportion;
    const int64_t horizonMs = clock.ms(n + ahead) - ts;
    const int64_t expires = ts + 1 + r.nextLong(std::max<int64_t>(horizonMs * 2, 1));
    const std::string itemName = nextString(r, 20);
    const std::string description = nextString(r, 100);
    const int64_t reserve = initialBid + nextPrice(r);
    const int size = static_cast<int>(8 + itemName.size() + description.size() + 40);
    const std::string extra = nextExtra(r, size, kAvgAuctionBytes);
    e.key = std::to_string(id);
    appendField(o, "id"); o += e.key;
    appendField(o, "item_name"); appendEscaped(o, itemName);
    appendField(o, "description"); appendEscaped(o, description);
    appendField(o, "initial_bid"); o += std::to_string(initialBid);
    appendField(o, "reserve"); o += std::to_string(reserve);
    appendField(o, "date_time"); appendTime(o, ts);
    appendField(o, "expires"); appendTime(o, expires);
    appendField(o, "seller"); o += std::to_string(seller);
    appendField(o, "category"); o += std::to_string(category);
    appendField(o, "extra"); appendEscaped(o, extra);
  } else {
    e.kind = kBid;
    int64_t auction;
    if (r.nextInt(kHotAuctionRatio) > 0) {
      auction = (lastBase0AuctionId(n) / kHotAuctionRatio) * kHotAuctionRatio;
    } else {
      auction = nextBase0AuctionId(n, r);
    }
    auction += kFirstAuctionId;
    int64_t bidder;
    if (r.nextInt(kHotBidderRatio) > 0) {
      bidder = (lastBase0PersonId(n) / kHotBidderRatio) * kHotBidderRatio + 1;
    } else {
      bidder = nextBase0PersonId(n, r);
    }
    bidder += kFirstPersonId;
    const int64_t price = nextPrice(r);
    std::string channel;
    std::string url = "https://www.nexmark.com/";
    url += nextString(r, 5, '_') + "/" + nextString(r, 5, '_') + "/" + nextString(r, 5, '_') +
           "/item.htm?query=1";
    if (r.nextInt(kHotChannelsRatio) > 0) {
      channel = kHotChannels[static_cast<size_t>(r.nextInt(kHotChannels.size()))];
    } else {
      const int ch = r.nextInt(kChannelsNumber);
      channel = "channel-" + std::to_string(ch);
      url += "&channel_id=" + std::to_string(ch);
    }
    const std::string extra = nextExtra(r, 32, kAvgBidBytes);
    e.key = std::to_string(auction);
    appendField(o, "auction"); o += e.key;
    appendField(o, "bidder"); o += std::to_string(bidder);
    appendField(o, "price"); o += std::to_string(price);
    appendField(o, "channel"); appendEscaped(o, channel);
    appendField(o, "url"); appendEscaped(o, url);
    appendField(o, "date_time"); appendTime(o, ts);
    appendField(o, "extra"); appendEscaped(o, extra);
  }
  o.push_back('}');
  return e;
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
  const EventTime clock(baseMs, eventRate);

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

  std::array<int64_t, 3> counts{};
  std::array<int64_t, 3> bytes{};
  const auto start = std::chrono::steady_clock::now();
  for (int64_t n = 0; n < cfg.events; ++n) {
    if (cfg.rate > 0) {
      // Event n is due at start + n / rate, an absolute time: sending slowly
      // does not make the rate drift, a late event goes at once.
      const auto due = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   std::chrono::duration<double>(static_cast<double>(n) / cfg.rate));
      if (due > std::chrono::steady_clock::now()) std::this_thread::sleep_until(due);
    }
    Event e = makeEvent(n, cfg, clock);
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
    std::printf(
        "{\"events\":%" PRId64 ",\"persons\":%" PRId64 ",\"auctions\":%" PRId64
        ",\"bids\":%" PRId64 ",\"bytes\":%" PRId64 ",\"seconds\":%.3f,\"eventsPerSecond\":%.0f,"
        "\"baseTimeMs\":%" PRId64 ",\"lastEventTimeMs\":%" PRId64 ",\"eventRate\":%.0f}\n",
        cfg.events, counts[0], counts[1], counts[2], bytes[0] + bytes[1] + bytes[2], secs,
        secs > 0 ? static_cast<double>(cfg.events) / secs : 0.0, baseMs,
        clock.ms(std::max<int64_t>(cfg.events - 1, 0)), eventRate);
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
