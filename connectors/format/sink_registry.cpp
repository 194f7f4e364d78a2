// A sink's schema in a schema registry (avro and protobuf sinks with
// 'schema.registry.url'): CREATE FLOW's compatibility check, and the
// registration as the sink's encoder starts (see decoders.h).
#include <fmt/format.h>

#include "common/error.h"
#include "connectors/format/decoders.h"
#include "connectors/registry.h"
#include "connectors/schema_registry/schema_registry.h"

namespace rtsql::format {

namespace {

// A registry that did not answer is 08006 (a flow then waits and retries as
// for a broker away); any other failure 22023.
[[noreturn]] void registryFailed(const SinkSpec& sink, const schema_registry::RegistryError& error,
                                 size_t pos) {
  throw SqlError(error.kind == schema_registry::RegistryError::Kind::Unreachable
                     ? sqlstate::kConnectionFailure
                     : sqlstate::kInvalidParameterValue,
                 fmt::format("sink \"{}\": {}", sink.name, error.message), pos);
}

}  // namespace

int32_t registerSinkSchema(const SinkSpec& sink, const std::string& schema,
                           const std::string& schemaType) {
  auto registry =
      schema_registry::SchemaRegistryClient::shared(schema_registry::registryConfig(sink.options));
  const std::string subject = schema_registry::valueSubject(sinkOptionsOf(sink).topic);
  schema_registry::RegistryError error;
  auto id = registry->registerSchema(subject, schema, schemaType, error);
  if (!id) registryFailed(sink, error, SqlError::npos);
  return *id;
}

void checkSinkSchemaCompatible(const SinkSpec& sink, const std::string& schema,
                               const std::string& schemaType, size_t pos, const std::string& hint) {
  auto registry =
      schema_registry::SchemaRegistryClient::shared(schema_registry::registryConfig(sink.options));
  const std::string subject = schema_registry::valueSubject(sinkOptionsOf(sink).topic);
  schema_registry::RegistryError error;
  std::string reasons;
  auto ok = registry->compatible(subject, schema, schemaType, reasons, error);
  if (!ok) registryFailed(sink, error, pos);
  if (!*ok) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("sink \"{}\" writes {} schema that subject \"{}\" of the schema "
                               "registry refuses as incompatible with its latest version{}{}",
                               sink.name, schemaType == "AVRO" ? "an Avro" : "a Protobuf", subject,
                               reasons.empty() ? "" : ": ", reasons),
                   pos, hint);
  }
  // Registered when the flow's sink tasks start (registerSinkSchema), so
  // that a dry run or EXPLAIN leaves the registry as it was.
}

}  // namespace rtsql::format
