// The Nexmark event generator (see generator.h).
#include "connectors/nexmark/generator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string_view>

namespace rtsql::nexmark {

namespace {

// Shape of the reference generator.
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

constexpr std::array<const char*, 11> kFirstNames = {
    "Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"};
constexpr std::array<const char*, 9> kLastNames = {
    "Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"};
constexpr std::array<const char*, 6> kStates = {"AZ", "CA", "ID", "OR", "WA", "WY"};
constexpr std::array<const char*, 10> kCities = {
    "Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland",
    "Bend",    "Redmond",     "Seattle",       "Kent",  "Cheyenne"};
constexpr std::array<const char*, 4> kHotChannels = {"Google", "Facebook", "Baidu", "Apple"};

// The 48-bit linear congruential generator of java.util.Random, so that with
// seed 0 each event's draws follow the same sequence as the reference
// generator's `new Random(eventId)`.
class JavaRandom {
 public:
  explicit JavaRandom(int64_t seed) : seed_((static_cast<uint64_t>(seed) ^ kMultiplier) & kMask) {}

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

// Appends letters with an occasional `special` character, 3 to maxLength - 1
// long, trimmed of spaces.
void appendString(std::string& out, JavaRandom& r, int maxLength, char special = ' ') {
  int len = 3 + r.nextInt(maxLength - 3);
  const size_t start = out.size();
  while (len-- > 0) {
    if (r.nextInt(13) == 0) {
      out.push_back(special);
    } else {
      out.push_back(static_cast<char>('a' + r.nextInt(26)));
    }
  }
  const size_t b = out.find_first_not_of(' ', start);
  if (b == std::string::npos) {
    out.resize(start);
    return;
  }
  out.resize(out.find_last_not_of(' ') + 1);
  out.erase(start, b - start);
}

void assignString(std::string& out, JavaRandom& r, int maxLength, char special = ' ') {
  out.clear();
  appendString(out, r, maxLength, special);
}

// Padding that brings the record to about `average` bytes (within 20%).
void assignExtra(std::string& out, JavaRandom& r, int currentSize, int average) {
  out.clear();
  if (currentSize > average) return;
  const int desired = average - currentSize;
  const int delta = static_cast<int>(std::lround(desired * 0.2));
  const int size = desired - delta + (delta == 0 ? 0 : r.nextInt(2 * delta));
  out.reserve(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) out.push_back(static_cast<char>('a' + r.nextInt(26)));
}

// Cents, log-uniform between 1.00 and 1,000,000.00.
int64_t nextPrice(JavaRandom& r) {
  return std::llround(std::pow(10.0, r.nextDouble() * 6.0) * 100.0);
}

void appendEscaped(std::string& out, std::string_view s) {
  out.push_back('"');
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
}

// "2024-05-01 10:00:00.123" (UTC).
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

}  // namespace

int64_t countBefore(EventKind kind, int64_t n) {
  if (n <= 0) return 0;
  const int64_t whole = n / kTotalProportion;
  const int64_t rem = n % kTotalProportion;
  switch (kind) {
    case EventKind::Person:
      return whole * kPersonProportion + std::min(rem, kPersonProportion);
    case EventKind::Auction:
      return whole * kAuctionProportion +
             std::clamp<int64_t>(rem - kPersonProportion, 0, kAuctionProportion);
    case EventKind::Bid:
      return whole * kBidProportion +
             std::max<int64_t>(rem - kPersonProportion - kAuctionProportion, 0);
  }
  return 0;
}

Generator::Generator(const GeneratorConfig& config)
    : mix_(static_cast<uint64_t>(config.seed) * 0x9E3779B97F4A7C15ULL),
      baseUs_(config.baseTimeMs * 1000),
      delayUs_(1e6 / config.eventRate) {}

// The draws below happen in the order the reference generator makes them;
// changing it changes every event after the change.

void Generator::person(int64_t n, Person& p) const {
  JavaRandom r(static_cast<int64_t>(static_cast<uint64_t>(n) ^ mix_));
  p.dateTimeMs = eventTimeMs(n);
  p.id = lastBase0PersonId(n) + kFirstPersonId;
  p.name = kFirstNames[static_cast<size_t>(r.nextInt(kFirstNames.size()))];
  p.name += ' ';
  p.name += kLastNames[static_cast<size_t>(r.nextInt(kLastNames.size()))];
  // The domain is drawn before the user name.
  std::string& email = p.emailAddress;
  std::string domain;
  assignString(domain, r, 5);
  assignString(email, r, 7);
  email += '@';
  email += domain;
  email += ".com";
  p.creditCard.clear();
  for (int i = 0; i < 4; ++i) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%s%04d", i ? " " : "", r.nextInt(10000));
    p.creditCard += buf;
  }
  p.city = kCities[static_cast<size_t>(r.nextInt(kCities.size()))];
  p.state = kStates[static_cast<size_t>(r.nextInt(kStates.size()))];
  const int size = static_cast<int>(8 + p.name.size() + p.emailAddress.size() +
                                    p.creditCard.size() + p.city.size() + p.state.size());
  assignExtra(p.extra, r, size, kAvgPersonBytes);
}

void Generator::auction(int64_t n, Auction& a) const {
  JavaRandom r(static_cast<int64_t>(static_cast<uint64_t>(n) ^ mix_));
  const int64_t ts = eventTimeMs(n);
  a.dateTimeMs = ts;
  a.id = lastBase0AuctionId(n) + kFirstAuctionId;
  int64_t seller;
  if (r.nextInt(kHotSellerRatio) > 0) {
    seller = (lastBase0PersonId(n) / kHotSellerRatio) * kHotSellerRatio;
  } else {
    seller = nextBase0PersonId(n, r);
  }
  a.seller = seller + kFirstPersonId;
  a.category = kFirstCategoryId + r.nextInt(kNumCategories);
  a.initialBid = nextPrice(r);
  // The auction lasts up to twice the event time that kNumInFlightAuctions
  // auctions take to be created.
  const int64_t ahead = (kNumInFlightAuctions * kTotalProportion) / kAuctionProportion;
  const int64_t horizonMs = eventTimeMs(n + ahead) - ts;
  a.expiresMs = ts + 1 + r.nextLong(std::max<int64_t>(horizonMs * 2, 1));
  assignString(a.itemName, r, 20);
  assignString(a.description, r, 100);
  a.reserve = a.initialBid + nextPrice(r);
  const int size = static_cast<int>(8 + a.itemName.size() + a.description.size() + 40);
  assignExtra(a.extra, r, size, kAvgAuctionBytes);
}

void Generator::bid(int64_t n, Bid& b) const {
  JavaRandom r(static_cast<int64_t>(static_cast<uint64_t>(n) ^ mix_));
  b.dateTimeMs = eventTimeMs(n);
  int64_t auction;
  if (r.nextInt(kHotAuctionRatio) > 0) {
    auction = (lastBase0AuctionId(n) / kHotAuctionRatio) * kHotAuctionRatio;
  } else {
    auction = nextBase0AuctionId(n, r);
  }
  b.auction = auction + kFirstAuctionId;
  int64_t bidder;
  if (r.nextInt(kHotBidderRatio) > 0) {
    bidder = (lastBase0PersonId(n) / kHotBidderRatio) * kHotBidderRatio + 1;
  } else {
    bidder = nextBase0PersonId(n, r);
  }
  b.bidder = bidder + kFirstPersonId;
  b.price = nextPrice(r);
  // The url's three path parts are drawn last to first.
  std::string parts[3];
  for (int i = 2; i >= 0; --i) assignString(parts[i], r, 5, '_');
  b.url = "https://www.nexmark.com/";
  for (int i = 0; i < 3; ++i) {
    b.url += parts[i];
    b.url += '/';
  }
  b.url += "item.htm?query=1";
  if (r.nextInt(kHotChannelsRatio) > 0) {
    b.channel = kHotChannels[static_cast<size_t>(r.nextInt(kHotChannels.size()))];
  } else {
    const int ch = r.nextInt(kChannelsNumber);
    b.channel = "channel-" + std::to_string(ch);
    b.url += "&channel_id=" + std::to_string(ch);
  }
  assignExtra(b.extra, r, 32, kAvgBidBytes);
}

void toJson(const Person& p, std::string& o, std::string& key) {
  key = std::to_string(p.id);
  o.clear();
  o.push_back('{');
  appendField(o, "id");
  o += key;
  appendField(o, "name");
  appendEscaped(o, p.name);
  appendField(o, "email_address");
  appendEscaped(o, p.emailAddress);
  appendField(o, "credit_card");
  appendEscaped(o, p.creditCard);
  appendField(o, "city");
  appendEscaped(o, p.city);
  appendField(o, "state");
  appendEscaped(o, p.state);
  appendField(o, "date_time");
  appendTime(o, p.dateTimeMs);
  appendField(o, "extra");
  appendEscaped(o, p.extra);
  o.push_back('}');
}

void toJson(const Auction& a, std::string& o, std::string& key) {
  key = std::to_string(a.id);
  o.clear();
  o.push_back('{');
  appendField(o, "id");
  o += key;
  appendField(o, "item_name");
  appendEscaped(o, a.itemName);
  appendField(o, "description");
  appendEscaped(o, a.description);
  appendField(o, "initial_bid");
  o += std::to_string(a.initialBid);
  appendField(o, "reserve");
  o += std::to_string(a.reserve);
  appendField(o, "date_time");
  appendTime(o, a.dateTimeMs);
  appendField(o, "expires");
  appendTime(o, a.expiresMs);
  appendField(o, "seller");
  o += std::to_string(a.seller);
  appendField(o, "category");
  o += std::to_string(a.category);
  appendField(o, "extra");
  appendEscaped(o, a.extra);
  o.push_back('}');
}

void toJson(const Bid& b, std::string& o, std::string& key) {
  key = std::to_string(b.auction);
  o.clear();
  o.push_back('{');
  appendField(o, "auction");
  o += key;
  appendField(o, "bidder");
  o += std::to_string(b.bidder);
  appendField(o, "price");
  o += std::to_string(b.price);
  appendField(o, "channel");
  appendEscaped(o, b.channel);
  appendField(o, "url");
  appendEscaped(o, b.url);
  appendField(o, "date_time");
  appendTime(o, b.dateTimeMs);
  appendField(o, "extra");
  appendEscaped(o, b.extra);
  o.push_back('}');
}

}  // namespace rtsql::nexmark
