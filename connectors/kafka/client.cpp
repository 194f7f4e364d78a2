#include "connectors/kafka/client.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/json.h"
#include "common/schema.h"
#include "connectors/embedded/broker.h"
#include "connectors/kafka/main_thread_timers.h"
#include "connectors/local/broker.h"

namespace rtsql::kafka {

namespace {

constexpr std::string_view kBootstrapKey = "kafka.bootstrap.servers";
// How often a metadata wait looks for a refused login.
constexpr int kAuthCheckMs = 250;

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\n' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

// A broker that is down makes librdkafka report the same failure every few
// hundred milliseconds; one line per kind of message every 10 s is enough to
// tell the operator without burying everything else.
bool shouldLog(const std::string& kind) {
  static std::mutex mutex;
  static std::unordered_map<std::string, int64_t> last;
  constexpr int64_t kQuietMicros = 10'000'000;
  int64_t now = monotonicMicros();
  std::lock_guard lock(mutex);
  auto [it, inserted] = last.try_emplace(kind, now);
  if (inserted) return true;
  if (now - it->second < kQuietMicros) return false;
  it->second = now;
  return true;
}

void logCallback(const rd_kafka_t* rk, int level, const char* fac, const char* buf) {
  // Levels follow syslog: 0..3 are errors, 4 warnings, 5 and 6 chatter. 7 is
  // the client's debug output, which it writes only for the contexts a
  // 'kafka.debug' option asked for: all of it is shown.
  if (level == 7) {
    fmt::print(stderr, "{} rtsql: kafka {} {}: {}\n", formatTimestamp(nowMicros(), true),
               rd_kafka_name(rk), fac, buf);
    return;
  }
  if (level > 4) return;
  // Sources and sinks pass the same 'kafka.<name>' options to producers and
  // consumers, so the warnings about a property meant for the other kind are
  // expected, not news.
  // AUTOCREATE only says that an old broker (or the embedded one) may create
  // topics on lookup; FAIL repeats what the error callback reports.
  std::string_view f(fac);
  if (f == "CONFWARN" || f == "AUTOCREATE" || f == "FAIL") return;
  if (!shouldLog(std::string(rd_kafka_name(rk)) + fac)) return;
  fmt::print(stderr, "rtsql: kafka {} {}: {}\n", rd_kafka_name(rk), fac, buf);
}

// The broker's refusal of each client's credentials, as the error callback
// last reported it: the client itself only retries, and a metadata request
// that waits on it ends in a timeout that does not say why.
std::mutex authMutex;
std::unordered_map<const rd_kafka_t*, std::string> authFailures;
// authFailures.size(), read without the lock: a sink asks after every record.
std::atomic<size_t> authFailureCount{0};

// Whether `reason` is a TLS alert the broker sent about the client's
// certificate: it refused the certificate, or its absence, when the
// listener requires one. (The client's own refusal of the broker's
// certificate reads "certificate verify failed", which is no such alert.)
bool refusesCertificate(std::string_view reason) {
  if (reason.find("alert") == std::string_view::npos) return false;
  for (std::string_view alert :
       {"bad certificate", "certificate required", "unknown ca", "certificate unknown",
        "certificate expired", "certificate revoked", "unsupported certificate"}) {
    if (reason.find(alert) != std::string_view::npos) return true;
  }
  return false;
}

bool isAuthenticationError(int err, std::string_view reason) {
  return err == RD_KAFKA_RESP_ERR__AUTHENTICATION ||
         err == RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED || refusesCertificate(reason);
}

void forgetAuthenticationFailure(const rd_kafka_t* rk) {
  if (authFailureCount.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard lock(authMutex);
  authFailures.erase(rk);
  authFailureCount.store(authFailures.size(), std::memory_order_relaxed);
}

void errorCallback(rd_kafka_t* rk, int err, const char* reason, void*) {
  if (isAuthenticationError(err, reason)) {
    std::lock_guard lock(authMutex);
    authFailures[rk] = reason;
    authFailureCount.store(authFailures.size(), std::memory_order_relaxed);
  }
  if (!shouldLog(std::string(rd_kafka_name(rk)) + std::to_string(err))) return;
  fmt::print(stderr, "rtsql: kafka {}: {} ({}); retrying\n", rd_kafka_name(rk), reason,
             rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err)));
}

}  // namespace

std::string resolveBootstrap(const Options& options, const std::string& embeddedBootstrap) {
  const OptionEntry* e = options.find(kBootstrapKey);
  if (!e || trim(e->value).empty()) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   "option 'kafka.bootstrap.servers' is required", SqlError::npos,
                   "set 'kafka.bootstrap.servers' = 'host:port' or 'embedded'");
  }
  std::string value = trim(e->value);
  if (iequals(value, "local")) {
    std::string local = LocalKafka::runningBootstrap();
    if (local.empty()) {
      throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                     "'kafka.bootstrap.servers' = 'local' needs the local Kafka broker, which "
                     "this server does not run",
                     SqlError::npos, "start rtsqld with --local-kafka");
    }
    return local;
  }
  if (!iequals(value, "embedded")) return value;
  if (embeddedBootstrap.empty()) {
    throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                   "'kafka.bootstrap.servers' = 'embedded' needs the embedded Kafka broker, "
                   "which this server does not run",
                   SqlError::npos, "start rtsqld with --embedded-kafka");
  }
  return embeddedBootstrap;
}

std::vector<std::string> splitTopics(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string t = trim(std::string_view(list).substr(start, comma - start));
    if (!t.empty()) out.push_back(std::move(t));
    start = comma + 1;
  }
  return out;
}

namespace {

// What librdkafka's own property table (rd_kafka_conf_properties_show, the
// source of its CONFIGURATION.md) says property `name` takes: "valid values:
// a, b" for an enum or a set of flags, "valid range: 0 .. 10" for a number;
// empty for other kinds and for names it does not have.
std::string allowedValues(const std::string& name) {
  char* text = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&text, &size);
  if (!out) return {};
  rd_kafka_conf_properties_show(out);
  std::fclose(out);
  std::string table(text, size);
  std::free(text);
  size_t start = 0;
  while (start < table.size()) {
    size_t end = table.find('\n', start);
    if (end == std::string::npos) end = table.size();
    std::string_view line(table.data() + start, end - start);
    start = end + 1;
    // Property | C/P | Range | Default | Importance | Description ... *Type: kind*
    size_t bar = line.find('|');
    if (bar == std::string_view::npos || trim(line.substr(0, bar)) != name) continue;
    size_t rangeStart = line.find('|', bar + 1);
    if (rangeStart == std::string_view::npos) return {};
    size_t rangeEnd = line.find('|', rangeStart + 1);
    if (rangeEnd == std::string_view::npos) return {};
    std::string range = trim(line.substr(rangeStart + 1, rangeEnd - rangeStart - 1));
    if (range.empty()) return {};
    if (line.find("*Type: enum value*") != std::string_view::npos ||
        line.find("*Type: CSV flags*") != std::string_view::npos) {
      return "valid values: " + range;
    }
    if (line.find("*Type: integer*") != std::string_view::npos ||
        line.find("*Type: float*") != std::string_view::npos) {
      return "valid range: " + range;
    }
    return {};
  }
  return {};
}

}  // namespace

void setProperty(rd_kafka_conf_t* conf, const std::string& name, const std::string& value,
                 size_t pos) {
  char errstr[512];
  if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), errstr, sizeof errstr) !=
      RD_KAFKA_CONF_OK) {
    std::string allowed = allowedValues(name);
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("invalid Kafka client option 'kafka.{}': {}", name, errstr), pos,
                   allowed.empty() ? "options 'kafka.<name>' are passed to the Kafka client "
                                     "(librdkafka) as '<name>'; see its CONFIGURATION.md"
                                   : allowed);
  }
}

void applyUserProperties(rd_kafka_conf_t* conf, const Options& options, bool withPositions) {
  for (const OptionEntry& e : options.entries()) {
    if (e.key.size() <= 6 || !iequals(std::string_view(e.key).substr(0, 6), "kafka.")) continue;
    std::string name = e.key.substr(6);
    if (iequals(name, "bootstrap.servers")) continue;
    setProperty(conf, name, e.value, withPositions ? e.valuePos : SqlError::npos);
  }
}

namespace {

// The values librdkafka takes; SASL mechanism names are case-sensitive, the
// protocol is not.
constexpr std::string_view kSaslMechanisms[] = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512",
                                                "GSSAPI", "OAUTHBEARER"};
constexpr std::string_view kSecurityProtocols[] = {"plaintext", "ssl", "sasl_plaintext",
                                                   "sasl_ssl"};

template <size_t N>
void requireOneOf(const OptionEntry& e, const std::string_view (&valid)[N], bool caseSensitive) {
  for (std::string_view v : valid) {
    if (caseSensitive ? e.value == v : iequals(e.value, v)) return;
  }
  std::string list;
  for (std::string_view v : valid) list += fmt::format("{}{}", list.empty() ? "" : ", ", v);
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("invalid value '{}' for option '{}'", e.value, e.key), e.valuePos,
                 fmt::format("valid values: {}", list));
}

void quietLog(const rd_kafka_t*, int, const char*, const char*) {}

}  // namespace

void validateUserProperties(const Options& options) {
  for (const OptionEntry& e : options.entries()) {
    if (iequals(e.key, "kafka.sasl.mechanism") || iequals(e.key, "kafka.sasl.mechanisms")) {
      requireOneOf(e, kSaslMechanisms, true);
    } else if (iequals(e.key, "kafka.security.protocol")) {
      requireOneOf(e, kSecurityProtocols, false);
    }
  }
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  try {
    applyUserProperties(conf, options, true);
  } catch (...) {
    rd_kafka_conf_destroy(conf);
    throw;
  }
  // The check client must not run the Kerberos login command, and its
  // warnings (no bootstrap servers, properties of the other client kind) are
  // expected. Without bootstrap servers it never connects.
  char ignored[256];
  rd_kafka_conf_set(conf, "sasl.kerberos.min.time.before.relogin", "0", ignored, sizeof ignored);
  rd_kafka_conf_set_log_cb(conf, quietLog);
  char errstr[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("the Kafka client refuses these 'kafka.<name>' options: {}", errstr),
                   SqlError::npos,
                   "options 'kafka.<name>' are passed to the Kafka client (librdkafka) as "
                   "'<name>'; see its CONFIGURATION.md");
  }
  rd_kafka_destroy(rk);
}

void installLogging(rd_kafka_conf_t* conf) {
  rd_kafka_conf_set_log_cb(conf, logCallback);
  rd_kafka_conf_set_error_cb(conf, errorCallback);
}

void HandleDeleter::operator()(rd_kafka_t* rk) const {
  if (!rk) return;
  rd_kafka_destroy(rk);
  forgetAuthenticationFailure(rk);
}

std::optional<std::string> authenticationFailure(const rd_kafka_t* rk) {
  if (authFailureCount.load(std::memory_order_relaxed) == 0) return std::nullopt;
  std::lock_guard lock(authMutex);
  auto it = authFailures.find(rk);
  if (it == authFailures.end()) return std::nullopt;
  return it->second;
}

SqlError authenticationError(const rd_kafka_t* rk, const std::string& bootstrap,
                             const std::string& reason) {
  if (refusesCertificate(reason)) {
    return SqlError(sqlstate::kInvalidAuthorization,
                    fmt::format("Kafka authentication failed at {}: the broker refused the client "
                                "certificate: {}",
                                bootstrap, reason),
                    SqlError::npos,
                    "check 'kafka.ssl.certificate.location' and 'kafka.ssl.key.location': the "
                    "listener requires a certificate signed by a CA it trusts");
  }
  std::string hint =
      "check 'kafka.sasl.username' and 'kafka.sasl.password' (SASL), or "
      "'kafka.ssl.certificate.location' and 'kafka.ssl.key.location' (client certificates)";
  // librdkafka before 2.6.1 repeats the client's nonce in its last SCRAM
  // message; Apache Kafka 4 refuses it whatever the password.
  char mechanism[64] = "";
  size_t size = sizeof mechanism;
  if (rd_kafka_conf_get(rd_kafka_conf(const_cast<rd_kafka_t*>(rk)), "sasl.mechanisms", mechanism,
                        &size) != RD_KAFKA_CONF_OK) {
    mechanism[0] = 0;
  }
  if (std::string_view(mechanism).starts_with("SCRAM") && rd_kafka_version() < 0x020601ff) {
    hint += fmt::format(
        "; this Kafka client (librdkafka {}) cannot complete SCRAM with Apache Kafka 4.0 or "
        "later, which refuses every SCRAM login from librdkafka before 2.6.1: use PLAIN over "
        "SASL_SSL or client certificates with such a broker",
        rd_kafka_version_str());
  }
  return SqlError(sqlstate::kInvalidPassword,
                  fmt::format("Kafka authentication failed at {}: {}", bootstrap, reason),
                  SqlError::npos, hint);
}

HandlePtr newHandle(rd_kafka_type_t type, rd_kafka_conf_t* conf) {
  calmMainThreadTimers(conf);
  char errstr[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf, errstr, sizeof errstr);
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    throw SqlError(sqlstate::kInvalidParameterValue,
                   std::string("cannot create the Kafka client: ") + errstr, SqlError::npos,
                   "check the 'kafka.<name>' options");
  }
  // A client destroyed without HandleDeleter may have left its failure
  // under the address this one now has.
  forgetAuthenticationFailure(rk);
  return HandlePtr(rk);
}

namespace {

// newClient, and with `internal` refuseAutoCreate last, so that nothing
// asks for auto-creation.
HandlePtr makeClient(rd_kafka_type_t type, const std::string& bootstrap, const Options& options,
                     Settings defaults, Settings fixed, bool internal) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  try {
    installLogging(conf);
    for (const auto& [name, value] : defaults) setProperty(conf, name, value, SqlError::npos);
    applyUserProperties(conf, options, false);
    for (const auto& [name, value] : fixed) setProperty(conf, name, value, SqlError::npos);
    if (internal) {
      refuseAutoCreate(conf);
      // An internal reader stores and commits the offsets it means to, itself.
      if (type == RD_KAFKA_CONSUMER) {
        setProperty(conf, "enable.auto.commit", "false", SqlError::npos);
        setProperty(conf, "enable.auto.offset.store", "false", SqlError::npos);
      }
    }
    setProperty(conf, "bootstrap.servers", bootstrap, SqlError::npos);
  } catch (...) {
    rd_kafka_conf_destroy(conf);
    throw;
  }
  return newHandle(type, conf);
}

}  // namespace

HandlePtr newClient(rd_kafka_type_t type, const std::string& bootstrap, const Options& options,
                    Settings defaults, Settings fixed) {
  return makeClient(type, bootstrap, options, defaults, fixed, false);
}

void refuseAutoCreate(rd_kafka_conf_t* conf) {
  setProperty(conf, "allow.auto.create.topics", "false", SqlError::npos);
}

HandlePtr newInternalClient(rd_kafka_type_t type, const std::string& bootstrap,
                            Settings defaults, Settings fixed) {
  return makeClient(type, bootstrap, Options(), defaults, fixed, true);
}

std::vector<int> partitionCounts(rd_kafka_t* rk, const std::vector<std::string>& topics,
                                 const std::string& bootstrap, int timeoutMs) {
  std::vector<int> counts;
  const int64_t deadline = monotonicMicros() + int64_t(timeoutMs) * 1000;
  for (const std::string& topic : topics) {
    rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
    if (!rkt) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("invalid topic name '{}': {}", topic,
                                 rd_kafka_err2str(rd_kafka_last_error())));
    }
    int count = -1;
    // A topic that was just created may have no leader yet: ask again until the
    // deadline rather than failing on the first answer.
    for (;;) {
      // The asking thread's stop (a server that stops while it starts a
      // flow, a cancelled statement) ends the wait between two asks.
      try {
        throwIfInterrupted();
      } catch (const Interrupted&) {
        rd_kafka_topic_destroy(rkt);
        throw;
      }
      int remainingMs = static_cast<int>((deadline - monotonicMicros()) / 1000);
      const struct rd_kafka_metadata* md = nullptr;
      // The client retries a refused login until the deadline; asking in
      // short slices lets the refusal end the wait as soon as it is known.
      rd_kafka_resp_err_t err =
          rd_kafka_metadata(rk, 0, rkt, &md, std::clamp(remainingMs, 1, kAuthCheckMs));
      if (err) {
        // A producer's error callback runs when it is polled (a consumer's
        // would take records here: it is left alone). A refused login fails
        // the request as the client's thread queues its report: waiting a
        // moment lets the report be the answer.
        if (rd_kafka_type(rk) == RD_KAFKA_PRODUCER) {
          rd_kafka_poll(rk, err == RD_KAFKA_RESP_ERR__TIMED_OUT ? 0 : kAuthCheckMs);
        }
        if (std::optional<std::string> refused = authenticationFailure(rk)) {
          rd_kafka_topic_destroy(rkt);
          throw authenticationError(rk, bootstrap, *refused);
        }
        // A connection lost mid-request (as a refused login loses it) is
        // retried like a slow answer, until the deadline.
        bool retry = err == RD_KAFKA_RESP_ERR__TIMED_OUT || err == RD_KAFKA_RESP_ERR__TRANSPORT;
        if (retry && monotonicMicros() < deadline) continue;
        rd_kafka_topic_destroy(rkt);
        throw SqlError(sqlstate::kConnectionFailure,
                       fmt::format("cannot reach Kafka at {} within {} s: {}", bootstrap,
                                   (timeoutMs + 999) / 1000, rd_kafka_err2str(err)),
                       SqlError::npos,
                       "check 'kafka.bootstrap.servers' and that the broker is running");
      }
      rd_kafka_resp_err_t terr = md->topic_cnt > 0 ? md->topics[0].err : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
      int parts = md->topic_cnt > 0 ? md->topics[0].partition_cnt : 0;
      rd_kafka_metadata_destroy(md);
      if (terr == RD_KAFKA_RESP_ERR_NO_ERROR && parts > 0) {
        count = parts;
        break;
      }
      bool transient = terr == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
                       (terr == RD_KAFKA_RESP_ERR_NO_ERROR && parts == 0);
      if (!transient || monotonicMicros() >= deadline) {
        rd_kafka_topic_destroy(rkt);
        if (terr == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || terr == RD_KAFKA_RESP_ERR_NO_ERROR) {
          throw SqlError(sqlstate::kUndefinedObject,
                         fmt::format("topic '{}' does not exist on {}", topic, bootstrap),
                         SqlError::npos,
                         "create the topic first (kafka-topics.sh --create), or use "
                         "'kafka.bootstrap.servers' = 'embedded', where topics are created "
                         "on demand");
        }
        throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                       fmt::format("topic '{}' on {} is not usable: {}", topic, bootstrap,
                                   rd_kafka_err2str(terr)));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    rd_kafka_topic_destroy(rkt);
    counts.push_back(count);
  }
  return counts;
}

bool ensureEmbeddedTopics(const std::string& bootstrap, const std::vector<std::string>& topics) {
  EmbeddedKafka* broker = EmbeddedKafka::find(bootstrap);
  if (!broker) {
    // The local broker is a real one (false), but makes topics on demand too.
    LocalKafka::ensureTopics(bootstrap, topics);
    return false;
  }
  for (const std::string& t : topics) broker->ensureTopic(t);
  return true;
}

rd_kafka_resp_err_t produceRecord(rd_kafka_t* rk, const std::string& topic, int32_t partition,
                                  std::string_view key, const std::string* value,
                                  int queueFullWaitMs) {
  rd_kafka_vu_t vus[5];
  vus[0].vtype = RD_KAFKA_VTYPE_TOPIC;
  vus[0].u.cstr = topic.c_str();
  vus[1].vtype = RD_KAFKA_VTYPE_PARTITION;
  vus[1].u.i32 = partition;
  vus[2].vtype = RD_KAFKA_VTYPE_KEY;
  vus[2].u.mem.ptr = const_cast<char*>(key.data());
  vus[2].u.mem.size = key.size();
  vus[3].vtype = RD_KAFKA_VTYPE_VALUE;
  vus[3].u.mem.ptr = value ? const_cast<char*>(value->data()) : nullptr;
  vus[3].u.mem.size = value ? value->size() : 0;
  vus[4].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
  vus[4].u.i = RD_KAFKA_MSG_F_COPY;
  constexpr int kPollMs = 10;
  for (int waited = 0;; waited += kPollMs) {
    rd_kafka_error_t* error = rd_kafka_produceva(rk, vus, 5);
    if (!error) return RD_KAFKA_RESP_ERR_NO_ERROR;
    rd_kafka_resp_err_t code = rd_kafka_error_code(error);
    rd_kafka_error_destroy(error);
    if (code != RD_KAFKA_RESP_ERR__QUEUE_FULL || waited >= queueFullWaitMs) return code;
    rd_kafka_poll(rk, kPollMs);
  }
}

std::string clusterId(rd_kafka_t* rk, int timeoutMs) {
  std::string out;
  if (char* id = rd_kafka_clusterid(rk, timeoutMs)) {
    out = id;
    rd_kafka_mem_free(rk, id);
  }
  return out;
}

bool isEmbeddedBroker(rd_kafka_t* rk, int timeoutMs) {
  return clusterId(rk, timeoutMs).starts_with("mockCluster");
}

}  // namespace rtsql::kafka
