#include "connectors/kafka/state_copy_topic.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/options.h"
#include "connectors/kafka/sink_topic.h"

namespace rtsql::kafka {

namespace {

constexpr int kTimeoutMs = 30000;
constexpr const char* kMarkerKey = "ckpt";
constexpr std::string_view kCheckpointPrefix = "checkpoint\n";
constexpr std::string_view kReset = "reset";

SqlError unreachable(const std::string& bootstrap, const std::string& what) {
  return SqlError(sqlstate::kConnectionFailure,
                  fmt::format("the state copy on Kafka at {} {}", bootstrap, what), SqlError::npos,
                  "check that the cluster's Kafka is up and reachable");
}

// A "ckpt" record's checkpoint (empty for "reset"); nullopt for a state
// entry. Throws SqlError XX001 for a damaged one.
std::optional<std::optional<CheckpointInfo>> marker(const std::string& topic,
                                                    const rd_kafka_message_t& m) {
  if (std::string_view(static_cast<const char*>(m.key), m.key_len) != kMarkerKey)
    return std::nullopt;
  std::string_view value(static_cast<const char*>(m.payload), m.payload ? m.len : 0);
  if (value == kReset) return std::optional<CheckpointInfo>();
  std::optional<CheckpointInfo> info;
  if (value.substr(0, kCheckpointPrefix.size()) == kCheckpointPrefix) {
    info = parseCheckpointMeta(std::string(value.substr(kCheckpointPrefix.size())));
  }
  if (!info) {
    throw SqlError(sqlstate::kDataCorrupted,
                   fmt::format("the state copy in {} is damaged: record {} is no checkpoint",
                               topic, m.offset),
                   SqlError::npos, "the topic holds only what rtsqld writes there");
  }
  return info;
}

HandlePtr copyReader(const std::string& bootstrap, const std::string& groupId) {
  return newInternalClient(RD_KAFKA_CONSUMER, bootstrap, {{"client.id", "rtsqld-state"}},
                           {{"group.id", groupId.c_str()},
                            {"enable.partition.eof", "true"},
                            {"auto.offset.reset", "error"},
                            {"isolation.level", "read_committed"}});
}

bool transient(rd_kafka_resp_err_t err) {
  return err == RD_KAFKA_RESP_ERR__TRANSPORT || err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN;
}

// A standby's reader: one consumer from its first offset on, kept between
// polls (and made again after the last record given when the topic was away).
class KafkaFollower final : public StateCopy::Follower {
 public:
  KafkaFollower(std::string bootstrap, std::string topic, int64_t from)
      : bootstrap_(std::move(bootstrap)), topic_(std::move(topic)), from_(from) {}

  bool poll(int64_t maxMicros, const std::function<void(StateCopy::Record&&)>& fn) override {
    if (!consumer_) {
      consumer_ = copyReader(bootstrap_, topic_ + "-standby");
      rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(1);
      // From 0: from the copy's start, wherever the broker keeps it from.
      rd_kafka_topic_partition_list_add(parts, topic_.c_str(), 0)->offset =
          from_ == 0 ? RD_KAFKA_OFFSET_BEGINNING : from_;
      rd_kafka_resp_err_t err = rd_kafka_assign(consumer_.get(), parts);
      rd_kafka_topic_partition_list_destroy(parts);
      if (err) {
        consumer_.reset();
        throw unreachable(bootstrap_,
                          fmt::format("refused to read {}: {}", topic_, rd_kafka_err2str(err)));
      }
    }
    const int64_t until = monotonicMicros() + maxMicros;
    while (monotonicMicros() < until) {
      rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer_.get(), 100);
      if (!m) return true;  // quiet for a moment: caught up, as far as can be told
      std::unique_ptr<rd_kafka_message_t, void (*)(rd_kafka_message_t*)> hold(
          m, rd_kafka_message_destroy);
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) return true;
      if (m->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE ||
          m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET)
        return false;
      // A copy not written yet has no topic yet: nothing to follow so far.
      if (m->err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
          m->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
          m->err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC) {
        consumer_.reset();
        return true;
      }
      if (m->err) {
        if (transient(m->err)) continue;
        throw unreachable(bootstrap_,
                          fmt::format("could not read {}: {}", topic_, rd_kafka_message_errstr(m)));
      }
      StateCopy::Record record;
      record.offset = m->offset;
      // A consumer made again (the topic was away a moment) goes on after it.
      from_ = m->offset + 1;
      if (auto checkpoint = marker(topic_, *m)) {
        record.kind = *checkpoint ? StateCopy::Record::Kind::Checkpoint
                                  : StateCopy::Record::Kind::Reset;
        record.checkpoint = std::move(*checkpoint);
      } else {
        record.entry.key.assign(static_cast<const char*>(m->key), m->key_len);
        if (m->payload) record.entry.value.emplace(static_cast<const char*>(m->payload), m->len);
      }
      fn(std::move(record));
    }
    return true;
  }

 private:
  std::string bootstrap_;
  std::string topic_;
  int64_t from_;
  HandlePtr consumer_;
};

}  // namespace

KafkaStateCopy::KafkaStateCopy(std::string bootstrap, std::string topic)
    : bootstrap_(std::move(bootstrap)), topic_(std::move(topic)) {}

KafkaStateCopy::~KafkaStateCopy() = default;

rd_kafka_t* KafkaStateCopy::producer() {
  if (producer_) return producer_.get();
  HandlePtr p = newInternalClient(RD_KAFKA_PRODUCER, bootstrap_,
                                  {{"client.id", "rtsqld-state"}, {"linger.ms", "5"}},
                                  {{"transactional.id", topic_.c_str()},
                                   {"enable.idempotence", "true"},
                                   {"transaction.timeout.ms", "60000"},
                                   {"message.timeout.ms", "30000"}});
  // One partition, compacted: each key's last value is the state. Made
  // sure of once a run: a producer made again in the middle of one (the
  // last was fenced, or failed) finds the topic gone only when the flow was
  // dropped meanwhile (by a node that took its slot while this one could not
  // tell), and must not bring it back.
  if (!topicEnsured_) {
    InternalTopic t = ensureInternalTopic(p.get(), bootstrap_, topic_, 1,
                                          {{"cleanup.policy", "compact"}}, kTimeoutMs,
                                          "create the topic with one partition and "
                                          "cleanup.policy=compact, or check the broker's ACLs");
    (void)t;
    topicEnsured_ = true;
  } else {
    // Gone: the write fails now rather than when its records time out.
    try {
      partitionCounts(p.get(), {topic_}, bootstrap_, kTimeoutMs);
    } catch (const SqlError& e) {
      if (e.sqlstate() != sqlstate::kUndefinedObject) throw;
      throw unreachable(bootstrap_,
                        fmt::format("no longer has {}: deleted since this run began (its flow "
                                    "was dropped, or the topic deleted by hand)",
                                    topic_));
    }
  }
  if (rd_kafka_error_t* e = rd_kafka_init_transactions(p.get(), kTimeoutMs)) {
    std::string reason = rd_kafka_error_string(e);
    rd_kafka_error_destroy(e);
    throw unreachable(bootstrap_, fmt::format("({}) refused its transactions: {}", topic_, reason));
  }
  producer_ = std::move(p);
  return producer_.get();
}

void KafkaStateCopy::commit(const std::vector<StateChange>& changes, const std::string& marker,
                            SinkTransaction* within) {
  if (within) {
    for (const StateChange& c : changes)
      within->add(topic_, 0, c.key, c.value ? &*c.value : nullptr);
    within->add(topic_, 0, kMarkerKey, &marker);
    return;
  }
  rd_kafka_t* p = producer();
  auto fail = [&](rd_kafka_error_t* e, const char* what) {
    std::string reason = e ? rd_kafka_error_string(e) : "";
    const bool abortable = e && rd_kafka_error_txn_requires_abort(e);
    if (e) rd_kafka_error_destroy(e);
    if (abortable) {
      if (rd_kafka_error_t* a = rd_kafka_abort_transaction(p, kTimeoutMs))
        rd_kafka_error_destroy(a);
    } else {
      producer_.reset();  // fenced or fatal: a new producer next time
    }
    throw unreachable(bootstrap_, fmt::format("({}) could not {}: {}", topic_, what, reason));
  };
  if (rd_kafka_error_t* e = rd_kafka_begin_transaction(p)) fail(e, "begin a transaction");
  auto send = [&](std::string_view key, const std::string* value) {
    rd_kafka_resp_err_t err = produceRecord(p, topic_, 0, key, value, kTimeoutMs);
    if (err) fail(rd_kafka_error_new(err, "%s", rd_kafka_err2str(err)), "write a state record");
  };
  for (const StateChange& c : changes) send(c.key, c.value ? &*c.value : nullptr);
  send(kMarkerKey, &marker);
  if (rd_kafka_error_t* e = rd_kafka_commit_transaction(p, kTimeoutMs)) fail(e, "commit");
}

void KafkaStateCopy::write(const CheckpointInfo& info, const std::vector<StateChange>& changes,
                           SinkTransaction* within) {
  commit(changes, std::string(kCheckpointPrefix) + formatCheckpointMeta(info), within);
}

void KafkaStateCopy::clear() {
  commit({}, std::string(kReset), nullptr);
}

void KafkaStateCopy::destroy() {
  producer_.reset();
  HandlePtr admin =
      newInternalClient(RD_KAFKA_PRODUCER, bootstrap_, {{"client.id", "rtsqld-state"}}, {});
  deleteInternalTopic(admin.get(), bootstrap_, topic_);
}

std::unique_ptr<StateCopy::Follower> KafkaStateCopy::follow(int64_t from) {
  return std::make_unique<KafkaFollower>(bootstrap_, topic_, from);
}

void KafkaStateCopy::checkWithin(SinkTransaction& transaction) {
  const std::string own = clusterId(producer(), kTimeoutMs);
  const std::string sink = transaction.kafkaClusterId();
  if (own.empty() || sink != own) {
    throw SqlError(
        sqlstate::kFeatureNotSupported,
        fmt::format("'delivery' = 'exactly-once' in a cluster writes the state copy {} in the "
                    "output's transaction, and the sink is not on the cluster's Kafka at {} "
                    "(cluster id {}, the sink's {})",
                    topic_, bootstrap_, own.empty() ? "unknown" : own,
                    sink.empty() ? "none" : sink),
        SqlError::npos,
        "put the sink's topic on the cluster's Kafka, or use 'delivery' = 'at-least-once'");
  }
}

void KafkaStateCopy::scan(int64_t tail, const std::function<void(const rd_kafka_message_t&)>& fn) {
  // Fences the writer before this one first: its open transaction is aborted,
  // so the end of what is committed comes at once.
  producer();
  HandlePtr consumer = copyReader(bootstrap_, topic_);
  int64_t from = RD_KAFKA_OFFSET_BEGINNING;
  if (tail > 0) {
    // From the last `tail` offsets (what the broker has kept of them).
    int64_t low = 0, high = 0;
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(consumer.get(), topic_.c_str(), 0,
                                                               &low, &high, kTimeoutMs);
    if (err)
      throw unreachable(
          bootstrap_, fmt::format("did not give the end of {}: {}", topic_, rd_kafka_err2str(err)));
    from = std::max(low, high - tail);
  }
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(parts, topic_.c_str(), 0)->offset = from;
  rd_kafka_resp_err_t err = rd_kafka_assign(consumer.get(), parts);
  rd_kafka_topic_partition_list_destroy(parts);
  if (err)
    throw unreachable(bootstrap_,
                      fmt::format("refused to read {}: {}", topic_, rd_kafka_err2str(err)));

  // Bounded by silence, not by size: a large copy takes as long as it takes
  // while records keep coming.
  int64_t quietSince = monotonicMicros();
  while (true) {
    // A stop of the reading thread (the server stopping while it starts the
    // flow) ends the read; the copy is read again at the next start.
    throwIfInterrupted();
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer.get(), 100);
    if (!m) {
      if (monotonicMicros() - quietSince > int64_t(kTimeoutMs) * 1000) {
        throw unreachable(bootstrap_, fmt::format("did not give {} to its end within {} s", topic_,
                                                  kTimeoutMs / 1000));
      }
      continue;
    }
    std::unique_ptr<rd_kafka_message_t, void (*)(rd_kafka_message_t*)> hold(
        m, rd_kafka_message_destroy);
    quietSince = monotonicMicros();
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) break;
    if (m->err) {
      if (transient(m->err)) continue;
      throw unreachable(bootstrap_,
                        fmt::format("could not read {}: {}", topic_, rd_kafka_message_errstr(m)));
    }
    fn(*m);
  }
}

StateCopy::Contents KafkaStateCopy::read() {
  Contents out;
  std::map<std::string, std::string> state;
  scan(0, [&](const rd_kafka_message_t& m) {
    if (auto checkpoint = marker(topic_, m)) {
      // A reset clears what was read before it.
      if (!*checkpoint) state.clear();
      out.checkpoint = std::move(*checkpoint);
      return;
    }
    std::string key(static_cast<const char*>(m.key), m.key_len);
    out.keys.insert(key);
    if (m.payload) {
      state[key].assign(static_cast<const char*>(m.payload), m.len);
    } else {
      state.erase(key);
    }
  });
  if (out.checkpoint) {
    out.entries.reserve(state.size());
    for (auto& [key, value] : state) out.entries.push_back({key, std::move(value)});
  }
  return out;
}

std::optional<CheckpointInfo> KafkaStateCopy::newestCheckpoint() {
  // A write ends with its "ckpt" record and then the transaction's commit
  // marker: the last few offsets hold it, unless an aborted write came after
  // (then the caller reads the whole copy).
  constexpr int64_t kTail = 16;
  std::optional<CheckpointInfo> newest;
  scan(kTail, [&](const rd_kafka_message_t& m) {
    if (auto checkpoint = marker(topic_, m)) newest = std::move(*checkpoint);
  });
  return newest;
}

}  // namespace rtsql::kafka
