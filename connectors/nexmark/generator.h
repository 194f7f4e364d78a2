// The Nexmark event generator: the three streams of the Nexmark benchmark
// (Person, Auction, Bid) as the Nexmark project defines them, used by the
// `nexmark` source (nexmark_source.h) and by bench/nexmark/nexmark_gen.cpp, which
// writes the same events to Kafka topics and JSON files. There is one
// generator so that the engine-only runs and the broker runs see the same data.
//
// Event number n (0-based) decides everything about event n: its kind
// (n mod 50: 1 person, 3 auctions, 46 bids), its ids, and a pseudo-random
// generator seeded with n (mixed with the seed) from which every other field
// is drawn, with the distributions of the reference generator: person and
// auction ids that grow with n, sellers and bidders among the recent persons
// with one hot seller/bidder per 100 persons, bids on recent auctions with one
// hot auction per 100 auctions, prices 10^U(0,6) * 100 cents, 5 categories from
// 10, auctions expiring within twice the time 100 in-flight auctions take.
// Any event can therefore be made on its own, in any order, by any thread: a
// reader that restarts at event n makes exactly the events it made before.
//
// date_time is the event time: base + n / event-rate seconds, in milliseconds
// (Nexmark's resolution).
#pragma once

#include <cstdint>
#include <string>

namespace rtsql::nexmark {

enum class EventKind { Person = 0, Auction = 1, Bid = 2 };

// Of every 50 events, 1 is a person, 3 are auctions and 46 are bids.
inline constexpr int64_t kPersonProportion = 1;
inline constexpr int64_t kAuctionProportion = 3;
inline constexpr int64_t kBidProportion = 46;
inline constexpr int64_t kTotalProportion = kPersonProportion + kAuctionProportion + kBidProportion;

inline EventKind kindOf(int64_t n) {
  const int64_t rem = n % kTotalProportion;
  if (rem < kPersonProportion) return EventKind::Person;
  if (rem < kPersonProportion + kAuctionProportion) return EventKind::Auction;
  return EventKind::Bid;
}

// How many of the events [0, n) are of `kind`.
int64_t countBefore(EventKind kind, int64_t n);

struct Person {
  int64_t id = 0;
  std::string name;
  std::string emailAddress;
  std::string creditCard;
  std::string city;
  std::string state;
  int64_t dateTimeMs = 0;
  std::string extra;
};

struct Auction {
  int64_t id = 0;
  std::string itemName;
  std::string description;
  int64_t initialBid = 0;
  int64_t reserve = 0;
  int64_t dateTimeMs = 0;
  int64_t expiresMs = 0;
  int64_t seller = 0;
  int64_t category = 0;
  std::string extra;
};

struct Bid {
  int64_t auction = 0;
  int64_t bidder = 0;
  int64_t price = 0;
  std::string channel;
  std::string url;
  int64_t dateTimeMs = 0;
  std::string extra;
};

struct GeneratorConfig {
  int64_t seed = 0;          // mixed into every event's random generator
  int64_t baseTimeMs = 0;    // event time of event 0, epoch milliseconds
  double eventRate = 10000;  // events per second of event time; > 0
};

class Generator {
 public:
  explicit Generator(const GeneratorConfig& config);

  // Event time of event n, epoch milliseconds.
  int64_t eventTimeMs(int64_t n) const {
    return (baseUs_ + static_cast<int64_t>(static_cast<double>(n) * delayUs_)) / 1000;
  }

  // Event n, which must be of the function's kind (kindOf(n)). The strings of
  // `out` are reused, so filling one struct again and again allocates little.
  void person(int64_t n, Person& out) const;
  void auction(int64_t n, Auction& out) const;
  void bid(int64_t n, Bid& out) const;

 private:
  uint64_t mix_;
  int64_t baseUs_;
  double delayUs_;
};

// An event as one JSON object, fields in the order of the Nexmark schema,
// times as "YYYY-MM-DD HH:MM:SS.mmm" (UTC), which rtsql's JSON decoder reads as
// TIMESTAMP; `key` gets the record key Kafka is given (the person's or the
// auction's id, the bid's auction). This is the format of rtsql_nexmark_gen.
void toJson(const Person& p, std::string& json, std::string& key);
void toJson(const Auction& a, std::string& json, std::string& key);
void toJson(const Bid& b, std::string& json, std::string& key);

}  // namespace rtsql::nexmark
