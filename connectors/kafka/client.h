// Plumbing shared by the Kafka source and sink: resolving the bootstrap servers
// ('embedded' is the server's own broker), building librdkafka configurations
// from our defaults plus the user's `kafka.<name>` options, looking up topic
// partitions with a bounded wait, and routing librdkafka's logs to stderr
// without flooding it while a broker is down.
#pragma once

#include <librdkafka/rdkafka.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/options.h"

namespace rtsql::kafka {

// How long a metadata lookup may take before the broker counts as unreachable.
inline constexpr int kMetadataTimeoutMs = 5000;

// How long a seek may wait for the client's own thread to carry it out. No
// broker is asked: the wait is only for a thread that a loaded machine may
// not schedule for seconds, and a seek that times out fails the flow's
// restore, so the bound is generous.
inline constexpr int kSeekTimeoutMs = 30000;

// The value of 'kafka.bootstrap.servers' with 'embedded' replaced by
// `embeddedBootstrap`. Throws 55000 when 'embedded' is asked for and the server
// runs without an embedded broker, 22023 when the option is missing.
std::string resolveBootstrap(const Options& options, const std::string& embeddedBootstrap);

// The topics of a comma list, trimmed, empty entries dropped.
std::vector<std::string> splitTopics(const std::string& list);

// Sets one librdkafka property; an unknown name or a bad value is a SqlError
// 22023 at `pos` carrying librdkafka's own explanation.
void setProperty(rd_kafka_conf_t* conf, const std::string& name, const std::string& value,
                 size_t pos);
// Applies every `kafka.<name>` option as `<name>`, except bootstrap.servers
// (resolved separately). Positions are kept when `withPositions` (CREATE time).
void applyUserProperties(rd_kafka_conf_t* conf, const Options& options, bool withPositions);
// Checks the `kafka.<name>` options of a CREATE SOURCE or CREATE SINK as a
// client would take them, without connecting anywhere: sasl.mechanism and
// security.protocol against the values the client knows (it accepts any
// mechanism name and fails only when a client is made), every property
// against its table (setProperty), then the whole configuration by making a
// client that has no broker to reach (certificate files, mechanisms this
// build lacks). Throws SqlError 22023 at the option's value, with a hint.
void validateUserProperties(const Options& options);
// Routes librdkafka logs and client errors to stderr, rate limited per kind.
void installLogging(rd_kafka_conf_t* conf);

struct HandleDeleter {
  void operator()(rd_kafka_t* rk) const;
};
using HandlePtr = std::unique_ptr<rd_kafka_t, HandleDeleter>;
// Creates a client from `conf`, which it always consumes. A configuration
// librdkafka refuses (conflicting properties) is a SqlError 22023.
HandlePtr newHandle(rd_kafka_type_t type, rd_kafka_conf_t* conf);

using Settings = std::initializer_list<std::pair<const char*, const char*>>;
// A client of `type` for `bootstrap`, with logging installed and, in this
// order: `defaults` (ours), the user's `kafka.<name>` options from `options`
// (so they win over ours), then `fixed` (what no option may change). An
// option the client refuses is a SqlError 22023.
HandlePtr newClient(rd_kafka_type_t type, const std::string& bootstrap, const Options& options,
                    Settings defaults, Settings fixed);

// A client of rtsqld's own internal topics (a cluster's catalog, slots,
// progress, state copies, exchange topics): newClient without the user's
// options, and never asking the broker to create a topic on its own
// (refuseAutoCreate). rtsqld creates each internal topic explicitly, with its
// settings (a state copy compacted, say): one the broker made with its
// defaults would be wrong, and a client that still names a deleted topic (a
// dropped flow's copy) would bring it back. A consumer commits no offset by
// itself (enable.auto.commit and enable.auto.offset.store off).
HandlePtr newInternalClient(rd_kafka_type_t type, const std::string& bootstrap,
                            Settings defaults, Settings fixed);
// Sets allow.auto.create.topics=false on `conf` (librdkafka's producers ask
// for auto-creation by default, and Apache Kafka's auto.create.topics.enable
// is on by default), for an internal client made with newHandle.
void refuseAutoCreate(rd_kafka_conf_t* conf);

// The broker's last refusal of `rk`'s credentials (SASL or client
// certificate), as librdkafka reported it; nothing while none was refused.
// Clients report it only when their configuration has installLogging.
std::optional<std::string> authenticationFailure(const rd_kafka_t* rk);
// SqlError "Kafka authentication failed at <bootstrap>: <reason>" for client
// `rk`: 28000 when the broker refused the client certificate (a TLS alert),
// else 28P01 (SASL), with a hint naming the options that hold the credentials
// (and, for SCRAM with a librdkafka older than 2.6.1, why Apache Kafka 4
// refuses any password).
SqlError authenticationError(const rd_kafka_t* rk, const std::string& bootstrap,
                             const std::string& reason);

// Partition count of each of `topics`, in order. Throws 42704 for a topic the
// broker does not have, 28P01 or 28000 (authenticationError) as soon as the broker
// refuses the client's credentials, and 08006 when the broker cannot be
// reached within `timeoutMs`.
std::vector<int> partitionCounts(rd_kafka_t* rk, const std::vector<std::string>& topics,
                                 const std::string& bootstrap, int timeoutMs = kMetadataTimeoutMs);

// Queues one record, copied, for partition `partition` of `topic`: `key`, and
// `value` (null: a tombstone). A full queue drains as the broker acknowledges:
// waits for room up to `queueFullWaitMs`. Returns librdkafka's error (0:
// queued; RD_KAFKA_RESP_ERR__QUEUE_FULL when still full).
rd_kafka_resp_err_t produceRecord(rd_kafka_t* rk, const std::string& topic, int32_t partition,
                                  std::string_view key, const std::string* value,
                                  int queueFullWaitMs = 30000);
// The id of the Kafka cluster `rk` talks to ("" when it cannot be learnt
// within `timeoutMs`).
std::string clusterId(rd_kafka_t* rk, int timeoutMs = kMetadataTimeoutMs);
// Whether `rk` talks to an embedded broker (librdkafka's mock cluster, in
// this process or another rtsqld), which has no real transactions and takes
// no admin requests. False when the cluster's id cannot be learnt in time.
bool isEmbeddedBroker(rd_kafka_t* rk, int timeoutMs = kMetadataTimeoutMs);
// When `bootstrap` is the embedded broker, creates the missing topics there
// with its default partition count and returns true. On the local broker
// (--local-kafka) it creates them too (LocalKafka::ensureTopics) but returns
// false: that one is a real Apache Kafka.
bool ensureEmbeddedTopics(const std::string& bootstrap, const std::vector<std::string>& topics);

}  // namespace rtsql::kafka
