// A client of a Confluent-compatible schema registry ('schema.registry.url'):
// the writer's schema of a source's record fetched by the id its framing
// names, and a sink's schema registered under its topic's subject.
//
//   CREATE SOURCE s WITH (..., format = 'avro',
//                         'schema.registry.url' = 'http://127.0.0.1:8081');
//
// A framed value is the magic byte 0, the schema id as 4 big-endian bytes,
// then (protobuf only) the message indexes, then the datum. The calls
// (Confluent's REST API, which Apicurio serves under /apis/ccompat/v7):
//   GET  {url}/schemas/ids/{id}                             a schema by id
//   GET  {url}/subjects/{subject}/versions/{version|latest} a subject's version
//   POST {url}/subjects/{subject}/versions                  register, answers the id
//   POST {url}/compatibility/subjects/{subject}/versions/latest
// Each is one HTTP/1.1 exchange (http or https, optional basic auth from
// 'schema.registry.basic.auth.user.info' = 'user:password') bounded by
// 'schema.registry.timeout.ms' (at most kMaxTimeoutMs) as a whole, through
// rtsqld's outbound client (connectors/net/http_client.h): the destination
// checked against the outbound policy, the answer's bytes capped, and a
// cancel, statement_timeout, STOP FLOW or shutdown ending the wait. An error
// says an answer's status and size, never its text.
// Schemas by id never change, so they are cached (at most kCachedSchemas per
// registry); a process shares one client, and so one cache, per URL and user.
// A schema may reference other subjects' versions (a protobuf schema's
// imports): referencedSchemas() fetches them, and theirs, with a bound.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/options.h"
#include "connectors/net/http_url.h"

namespace rtsql::schema_registry {

inline constexpr const char* kUrlOption = "schema.registry.url";
inline constexpr const char* kUserInfoOption = "schema.registry.basic.auth.user.info";
inline constexpr const char* kTimeoutOption = "schema.registry.timeout.ms";
// The most 'schema.registry.timeout.ms' may say: a call waits at most this.
inline constexpr int64_t kMaxTimeoutMs = 60000;
// How many schemas a client keeps by id; the least recently used goes first.
inline constexpr size_t kCachedSchemas = 1000;

// The framing of a value: magic byte 0, then the schema id (big-endian).
inline constexpr size_t kFramingBytes = 5;
// The id of a framed value, and where its datum starts; false with `error`
// set when `len` bytes do not start with the framing.
bool readFraming(const char* data, size_t len, int32_t& id, std::string& error);
// Appends the framing of `id` to `out`.
void appendFraming(std::string& out, int32_t id);

// A protobuf value's framing goes on after the id with the message indexes:
// the path to the value's message among the schema's declarations (its
// index among the file's top-level messages, then among that message's
// nested ones, ...), as a zigzag varint count then each index as a zigzag
// varint; the count 0 (the single byte 0) stands for [0], the file's first
// message. A path is at most kMaxMessageIndexes long.
inline constexpr size_t kMaxMessageIndexes = 100;
// Reads the indexes at the start of `len` bytes at `data`: how many bytes
// they take (`used`) and the path, never empty; false with `error` set when
// the bytes are no such list.
bool readMessageIndexes(const char* data, size_t len, std::vector<int32_t>& indexes, size_t& used,
                        std::string& error);
// Appends the indexes of `path` (non-negative; [0] as the single byte 0).
void appendMessageIndexes(std::string& out, const std::vector<int32_t>& path);

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
// http(s) or has a query or fragment, user info without ':', a timeout out
// of 1..kMaxTimeoutMs).
RegistryConfig registryConfig(const Options& options);
// The registry option keys a connector accepts.
const std::vector<std::string>& registryOptionKeys();

// Another subject's version that a schema references, by the name the schema
// uses for it (a protobuf schema's import path).
struct SchemaReference {
  std::string name;
  std::string subject;
  int32_t version = 0;
};

// A registered schema: its text, its type (AVRO when the registry names
// none), and the schemas it references.
struct RegisteredSchema {
  std::string text;
  std::string type = "AVRO";
  std::vector<SchemaReference> references;
};

// A referenced schema with the name its referrer imports it by.
struct NamedSchema {
  std::string name;
  std::string text;
};

// Bounds of the schemas referencedSchemas() gathers for one schema: they
// are fetched one request each.
inline constexpr size_t kMaxReferencedSchemas = 64;

// The registry's answers, as the JSON it sends.
// {"schema": "...", "schemaType": "...", "references": [...]} (a schema by id,
// or a subject's version): the schema.
std::optional<RegisteredSchema> parseSchemaAnswer(std::string_view body);
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
  std::optional<RegisteredSchema> schemaById(int32_t id, RegistryError& error);
  // A version of `subject` ("latest", or its number as text), and its id.
  std::optional<std::pair<int32_t, RegisteredSchema>> version(const std::string& subject,
                                                              const std::string& version,
                                                              RegistryError& error);
  // The latest schema of `subject`, and its id.
  std::optional<std::pair<int32_t, RegisteredSchema>> latest(const std::string& subject,
                                                             RegistryError& error) {
    return version(subject, "latest", error);
  }
  // Every schema `schema` references, directly or through another, each
  // name once (the first reference to a name wins), those referenced first;
  // at most kMaxReferencedSchemas (Refused beyond).
  std::optional<std::vector<NamedSchema>> referencedSchemas(const RegisteredSchema& schema,
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
  std::unordered_map<int32_t, std::pair<RegisteredSchema, std::list<int32_t>::iterator>> byId_;
  int64_t requests_ = 0;
};

// A subject's name for the values of `topic` (Confluent's TopicNameStrategy).
inline std::string valueSubject(const std::string& topic) {
  return topic + "-value";
}

// What a decoder remembers of the ids whose writer's schema it could not
// have, so that a burst of their records is not a burst of requests: an id is
// not asked for again for kRetryNotFoundMicros (kRetryUnreachableMicros when
// the registry did not answer). At most kMaxFailedIds are kept.
class FailedSchemaIds {
 public:
  static constexpr int64_t kRetryUnreachableMicros = 1'000'000;
  static constexpr int64_t kRetryNotFoundMicros = 30'000'000;
  static constexpr size_t kMaxFailedIds = 1024;

  // Whether `id` failed lately (as of `now`, monotonic micros); `error`
  // gets the failure's message then. A failure whose wait is over is forgotten.
  bool recent(int32_t id, int64_t now, std::string& error);
  // Remembers that `id` failed with `why` and returns the decode error of
  // its records.
  std::string remember(int32_t id, const RegistryError& why, int64_t now);

 private:
  std::unordered_map<int32_t, std::pair<int64_t, std::string>> failures_;
};

}  // namespace rtsql::schema_registry
