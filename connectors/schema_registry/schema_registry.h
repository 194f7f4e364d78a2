// A client of a Confluent-compatible schema registry ('schema.registry.url'):
// the writer's schema of a source's record fetched by the id its framing
// names, and a sink's schema registered under its topic's subject.
//
//   CREATE SOURCE s WITH (..., format = 'avro',
//                         'schema.registry.url' = 'http://127.0.0.1:8081');
//
// A framed value is the magic byte 0, the schema id as 4 big-endian bytes,
// then the datum. The calls (Confluent's REST API, which Apicurio serves under
// /apis/ccompat/v7):
//   GET  {url}/schemas/ids/{id}                             a schema by id
//   GET  {url}/subjects/{subject}/versions/latest           a subject's latest
//   POST {url}/subjects/{subject}/versions                  register, answers the id
//   POST {url}/compatibility/subjects/{subject}/versions/latest
// Each is one HTTP/1.1 exchange (http or https, optional basic auth from
// 'schema.registry.basic.auth.user.info' = 'user:password') bounded by
// 'schema.registry.timeout.ms' for the connection and each of its steps.
// Schemas by id never change, so they are cached (at most kCachedSchemas per
// registry); a process shares one client, and so one cache, per URL and user.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/options.h"
#include "connectors/http/http_sink.h"

namespace rtsql::schema_registry {

inline constexpr const char* kUrlOption = "schema.registry.url";
inline constexpr const char* kUserInfoOption = "schema.registry.basic.auth.user.info";
inline constexpr const char* kTimeoutOption = "schema.registry.timeout.ms";
// How many schemas a client keeps by id; the least recently used goes first.
inline constexpr size_t kCachedSchemas = 1000;

// The framing of a value: magic byte 0, then the schema id (big-endian).
inline constexpr size_t kFramingBytes = 5;
// The id of a framed value, and where its datum starts; false with `error`
// set when `len` bytes do not start with the framing.
bool readFraming(const char* data, size_t len, int32_t& id, std::string& error);
// Appends the framing of `id` to `out`.
void appendFraming(std::string& out, int32_t id);

// The options of a registry, checked.
struct RegistryConfig {
  std::string url;  // as written, without a trailing '/'
  HttpUrl base;
  std::string userInfo;  // 'user:password', or empty
  int64_t timeoutMs = 10000;
  std::string key() const { return url + '\n' + userInfo; }
};

// Whether the options name a registry.
bool hasRegistry(const Options& options);
// The registry's options; 22023 at the value at fault (a URL that is not
// http(s), user info without ':', a timeout out of 1..600000).
RegistryConfig registryConfig(const Options& options);
// The registry option keys a connector accepts.
const std::vector<std::string>& registryOptionKeys();

// The registry's answers, as the JSON it sends.
// {"schema": "..."} (a schema by id, or a subject's version): the schema text.
std::optional<std::string> parseSchemaAnswer(std::string_view body);
// {"id": N}: the id.
std::optional<int32_t> parseIdAnswer(std::string_view body);
// {"is_compatible": true|false, "messages": [...]}: the verdict, and the
// registry's reasons joined when it gives some.
std::optional<bool> parseCompatibilityAnswer(std::string_view body, std::string& reasons);
// {"error_code": N, "message": "..."}: the message (empty when there is none).
std::string parseErrorMessage(std::string_view body, int* errorCode = nullptr);
// The body that registers or checks `schema` of `schemaType` (AVRO, PROTOBUF).
std::string schemaRequestBody(std::string_view schema, std::string_view schemaType);

// A call that did not give what was asked.
struct RegistryError {
  enum class Kind {
    Unreachable,  // no connection, a timeout, a 5xx
    NotFound,     // 404: no such id or subject
    Refused       // any other answer, or one that cannot be read
  };
  Kind kind;
  std::string message;  // names the registry, the call and its answer
};

class SchemaRegistryClient {
 public:
  explicit SchemaRegistryClient(RegistryConfig config) : config_(std::move(config)) {}

  // The client of `config`'s registry that this process shares.
  static std::shared_ptr<SchemaRegistryClient> shared(const RegistryConfig& config);

  // The schema registered with `id`: from the cache, else fetched once.
  // nullopt with `error` set when it cannot be had.
  std::optional<std::string> schemaById(int32_t id, RegistryError& error);
  // The latest schema of `subject`, and its id.
  std::optional<std::pair<int32_t, std::string>> latest(const std::string& subject,
                                                        RegistryError& error);
  // Registers `schema` under `subject` (the registry answers the existing id
  // when it is there already) and returns its id.
  std::optional<int32_t> registerSchema(const std::string& subject, const std::string& schema,
                                        const std::string& schemaType, RegistryError& error);
  // Whether `schema` may follow the latest version of `subject` under the
  // subject's compatibility rule; a subject with no version takes any.
  // `reasons` gets the registry's when it is not.
  std::optional<bool> compatible(const std::string& subject, const std::string& schema,
                                 const std::string& schemaType, std::string& reasons,
                                 RegistryError& error);

  const RegistryConfig& config() const { return config_; }
  // How many requests went to the registry (the cache's hits are not).
  int64_t requests() const;

 private:
  struct Answer {
    int status = 0;
    std::string body;
  };
  // One exchange: false with `error` (Unreachable) when there is no answer.
  bool call(const char* method, const std::string& path, const std::string& body, Answer& out,
            RegistryError& error);
  // `answer` as an error of `what` (a 404 is NotFound).
  RegistryError errorOf(const std::string& what, const Answer& answer) const;

  RegistryConfig config_;
  mutable std::mutex mu_;
  std::list<int32_t> order_;  // most recently used first
  std::unordered_map<int32_t, std::pair<std::string, std::list<int32_t>::iterator>> byId_;
  int64_t requests_ = 0;
};

// A subject's name for the values of `topic` (Confluent's TopicNameStrategy).
inline std::string valueSubject(const std::string& topic) {
  return topic + "-value";
}

}  // namespace rtsql::schema_registry
