#include "server/cluster/catalog.h"
#include "server/cluster/catalog_block.h"

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>
#include <pthread.h>

#include <algorithm>
#include <deque>

#include "common/clock.h"
#include "common/error.h"
#include "common/json.h"
#include "common/kafka_topic_name.h"
#include "common/log.h"
#include "common/schema.h"
#include "connectors/kafka/client.h"
#include "connectors/kafka/sink_topic.h"

namespace rtsql {

namespace {

// How long a node waits for the catalog topic: to read it to its end, to
// initialize its transactions, to commit a change.
constexpr int kCatalogTimeoutMs = 15000;
constexpr int kCatalogPollMs = 100;

SqlError unreachable(const std::string& bootstrap, const std::string& what) {
  return SqlError(sqlstate::kConnectionFailure,
                  fmt::format("the cluster's Kafka at {} {}", bootstrap, what), SqlError::npos,
                  "check --kafka and that the broker is running");
}

std::string encode(const std::optional<std::vector<CatalogRecord>>& records) {
  return records ? formatCatalogFile(*records) : std::string();
}

}  // namespace

std::string clusterKey(const std::string& kind, const std::string& name) {
  return kind + "/" + toLower(name);
}

std::pair<std::string, std::string> splitClusterKey(const std::string& key) {
  size_t slash = key.find('/');
  if (slash == std::string::npos) return {key, {}};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

std::vector<CatalogRecord> clusterRecords(const std::vector<ClusterEntry>& entries) {
  std::vector<CatalogRecord> out;
  for (const ClusterEntry& e : entries) {
    if (!e.records) continue;
    for (const CatalogRecord& r : *e.records) {
      // A catalog of an earlier rtsqld named each flow's node after it; the
      // group decides that now (server/cluster/membership.h).
      if (r.kind == "node") continue;
      out.push_back(r);
    }
  }
  return out;
}

std::vector<ClusterEntry> clusterEntries(const std::vector<CatalogRecord>& records) {
  std::vector<ClusterEntry> out;
  for (const CatalogRecord& r : records) {
    if (r.kind == "insert") {
      // An INSERT follows its table in the file; it joins the table's entry.
      const std::string key = clusterKey("table", r.name);
      for (auto it = out.rbegin(); it != out.rend(); ++it) {
        if (it->key == key) {
          it->records->push_back(r);
          break;
        }
      }
      continue;
    }
    out.push_back(ClusterEntry{clusterKey(r.kind, r.name), std::vector<CatalogRecord>{r}});
  }
  return out;
}

void checkClusterName(const std::string& name) {
  const std::string topic = clusterCatalogTopic(name);
  if (name.empty() || name.size() > 200 || !validKafkaTopicName(topic)) {
    throw SqlError(sqlstate::kInvalidParameterValue, fmt::format("invalid cluster name '{}'", name),
                   SqlError::npos,
                   "a cluster name is 1 to 200 of the characters a Kafka topic name may hold: "
                   "letters, digits, '.', '_' and '-'");
  }
}

std::string clusterStateTopic(const std::string& cluster, const std::string& flowId) {
  return "_rtsql-" + cluster + "-state-" + flowId;
}

std::string clusterCatalogTopic(const std::string& cluster) {
  return "_rtsql-" + cluster + "-catalog";
}

std::string shownCatalogKey(const std::string& key) {
  constexpr size_t kShown = 200;
  std::string out;
  appendJsonString(out, key.size() > kShown ? key.substr(0, kShown) : key);
  if (key.size() > kShown) out += fmt::format(" (first {} of {} bytes)", kShown, key.size());
  return out;
}

void CatalogReplay::add(int64_t offset, const std::string& key, const std::string* value) {
  // A block record only groups the records after it for a node that follows
  // the topic (catalog_block.h); a replay applies the whole catalog at once.
  if (isCatalogBlockKey(key)) return;
  std::optional<std::vector<CatalogRecord>> records;
  if (value) {
    try {
      records = parseCatalogFile(*value);
    } catch (const SqlError& err) {
      // It replaces what the key held, as it would after compaction; a later
      // record or tombstone of the key replaces it in turn.
      std::erase_if(entries_, [&](const ClusterEntry& x) { return x.key == key; });
      values_.erase(key);
      damaged_[key] = DamagedCatalogRecord{offset, key, err.message()};
      return;
    }
  }
  damaged_.erase(key);
  // Compaction keeps each key's last record: so does the replay.
  std::erase_if(entries_, [&](const ClusterEntry& x) { return x.key == key; });
  if (records) {
    values_[key] = *value;
    entries_.push_back(ClusterEntry{key, std::move(records)});
  } else {
    values_.erase(key);
  }
}

std::vector<DamagedCatalogRecord> CatalogReplay::damaged() const {
  std::vector<DamagedCatalogRecord> out;
  for (const auto& [key, d] : damaged_) out.push_back(d);
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.offset < b.offset; });
  return out;
}

void CatalogReplay::requireIntact() const {
  const std::vector<DamagedCatalogRecord> all = damaged();
  if (all.empty()) return;
  const DamagedCatalogRecord& d = all.front();
  throw SqlError(
      sqlstate::kIoError,
      fmt::format("the cluster catalog is damaged: record at offset {} of topic {} partition 0 "
                  "(key {}) is not a catalog entry: {}{}",
                  d.offset, topic_, shownCatalogKey(d.key), d.why,
                  all.size() > 1 ? fmt::format(" ({} damaged keys in all)", all.size()) : ""),
      SqlError::npos,
      "the topic holds only what rtsqld writes there; run rtsqld --cluster NAME --kafka "
      "BOOTSTRAP --cluster-repair to write a tombstone for each damaged key (which drops that "
      "object), then create the object again (docs/operations.md, \"Repairing the cluster "
      "catalog\")");
}

struct ClusterCatalog::Impl {
  std::string topic;
  std::string transactionalId;
  std::string bootstrap;
  kafka::HandlePtr consumer;

  std::mutex mu;
  std::condition_variable cv;
  // What this node has of the catalog: each key's value as last written or
  // applied here (tombstoned keys are absent).
  std::map<std::string, std::string> known;
  std::vector<ClusterEntry> initial;
  // The replay of the topic from its start, until the node has read it to
  // its end (then `known` and `initial` are what it made).
  std::unique_ptr<CatalogReplay> replay;
  int64_t readTo = 0;                // every record below this offset has been read
  bool atEnd = false;                // the consumer has reached the end of what is committed
  // Read, another node's, not yet applied: each element is applied at once
  // (a block's entries together).
  std::deque<std::vector<ClusterEntry>> pending;
  CatalogBlockReader blocks;  // a block read in part waits here for its end
  bool applying = false;
  bool stopping = false;
  std::function<void(const std::vector<ClusterEntry>&)> apply;
  std::thread follower;

  // Reads what the consumer has within `ms`: records into `pending` (or, with
  // `intoInitial`, into `initial`), the end of the partition into `readTo`.
  void pollOnce(int ms, bool intoInitial) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer.get(), ms);
    if (!m) return;
    std::unique_ptr<rd_kafka_message_t, void (*)(rd_kafka_message_t*)> hold(
        m, rd_kafka_message_destroy);
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      std::lock_guard lock(mu);
      readTo = std::max(readTo, static_cast<int64_t>(m->offset));
      atEnd = true;
      cv.notify_all();
      return;
    }
    if (m->err) {
      logLine(fmt::format("cluster catalog: {}", rd_kafka_message_errstr(m)));
      return;
    }
    ClusterEntry e;
    if (m->key) e.key.assign(static_cast<const char*>(m->key), m->key_len);
    std::string value;
    if (m->payload) value.assign(static_cast<const char*>(m->payload), m->len);
    if (intoInitial) {
      std::lock_guard lock(mu);
      readTo = std::max(readTo, static_cast<int64_t>(m->offset) + 1);
      replay->add(m->offset, e.key, m->payload ? &value : nullptr);
      cv.notify_all();
      return;
    }
    if (isCatalogBlockKey(e.key)) {
      std::vector<std::string> keys;
      try {
        if (m->payload) keys = parseCatalogBlock(value);
      } catch (const SqlError& err) {
        // The records after it are then applied one by one, as before blocks.
        logLine(fmt::format("cluster catalog: the block record at offset {} of topic {} is "
                            "damaged: {}",
                            m->offset, topic, err.message()));
      }
      std::lock_guard lock(mu);
      readTo = std::max(readTo, static_cast<int64_t>(m->offset) + 1);
      for (auto& ready : blocks.startBlock(std::move(keys))) pending.push_back(std::move(ready));
      cv.notify_all();
      return;
    }
    if (m->payload) {
      try {
        e.records = parseCatalogFile(value);
      } catch (const SqlError& err) {
        // What this node has of the object stays; a restart stops at this
        // record until a later one of its key replaces it.
        logLine(fmt::format("cluster catalog: skipped the record at offset {} of topic {} "
                            "partition 0 (key {}), which is not a catalog entry: {}",
                            m->offset, topic, shownCatalogKey(e.key), err.message()));
        std::lock_guard lock(mu);
        readTo = std::max(readTo, static_cast<int64_t>(m->offset) + 1);
        cv.notify_all();
        return;
      }
    }
    std::lock_guard lock(mu);
    readTo = std::max(readTo, static_cast<int64_t>(m->offset) + 1);
    auto it = known.find(e.key);
    const bool same = e.records ? it != known.end() && it->second == value : it == known.end();
    for (auto& ready : blocks.add(std::move(e), same)) pending.push_back(std::move(ready));
    cv.notify_all();
  }

  // The cluster's one transactional writer of the topic: a new one fences
  // any other node's write in progress when it initializes its transactions.
  kafka::HandlePtr newWriter() const {
    return kafka::newInternalClient(RD_KAFKA_PRODUCER, bootstrap,
                                    {{"client.id", "rtsqld-catalog"}},
                                    {{"transactional.id", transactionalId.c_str()},
                                     {"enable.idempotence", "true"},
                                     {"transaction.timeout.ms", "60000"},
                                     {"message.timeout.ms", "30000"}});
  }

  // Makes the consumer of the topic (created when missing) and replays it
  // from its start to its end into `replay`.
  void open(const ClusterOptions& options);

  int64_t highWatermark() {
    int64_t low = 0, high = 0;
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(consumer.get(), topic.c_str(), 0,
                                                               &low, &high, kCatalogTimeoutMs);
    if (err)
      throw unreachable(
          bootstrap, fmt::format("did not give the end of {}: {}", topic, rd_kafka_err2str(err)));
    return high;
  }

  void run() {
    while (true) {
      {
        std::unique_lock lock(mu);
        if (stopping) return;
        if (!pending.empty()) {
          std::vector<ClusterEntry> group = std::move(pending.front());
          pending.pop_front();
          applying = true;
          lock.unlock();
          std::string keys;
          for (const ClusterEntry& e : group) keys += (keys.empty() ? "'" : ", '") + e.key + "'";
          try {
            apply(group);
            if (group.size() == 1) {
              logLine(fmt::format("cluster catalog: applied {} {} from another node",
                                  group.front().records ? "change of" : "drop of", keys));
            } else {
              logLine(fmt::format("cluster catalog: applied a block of {} changes ({}) from "
                                  "another node",
                                  group.size(), keys));
            }
          } catch (const std::exception& err) {
            const auto* sqlError = dynamic_cast<const SqlError*>(&err);
            logLine(fmt::format("cluster catalog: cannot apply {}: {}", keys,
                                sqlError ? sqlError->message() : err.what()));
          }
          lock.lock();
          for (const ClusterEntry& e : group) {
            if (e.records) {
              known[e.key] = encode(e.records);
            } else {
              known.erase(e.key);
            }
          }
          applying = false;
          cv.notify_all();
          continue;
        }
      }
      try {
        pollOnce(kCatalogPollMs, false);
      } catch (const std::exception& err) {
        logLine(fmt::format("cluster catalog: {}", err.what()));
      }
    }
  }
};

void ClusterCatalog::Impl::open(const ClusterOptions& options) {
  checkClusterName(options.name);
  topic = clusterCatalogTopic(options.name);
  bootstrap = options.bootstrap;
  transactionalId = "_rtsql-" + options.name + "-catalog-writer";
  replay = std::make_unique<CatalogReplay>(topic);
  const std::string group = "_rtsql-" + options.name + "-catalog-reader";
  consumer = kafka::newInternalClient(RD_KAFKA_CONSUMER, options.bootstrap,
                                      {{"client.id", "rtsqld-catalog"}},
                                      {{"group.id", group.c_str()},
                                       {"enable.partition.eof", "true"},
                                       // A writer waits for the end of the
                                       // partition, which a fetch reports when
                                       // it returns: the broker holds an empty
                                       // fetch this long.
                                       {"fetch.wait.max.ms", "50"},
                                       {"isolation.level", "read_committed"}});
  // One partition, compacted, kept forever: it is the cluster's catalog.
  // Waits until the partition has a leader (a new topic has none at first);
  // on a broker that creates it on demand, the catalog is its partition 0.
  const std::string notCreated =
      kafka::ensureInternalTopic(consumer.get(), options.bootstrap, topic, 1,
                                 {{"cleanup.policy", "compact"}}, kCatalogTimeoutMs,
                                 "create the topic with one partition and cleanup.policy=compact, "
                                 "or check the broker's ACLs")
          .notCreated;
  if (!notCreated.empty()) {
    logLine(
        fmt::format("cluster catalog: {}; using the topic the broker created on demand, "
                    "which is not compacted",
                    notCreated));
  }
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(parts, topic.c_str(), 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_resp_err_t err = rd_kafka_assign(consumer.get(), parts);
  rd_kafka_topic_partition_list_destroy(parts);
  if (err)
    throw unreachable(options.bootstrap,
                      fmt::format("refused to read {}: {}", topic, rd_kafka_err2str(err)));

  // Read to the end of what is committed: the catalog as the cluster has it
  // now. (A node killed while writing leaves its transaction open until the
  // broker aborts it; the records before it are all there is to read.)
  const int64_t deadline = monotonicMicros() + int64_t(kCatalogTimeoutMs) * 1000;
  while (true) {
    {
      std::lock_guard lock(mu);
      if (atEnd) break;
    }
    if (monotonicMicros() > deadline) {
      throw unreachable(options.bootstrap,
                        fmt::format("did not give the cluster catalog {} to its end within {} s",
                                    topic, kCatalogTimeoutMs / 1000));
    }
    pollOnce(kCatalogPollMs, true);
  }
}

ClusterCatalog::ClusterCatalog(ClusterOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  impl_->open(options_);
  impl_->replay->requireIntact();
  std::lock_guard lock(impl_->mu);
  impl_->known = impl_->replay->values();
  impl_->initial = impl_->replay->entries();
  impl_->replay.reset();
}

std::vector<DamagedCatalogRecord> ClusterCatalog::repair(const ClusterOptions& options) {
  Impl impl;
  impl.open(options);
  if (impl.replay->damaged().empty()) return {};
  kafka::HandlePtr producer = impl.newWriter();
  auto check = [&](rd_kafka_error_t* error, const char* what) {
    if (!error) return;
    std::string reason = rd_kafka_error_string(error);
    rd_kafka_error_destroy(error);
    throw unreachable(options.bootstrap, fmt::format("could not {}: {}", what, reason));
  };
  kafka::partitionCounts(producer.get(), {impl.topic}, options.bootstrap);
  check(rd_kafka_init_transactions(producer.get(), kCatalogTimeoutMs),
        "initialize its transactions");
  // No node can commit to the topic now: what it holds to its end is what
  // the tombstones are written over (a node may have replaced a damaged
  // record meanwhile).
  const int64_t end = impl.highWatermark();
  const int64_t deadline = monotonicMicros() + int64_t(kCatalogTimeoutMs) * 1000;
  while (true) {
    {
      std::lock_guard lock(impl.mu);
      if (impl.readTo >= end) break;
    }
    if (monotonicMicros() > deadline) {
      throw unreachable(options.bootstrap,
                        fmt::format("did not give the cluster catalog {} to its end within {} s",
                                    impl.topic, kCatalogTimeoutMs / 1000));
    }
    impl.pollOnce(kCatalogPollMs, true);
  }
  std::vector<DamagedCatalogRecord> damaged = impl.replay->damaged();
  if (damaged.empty()) return {};
  check(rd_kafka_begin_transaction(producer.get()), "begin a transaction");
  for (const DamagedCatalogRecord& d : damaged) {
    rd_kafka_resp_err_t err = kafka::produceRecord(producer.get(), impl.topic, 0, d.key, nullptr);
    if (err) {
      rd_kafka_error_destroy(rd_kafka_abort_transaction(producer.get(), kCatalogTimeoutMs));
      throw unreachable(options.bootstrap,
                        fmt::format("refused a catalog tombstone: {}", rd_kafka_err2str(err)));
    }
  }
  check(rd_kafka_commit_transaction(producer.get(), kCatalogTimeoutMs),
        "commit the tombstones");
  return damaged;
}

ClusterCatalog::~ClusterCatalog() {
  stop();
}

std::vector<ClusterEntry> ClusterCatalog::initial() const {
  std::lock_guard lock(impl_->mu);
  return impl_->initial;
}

void ClusterCatalog::follow(std::function<void(const std::vector<ClusterEntry>&)> apply) {
  impl_->apply = std::move(apply);
  impl_->follower = std::thread([this] { impl_->run(); });
  pthread_setname_np(impl_->follower.native_handle(), "cluster-catalog");
}

void ClusterCatalog::stop() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
    impl_->cv.notify_all();
  }
  if (impl_->follower.joinable()) impl_->follower.join();
}

void ClusterCatalog::publish(const std::vector<ClusterEntry>& next) {
  // What differs from what this node has: upserts in `next`'s order, then
  // tombstones for what `next` no longer holds.
  std::vector<std::pair<std::string, std::optional<std::string>>> writes;
  {
    std::lock_guard lock(impl_->mu);
    std::map<std::string, bool> kept;
    for (const auto& e : next) {
      std::string value = encode(e.records);
      kept[e.key] = true;
      auto it = impl_->known.find(e.key);
      if (it == impl_->known.end() || it->second != value) writes.emplace_back(e.key, value);
    }
    for (const auto& [key, value] : impl_->known) {
      if (!kept.count(key)) writes.emplace_back(key, std::nullopt);
    }
  }
  const std::string bootstrap = options_.bootstrap;
  auto behind = [&] {
    return SqlError(sqlstate::kSerializationFailure,
                    "another node changed the cluster's catalog at the same time", SqlError::npos,
                    "run the statement again once this node has applied that change");
  };
  // Every record committed before now has been read, and applied here: else
  // the statement was checked against a catalog the cluster no longer has.
  auto requireCaughtUp = [&] {
    const int64_t end = impl_->highWatermark();
    std::unique_lock lock(impl_->mu);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(kCatalogTimeoutMs);
    bool caughtUp = impl_->cv.wait_until(lock, deadline, [&] {
      return !impl_->pending.empty() || impl_->applying || impl_->readTo >= end || impl_->stopping;
    });
    if (!impl_->pending.empty() || impl_->applying || impl_->blocks.waiting()) throw behind();
    if (!caughtUp || impl_->readTo < end) {
      throw unreachable(bootstrap,
                        fmt::format("did not give the cluster catalog {} to its end within {} s",
                                    impl_->topic, kCatalogTimeoutMs / 1000));
    }
  };
  {
    // Known to be behind: fail before fencing another node's write for nothing.
    std::lock_guard lock(impl_->mu);
    if (!impl_->pending.empty() || impl_->applying || impl_->blocks.waiting()) throw behind();
  }
  if (writes.empty()) {
    // Nothing to write as this node sees the catalog (START of a flow it
    // holds as running): true only if no other node has changed it since.
    requireCaughtUp();
    return;
  }
  kafka::HandlePtr producer = impl_->newWriter();
  auto txError = [&](rd_kafka_error_t* error, const char* what) {
    if (!error) return;
    const bool fenced = rd_kafka_error_is_fatal(error) || rd_kafka_error_txn_requires_abort(error);
    std::string reason = rd_kafka_error_string(error);
    rd_kafka_error_destroy(error);
    if (fenced) {
      throw SqlError(
          sqlstate::kSerializationFailure,
          fmt::format("another node changed the cluster's catalog at the same time ({}: {})", what,
                      reason),
          SqlError::npos, "run the statement again");
    }
    throw unreachable(bootstrap, fmt::format("could not {}: {}", what, reason));
  };
  // The topic's leader, known before the first record: a producer that
  // learns it only from that record adds the partition to its transaction a
  // second later.
  kafka::partitionCounts(producer.get(), {impl_->topic}, bootstrap);
  // Fences any other node's write in progress: from here on, only this
  // producer can commit to the catalog until it is done.
  txError(rd_kafka_init_transactions(producer.get(), kCatalogTimeoutMs),
          "initialize its transactions");

  requireCaughtUp();

  txError(rd_kafka_begin_transaction(producer.get()), "begin a transaction");
  if (writes.size() > 1) {
    // The other nodes apply these records at once (catalog_block.h).
    std::vector<std::string> keys;
    for (const auto& write : writes) keys.push_back(write.first);
    const std::string block = formatCatalogBlock(keys);
    rd_kafka_resp_err_t err =
        kafka::produceRecord(producer.get(), impl_->topic, 0, kCatalogBlockKey, &block);
    if (err) {
      rd_kafka_error_destroy(rd_kafka_abort_transaction(producer.get(), kCatalogTimeoutMs));
      throw unreachable(bootstrap,
                        fmt::format("refused a catalog record: {}", rd_kafka_err2str(err)));
    }
  }
  for (const auto& write : writes) {
    const std::optional<std::string>& value = write.second;
    rd_kafka_resp_err_t err = kafka::produceRecord(producer.get(), impl_->topic, 0, write.first,
                                                   value ? &*value : nullptr);
    if (err) {
      rd_kafka_error_destroy(rd_kafka_abort_transaction(producer.get(), kCatalogTimeoutMs));
      throw unreachable(bootstrap,
                        fmt::format("refused a catalog record: {}", rd_kafka_err2str(err)));
    }
  }
  // Known before the commit, so that the follower takes these records, when it
  // reads them back, for what this node already has; put back if it fails.
  std::map<std::string, std::optional<std::string>> before;
  auto setKnown = [&](const std::string& key, const std::optional<std::string>& value) {
    if (value) {
      impl_->known[key] = *value;
    } else {
      impl_->known.erase(key);
    }
  };
  {
    std::lock_guard lock(impl_->mu);
    for (const auto& [key, value] : writes) {
      auto it = impl_->known.find(key);
      if (!before.count(key)) {
        before[key] =
            it == impl_->known.end() ? std::nullopt : std::optional<std::string>(it->second);
      }
      setKnown(key, value);
    }
  }
  try {
    txError(rd_kafka_commit_transaction(producer.get(), kCatalogTimeoutMs),
            "commit the catalog change");
  } catch (...) {
    std::lock_guard lock(impl_->mu);
    for (const auto& [key, value] : before) setKnown(key, value);
    throw;
  }
}

}  // namespace rtsql
