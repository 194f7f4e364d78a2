#include "connectors/kafka/sink_topic.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "connectors/embedded/broker.h"
#include "connectors/kafka/client.h"

namespace rtsql::kafka {

namespace {

// How long a deleted topic may stay in the broker's listing before its
// deletion is asked again.
constexpr int64_t kListedAfterDeletionMicros = 5'000'000;

// The partition count of `topic`, or 0 when the broker does not have it. Lists
// every topic rather than asking for this one: a metadata request naming a
// missing topic makes a broker with auto.create.topics.enable create it with
// its own default count.
int existingPartitions(rd_kafka_t* rk, const std::string& bootstrap, const std::string& topic) {
  const struct rd_kafka_metadata* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, nullptr, &md, kMetadataTimeoutMs);
  if (err) {
    throw SqlError(sqlstate::kConnectionFailure,
                   fmt::format("cannot reach Kafka at {} within {} s: {}", bootstrap,
                               kMetadataTimeoutMs / 1000, rd_kafka_err2str(err)),
                   SqlError::npos, "check 'kafka.bootstrap.servers' and that the broker is running");
  }
  int count = 0;
  for (int i = 0; i < md->topic_cnt; ++i) {
    if (topic == md->topics[i].topic && md->topics[i].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      count = md->topics[i].partition_cnt;
    }
  }
  rd_kafka_metadata_destroy(md);
  return count;
}

// Waits for the answer to an admin request about one topic (its creation or
// deletion) on `queue`: the topic's error (0: done) and its text. The request
// times out on its own; the extra second only covers the result's trip back
// through the queue. Throws 08006 when nothing comes back.
std::pair<rd_kafka_resp_err_t, std::string> topicResult(rd_kafka_queue_t* queue,
                                                       const std::string& bootstrap,
                                                       const char* what, const std::string& topic) {
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, kMetadataTimeoutMs + 1000);
  if (!event) {
    throw SqlError(sqlstate::kConnectionFailure,
                   fmt::format("Kafka at {} did not answer the {} of topic '{}'", bootstrap, what,
                               topic));
  }
  std::unique_ptr<rd_kafka_event_t, void (*)(rd_kafka_event_t*)> hold(event, rd_kafka_event_destroy);
  rd_kafka_resp_err_t err = rd_kafka_event_error(event);
  std::string reason = err ? rd_kafka_event_error_string(event) : "";
  if (!err) {
    size_t n = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_event_type(event) == RD_KAFKA_EVENT_DELETETOPICS_RESULT
            ? rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(event), &n)
            : rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &n);
    if (n > 0) {
      err = rd_kafka_topic_result_error(results[0]);
      const char* text = rd_kafka_topic_result_error_string(results[0]);
      reason = text ? text : rd_kafka_err2str(err);
    }
  }
  return {err, reason};
}

// Asks the broker to create `topic`; returns false when it already exists.
bool createTopic(rd_kafka_t* rk, const std::string& bootstrap, const std::string& topic,
                 int partitions, const TopicConfigs& configs) {
  // Another rtsqld's embedded broker answers no admin request: asked, the
  // request would wait its whole timeout for a controller. The metadata read
  // before this call has the cluster's id at hand.
  if (isEmbeddedBroker(rk, 1000)) {
    throw SqlError(sqlstate::kConnectionFailure,
                   fmt::format("cannot create topic '{}' with {} partitions on {}: an embedded "
                               "broker of another rtsqld creates topics only on demand, with "
                               "its default partition count",
                               topic, partitions, bootstrap),
                   SqlError::npos,
                   "create the topic from the rtsqld that runs the broker, or use Apache Kafka");
  }
  char errstr[512];
  rd_kafka_NewTopic_t* spec =
      rd_kafka_NewTopic_new(topic.c_str(), partitions, -1, errstr, sizeof errstr);
  if (!spec) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("cannot create topic '{}': {}", topic, errstr));
  }
  for (const auto& [name, value] : configs) {
    if (rd_kafka_NewTopic_set_config(spec, name.c_str(), value.c_str())) {
      rd_kafka_NewTopic_destroy(spec);
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("cannot create topic '{}': bad config {}={}", topic, name, value));
    }
  }
  std::unique_ptr<rd_kafka_queue_t, void (*)(rd_kafka_queue_t*)> queue(rd_kafka_queue_new(rk),
                                                                       rd_kafka_queue_destroy);
  rd_kafka_AdminOptions_t* options = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_request_timeout(options, kMetadataTimeoutMs, errstr, sizeof errstr);
  rd_kafka_CreateTopics(rk, &spec, 1, options, queue.get());
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_NewTopic_destroy(spec);

  auto [err, reason] = topicResult(queue.get(), bootstrap, "creation", topic);
  if (err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) return false;
  if (err) {
    throw SqlError(sqlstate::kConnectionFailure,
                   fmt::format("cannot create topic '{}' with {} partitions on {}: {}", topic,
                               partitions, bootstrap, reason),
                   SqlError::npos,
                   "create the topic with kafka-topics.sh --create, or check the broker's ACLs");
  }
  return true;
}

// Asks the broker to delete `topic`; returns false when it does not have it.
// Throws 08006 when it refuses or does not answer.
bool requestDeletion(rd_kafka_t* rk, const std::string& bootstrap, const std::string& topic) {
  std::unique_ptr<rd_kafka_queue_t, void (*)(rd_kafka_queue_t*)> queue(rd_kafka_queue_new(rk),
                                                                       rd_kafka_queue_destroy);
  rd_kafka_DeleteTopic_t* spec = rd_kafka_DeleteTopic_new(topic.c_str());
  rd_kafka_AdminOptions_t* options = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DELETETOPICS);
  char errstr[256];
  rd_kafka_AdminOptions_set_request_timeout(options, kMetadataTimeoutMs, errstr, sizeof errstr);
  rd_kafka_DeleteTopics(rk, &spec, 1, options, queue.get());
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_DeleteTopic_destroy(spec);
  auto [err, reason] = topicResult(queue.get(), bootstrap, "deletion", topic);
  if (err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) return false;
  if (err) {
    throw SqlError(sqlstate::kConnectionFailure,
                   fmt::format("cannot delete topic '{}' on {}: {}", topic, bootstrap, reason),
                   SqlError::npos,
                   "delete it with kafka-topics.sh --delete, or check the broker's ACLs");
  }
  return true;
}

}  // namespace

int sinkTopicPartitions(const Options& options) {
  if (!options.has(kTopicPartitionsOption)) return -1;
  return static_cast<int>(options.getInt(kTopicPartitionsOption, 1, 1, kMaxTopicPartitions));
}

void ensureSinkTopic(rd_kafka_t* rk, const std::string& bootstrap, const std::string& topic,
                     int partitions) {
  bool created = false;
  if (EmbeddedKafka* embedded = EmbeddedKafka::find(bootstrap)) {
    created = embedded->createTopic(topic, partitions);
  } else if (existingPartitions(rk, bootstrap, topic) == 0) {
    created = createTopic(rk, bootstrap, topic, partitions, {});
  }
  if (created) return;
  // The topic was there (or another flow created it meanwhile): it must have
  // the count asked for.
  int count = partitionCounts(rk, {topic}, bootstrap).front();
  if (count != partitions) {
    throw SqlError(
        sqlstate::kObjectNotInPrerequisiteState,
        fmt::format("topic '{}' on {} has {} partition{}; the sink's '{}' asks for {}", topic,
                    bootstrap, count, count == 1 ? "" : "s", kTopicPartitionsOption, partitions),
        SqlError::npos,
        fmt::format("set '{}' = '{}', drop the option to write into the topic as it is, or "
                    "write into a new topic",
                    kTopicPartitionsOption, count));
  }
}

bool ensureTopicExists(rd_kafka_t* rk, const std::string& bootstrap, const std::string& topic,
                       int partitions, const TopicConfigs& configs) {
  if (EmbeddedKafka* embedded = EmbeddedKafka::find(bootstrap)) {
    return embedded->createTopic(topic, partitions);
  }
  if (existingPartitions(rk, bootstrap, topic) > 0) return false;
  return createTopic(rk, bootstrap, topic, partitions, configs);
}

InternalTopic ensureInternalTopic(rd_kafka_t* rk, const std::string& bootstrap,
                                  const std::string& topic, int partitions,
                                  const TopicConfigs& configs, int waitMs, const std::string& hint) {
  InternalTopic out;
  try {
    ensureTopicExists(rk, bootstrap, topic, partitions, configs);
  } catch (const SqlError& e) {
    out.notCreated = e.message();
  }
  const int64_t knownBy = monotonicMicros() + int64_t(waitMs) * 1000;
  for (int attempt = 1;; ++attempt) {
    try {
      out.partitions = partitionCounts(rk, {topic}, bootstrap).front();
      return out;
    } catch (const SqlError& e) {
      if (e.sqlstate() != sqlstate::kUndefinedObject || monotonicMicros() > knownBy ||
          attempt >= 1000) {
        // The topic is not there, and creating it failed: that is the cause.
        if (e.sqlstate() == sqlstate::kUndefinedObject && !out.notCreated.empty()) {
          throw SqlError(sqlstate::kConnectionFailure, out.notCreated, SqlError::npos, hint);
        }
        throw;
      }
      // A stop of the waiting thread ends the wait for the topic.
      throwIfInterrupted();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
}

bool deleteInternalTopic(rd_kafka_t* rk, const std::string& bootstrap, const std::string& topic,
                         int waitMs) {
  if (EmbeddedKafka::find(bootstrap) || isEmbeddedBroker(rk)) return false;
  // Deleted when the broker's listing no longer has it: a deletion the
  // broker accepted takes a moment to show there, a request may time out on
  // a loaded broker, and a client elsewhere that still wrote to the topic
  // could have had it created again (an Apache Kafka with
  // auto.create.topics.enable, and a client that asks for it: none of
  // rtsqld's do). So the deletion is asked again until the topic is gone.
  const int64_t deadline = monotonicMicros() + int64_t(waitMs) * 1000;
  bool deleted = false;
  std::string why;
  for (int attempt = 1;; ++attempt) {
    try {
      deleted = requestDeletion(rk, bootstrap, topic) || deleted;
      // Listed for a while after an accepted deletion: looked at again
      // before the deletion is asked again.
      const int64_t listedBy = std::min(deadline, monotonicMicros() + kListedAfterDeletionMicros);
      bool listed;
      while ((listed = existingPartitions(rk, bootstrap, topic) > 0) && monotonicMicros() < listedBy)
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (!listed) return deleted;
      why = "still listed after its deletion";
    } catch (const SqlError& e) {
      why = e.message();
    }
    if (monotonicMicros() > deadline) {
      throw SqlError(sqlstate::kConnectionFailure,
                     fmt::format("topic '{}' on {} is still there after {} attempts to delete it "
                                 "within {} s: {}",
                                 topic, bootstrap, attempt, waitMs / 1000, why),
                     SqlError::npos,
                     "delete it with kafka-topics.sh --delete, or check the broker's ACLs");
    }
    logLine(fmt::format("internal topic '{}' on {}: {}; deleting it again (attempt {})", topic,
                        bootstrap, why, attempt + 1));
    // A cancelled statement or a stopping server ends the retries (the
    // caller leaves the copy to the slot's next holder).
    throwIfInterrupted();
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(200 * attempt, 2000)));
  }
}

}  // namespace rtsql::kafka
