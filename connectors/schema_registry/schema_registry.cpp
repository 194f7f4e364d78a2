// The schema registry client (see schema_registry.h).
#include "connectors/schema_registry/schema_registry.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>

#include "common/error.h"
#include "common/functions/internal.h"
#include "common/json.h"
#include "connectors/net/http_client.h"

namespace rtsql::schema_registry {

namespace dom = simdjson::dom;

namespace {

// The largest answer read: a registry's schema is JSON of at most a few
// hundred KiB; a larger answer is refused while it arrives.
constexpr uint64_t kMaxAnswer = 16 << 20;
// How much of a compatibility check's reasons an error quotes.
constexpr size_t kMaxReasons = 1000;

// What an error says of an answer: its size, never its text, which may be
// anything the server had (the registry's URL is the user's to choose).
std::string sizeOf(const std::string& body) {
  return fmt::format("{} bytes", body.size());
}

// `subject` as one segment of a request's path: anything but letters,
// digits and -._~ percent-encoded (a referenced subject is often a path,
// "shop/common.proto").
std::string pathSegment(std::string_view subject) {
  std::string out;
  for (char c : subject) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

std::optional<dom::element> parseJson(dom::parser& parser, std::string_view body) {
  dom::element doc;
  if (parser.parse(body.data(), body.size()).get(doc) != simdjson::SUCCESS) return std::nullopt;
  return doc;
}

}  // namespace

bool readFraming(const char* data, size_t len, int32_t& id, std::string& error) {
  if (!data || len < kFramingBytes) {
    error = fmt::format(
        "a value of {} bytes is too short for the schema registry's framing "
        "(magic byte 0 and a 4-byte schema id)",
        data ? len : 0);
    return false;
  }
  if (data[0] != 0) {
    error = fmt::format("magic byte {} where the schema registry's framing has 0",
                        static_cast<unsigned>(static_cast<unsigned char>(data[0])));
    return false;
  }
  const auto* p = reinterpret_cast<const unsigned char*>(data) + 1;
  const uint32_t u =
      (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
  id = static_cast<int32_t>(u);
  return true;
}

namespace {

// A zigzag varint of at most 5 bytes (an int32, as Confluent writes them).
bool readZigzag32(const unsigned char*& p, const unsigned char* end, int64_t& out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (p == end) return false;
    const unsigned char b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      if (v > UINT32_MAX) return false;
      out = static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
      return true;
    }
  }
  return false;
}

void appendZigzag32(std::string& out, int32_t v) {
  uint32_t z = (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31);
  while (z >= 0x80) {
    out += static_cast<char>((z & 0x7f) | 0x80);
    z >>= 7;
  }
  out += static_cast<char>(z);
}

}  // namespace

bool readMessageIndexes(const char* data, size_t len, std::vector<int32_t>& indexes, size_t& used,
                        std::string& error) {
  const auto* start = reinterpret_cast<const unsigned char*>(data);
  const unsigned char* p = start;
  const unsigned char* end = start + (data ? len : 0);
  indexes.clear();
  int64_t count = 0;
  if (!readZigzag32(p, end, count)) {
    error = "no message indexes after the schema id";
    return false;
  }
  // Each index takes a byte at least: a count beyond the bytes left is no list.
  if (count < 0 || static_cast<size_t>(count) > kMaxMessageIndexes ||
      static_cast<size_t>(count) > static_cast<size_t>(end - p)) {
    error = fmt::format("a count of {} message indexes after the schema id", count);
    return false;
  }
  for (int64_t i = 0; i < count; ++i) {
    int64_t index = 0;
    if (!readZigzag32(p, end, index) || index < 0) {
      error = fmt::format("message index {} of {} after the schema id is not one", i + 1, count);
      return false;
    }
    indexes.push_back(static_cast<int32_t>(index));
  }
  if (indexes.empty()) indexes.push_back(0);
  used = static_cast<size_t>(p - start);
  return true;
}

void appendMessageIndexes(std::string& out, const std::vector<int32_t>& path) {
  if (path.empty() || (path.size() == 1 && path[0] == 0)) {
    out += '\0';
    return;
  }
  appendZigzag32(out, static_cast<int32_t>(path.size()));
  for (int32_t index : path) appendZigzag32(out, index);
}

void appendFraming(std::string& out, int32_t id) {
  const auto u = static_cast<uint32_t>(id);
  out.push_back('\0');
  out.push_back(static_cast<char>((u >> 24) & 0xff));
  out.push_back(static_cast<char>((u >> 16) & 0xff));
  out.push_back(static_cast<char>((u >> 8) & 0xff));
  out.push_back(static_cast<char>(u & 0xff));
}

bool hasRegistry(const Options& options) {
  return options.has(kUrlOption);
}

const std::vector<std::string>& registryOptionKeys() {
  static const std::vector<std::string> keys = {kUrlOption, kUserInfoOption, kTimeoutOption};
  return keys;
}

RegistryConfig registryConfig(const Options& options) {
  RegistryConfig c;
  const OptionEntry* url = options.find(kUrlOption);
  if (!url) {
    for (const char* key : {kUserInfoOption, kTimeoutOption}) {
      if (const OptionEntry* e = options.find(key)) {
        throw SqlError(sqlstate::kInvalidParameterValue,
                       fmt::format("option '{}' applies with '{}'", key, kUrlOption), e->keyPos,
                       fmt::format("set '{}', or drop the option", kUrlOption));
      }
    }
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("option '{}' is missing", kUrlOption));
  }
  c.url = url->value;
  while (!c.url.empty() && c.url.back() == '/') c.url.pop_back();
  std::string why;
  auto parsed = parseHttpUrl(c.url, why);
  if (!parsed) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("'{}' is not a usable URL: {}", kUrlOption, why), url->valuePos,
                   "e.g. 'http://127.0.0.1:8081'; credentials go in "
                   "'schema.registry.basic.auth.user.info'");
  }
  // The calls' paths follow the URL's: a query or a fragment would turn
  // them into a parameter of a path of the user's choosing.
  if (c.url.find_first_of("?#") != std::string::npos) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("'{}' must not have a query or a fragment ('?', '#')", kUrlOption),
                   url->valuePos, "name the registry's base URL, e.g. 'http://127.0.0.1:8081'");
  }
  c.base = *parsed;
  while (!c.base.target.empty() && c.base.target.back() == '/') c.base.target.pop_back();
  if (const OptionEntry* user = options.find(kUserInfoOption)) {
    if (user->value.find(':') == std::string::npos) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("'{}' must be 'user:password'", kUserInfoOption), user->valuePos);
    }
    c.userInfo = user->value;
  }
  c.timeoutMs = options.getInt(kTimeoutOption, 10000, 1, kMaxTimeoutMs);
  return c;
}

std::optional<RegisteredSchema> parseSchemaAnswer(std::string_view body) {
  dom::parser parser;
  auto doc = parseJson(parser, body);
  std::string_view text;
  if (!doc || (*doc)["schema"].get(text) != simdjson::SUCCESS) return std::nullopt;
  RegisteredSchema out;
  out.text = text;
  std::string_view type;
  if ((*doc)["schemaType"].get(type) == simdjson::SUCCESS) out.type = type;
  dom::array references;
  if ((*doc)["references"].get(references) == simdjson::SUCCESS) {
    for (dom::element r : references) {
      SchemaReference ref;
      std::string_view name, subject;
      int64_t version = 0;
      if (r["name"].get(name) != simdjson::SUCCESS ||
          r["subject"].get(subject) != simdjson::SUCCESS ||
          r["version"].get(version) != simdjson::SUCCESS || version < INT32_MIN ||
          version > INT32_MAX) {
        return std::nullopt;
      }
      out.references.push_back(
          {std::string(name), std::string(subject), static_cast<int32_t>(version)});
    }
  }
  return out;
}

std::optional<int32_t> parseIdAnswer(std::string_view body) {
  dom::parser parser;
  auto doc = parseJson(parser, body);
  int64_t id = 0;
  if (!doc || (*doc)["id"].get(id) != simdjson::SUCCESS || id < INT32_MIN || id > INT32_MAX) {
    return std::nullopt;
  }
  return static_cast<int32_t>(id);
}

std::optional<bool> parseCompatibilityAnswer(std::string_view body, std::string& reasons) {
  dom::parser parser;
  auto doc = parseJson(parser, body);
  bool verdict = false;
  if (!doc || (*doc)["is_compatible"].get(verdict) != simdjson::SUCCESS) return std::nullopt;
  dom::array messages;
  if ((*doc)["messages"].get(messages) == simdjson::SUCCESS) {
    for (dom::element m : messages) {
      std::string_view text;
      if (m.get(text) != simdjson::SUCCESS) continue;
      // The reasons go into the error of CREATE FLOW: bounded, and without
      // control characters.
      if (reasons.size() >= kMaxReasons) break;
      if (!reasons.empty()) reasons += "; ";
      for (char c : text.substr(0, kMaxReasons - std::min(reasons.size(), kMaxReasons))) {
        reasons += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
      }
    }
  }
  return verdict;
}

std::string parseErrorMessage(std::string_view body, int* errorCode) {
  dom::parser parser;
  auto doc = parseJson(parser, body);
  if (!doc) return {};
  int64_t code = 0;
  if (errorCode && (*doc)["error_code"].get(code) == simdjson::SUCCESS) {
    *errorCode = static_cast<int>(code);
  }
  std::string_view message;
  if ((*doc)["message"].get(message) != simdjson::SUCCESS) return {};
  return std::string(message);
}

std::string schemaRequestBody(std::string_view schema, std::string_view schemaType) {
  std::string out = "{\"schema\":";
  appendJsonString(out, schema);
  // AVRO is the API's default, and registries of before schema types take
  // no "schemaType".
  if (!schemaType.empty() && schemaType != "AVRO") {
    out += ",\"schemaType\":";
    appendJsonString(out, schemaType);
  }
  out += '}';
  return out;
}

std::shared_ptr<SchemaRegistryClient> SchemaRegistryClient::shared(const RegistryConfig& config) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<SchemaRegistryClient>> clients;
  std::lock_guard lock(mu);
  auto& slot = clients[config.key()];
  if (auto client = slot.lock()) {
    if (client->config_.timeoutMs == config.timeoutMs) return client;
  }
  auto client = std::make_shared<SchemaRegistryClient>(config);
  slot = client;
  return client;
}

int64_t SchemaRegistryClient::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

bool SchemaRegistryClient::call(const char* method, const std::string& path,
                                const std::string& body, Answer& out, RegistryError& error) {
  {
    std::lock_guard lock(mu_);
    ++requests_;
  }
  net::HttpRequest req;
  req.method = method;
  req.target = config_.base.target + path;
  req.headers.emplace_back("Accept", "application/vnd.schemaregistry.v1+json, application/json");
  if (!config_.userInfo.empty()) {
    req.headers.emplace_back("Authorization",
                             "Basic " + expr_internal::toBase64(config_.userInfo));
  }
  if (!body.empty()) {
    req.headers.emplace_back("Content-Type", "application/vnd.schemaregistry.v1+json");
    req.body = body;
  }
  // One connection per call: calls are rare (schemas are cached by id), and
  // a client is shared by threads.
  net::HttpClient client(config_.base);
  net::HttpResult r = client.exchange(req, {config_.timeoutMs, kMaxAnswer});
  if (!r.ok()) {
    error = {r.failure == net::Failure::Refused ? RegistryError::Kind::Refused
                                                : RegistryError::Kind::Unreachable,
             fmt::format("the schema registry did not answer {} {}{}: {}", method, config_.url,
                         path, r.error)};
    return false;
  }
  out.status = r.answer.status;
  out.body = std::move(r.answer.body);
  return true;
}

RegistryError SchemaRegistryClient::errorOf(const std::string& what, const Answer& answer) const {
  RegistryError::Kind kind = answer.status == 404   ? RegistryError::Kind::NotFound
                             : answer.status >= 500 ? RegistryError::Kind::Unreachable
                                                    : RegistryError::Kind::Refused;
  return {kind, fmt::format("the schema registry at {} answered {} ({}) to {}", config_.url,
                            answer.status, sizeOf(answer.body), what)};
}

std::optional<RegisteredSchema> SchemaRegistryClient::schemaById(int32_t id, RegistryError& error) {
  {
    std::lock_guard lock(mu_);
    auto it = byId_.find(id);
    if (it != byId_.end()) {
      order_.splice(order_.begin(), order_, it->second.second);
      return it->second.first;
    }
  }
  Answer a;
  if (!call("GET", fmt::format("/schemas/ids/{}", id), {}, a, error)) return std::nullopt;
  const std::string what = fmt::format("the request for schema id {}", id);
  if (a.status != 200) {
    error = errorOf(what, a);
    return std::nullopt;
  }
  auto schema = parseSchemaAnswer(a.body);
  if (!schema) {
    error = {RegistryError::Kind::Refused,
             fmt::format("the schema registry at {} answered {} without a schema ({})",
                         config_.url, what, sizeOf(a.body))};
    return std::nullopt;
  }
  std::lock_guard lock(mu_);
  if (byId_.find(id) == byId_.end()) {
    if (byId_.size() >= kCachedSchemas) {
      byId_.erase(order_.back());
      order_.pop_back();
    }
    order_.push_front(id);
    byId_.emplace(id, std::make_pair(*schema, order_.begin()));
  }
  return schema;
}

std::optional<std::pair<int32_t, RegisteredSchema>> SchemaRegistryClient::version(
    const std::string& subject, const std::string& version, RegistryError& error) {
  Answer a;
  if (!call("GET", fmt::format("/subjects/{}/versions/{}", pathSegment(subject), version), {}, a,
            error)) {
    return std::nullopt;
  }
  const std::string what =
      version == "latest"
          ? fmt::format("the request for the latest schema of subject \"{}\"", subject)
          : fmt::format("the request for version {} of subject \"{}\"", version, subject);
  if (a.status != 200) {
    error = errorOf(what, a);
    return std::nullopt;
  }
  auto schema = parseSchemaAnswer(a.body);
  auto id = parseIdAnswer(a.body);
  if (!schema || !id) {
    error = {RegistryError::Kind::Refused,
             fmt::format("the schema registry at {} answered {} without an id and a schema ({})",
                         config_.url, what, sizeOf(a.body))};
    return std::nullopt;
  }
  return std::make_pair(*id, std::move(*schema));
}

std::optional<std::vector<NamedSchema>> SchemaRegistryClient::referencedSchemas(
    const RegisteredSchema& schema, RegistryError& error) {
  // Depth first, so that a schema comes after those it references; each name
  // is fetched once, so a cycle of references ends.
  std::vector<NamedSchema> out;
  std::vector<std::string> seen;
  std::function<bool(const RegisteredSchema&)> visit = [&](const RegisteredSchema& s) {
    for (const SchemaReference& ref : s.references) {
      if (std::find(seen.begin(), seen.end(), ref.name) != seen.end()) continue;
      if (seen.size() >= kMaxReferencedSchemas) {
        error = {RegistryError::Kind::Refused,
                 fmt::format("the schema references more than {} schemas, directly or through "
                             "others: more than rtsql reads",
                             kMaxReferencedSchemas)};
        return false;
      }
      seen.push_back(ref.name);
      auto referenced = version(ref.subject, std::to_string(ref.version), error);
      if (!referenced) {
        // The referring schema is there; what it references is not.
        if (error.kind == RegistryError::Kind::NotFound) error.kind = RegistryError::Kind::Refused;
        error.message = fmt::format("reference \"{}\" (subject \"{}\", version {}): {}", ref.name,
                                    ref.subject, ref.version, error.message);
        return false;
      }
      if (!visit(referenced->second)) return false;
      out.push_back({ref.name, std::move(referenced->second.text)});
    }
    return true;
  };
  if (!visit(schema)) return std::nullopt;
  return out;
}

std::optional<int32_t> SchemaRegistryClient::registerSchema(const std::string& subject,
                                                            const std::string& schema,
                                                            const std::string& schemaType,
                                                            RegistryError& error) {
  Answer a;
  if (!call("POST", fmt::format("/subjects/{}/versions", pathSegment(subject)),
            schemaRequestBody(schema, schemaType), a, error)) {
    return std::nullopt;
  }
  const std::string what =
      fmt::format("the registration of a schema under subject \"{}\"", subject);
  if (a.status != 200) {
    error = errorOf(what, a);
    return std::nullopt;
  }
  auto id = parseIdAnswer(a.body);
  if (!id) {
    error = {RegistryError::Kind::Refused,
             fmt::format("the schema registry at {} answered {} without an id ({})", config_.url,
                         what, sizeOf(a.body))};
  }
  return id;
}

std::optional<bool> SchemaRegistryClient::compatible(const std::string& subject,
                                                     const std::string& schema,
                                                     const std::string& schemaType,
                                                     std::string& reasons, RegistryError& error) {
  Answer a;
  if (!call("POST", fmt::format("/compatibility/subjects/{}/versions/latest", pathSegment(subject)),
            schemaRequestBody(schema, schemaType), a, error)) {
    return std::nullopt;
  }
  // A subject without versions: the first schema is compatible with nothing
  // before it (Confluent answers 404, error 40401 or 40402).
  if (a.status == 404) return true;
  const std::string what = fmt::format("the compatibility check under subject \"{}\"", subject);
  if (a.status != 200) {
    error = errorOf(what, a);
    return std::nullopt;
  }
  auto verdict = parseCompatibilityAnswer(a.body, reasons);
  if (!verdict) {
    error = {RegistryError::Kind::Refused,
             fmt::format("the schema registry at {} answered {} without a verdict ({})",
                         config_.url, what, sizeOf(a.body))};
  }
  return verdict;
}

bool FailedSchemaIds::recent(int32_t id, int64_t now, std::string& error) {
  auto it = failures_.find(id);
  if (it == failures_.end()) return false;
  if (now < it->second.first) {
    error = it->second.second;
    return true;
  }
  failures_.erase(it);
  return false;
}

std::string FailedSchemaIds::remember(int32_t id, const RegistryError& why, int64_t now) {
  if (failures_.size() >= kMaxFailedIds) failures_.clear();
  const int64_t wait =
      why.kind == RegistryError::Kind::Unreachable ? kRetryUnreachableMicros : kRetryNotFoundMicros;
  std::string error =
      why.kind == RegistryError::Kind::NotFound
          ? fmt::format("schema id {} is not in the schema registry: {}", id, why.message)
          : why.message;
  failures_[id] = {now + wait, error};
  return error;
}

}  // namespace rtsql::schema_registry
