// The connector registry: the one list of the connectors this server knows,
// looked up by the value of a 'connector' option. It is where a connector name
// becomes a Connector (connectors/connector.h), and where an unknown name, or
// a known one in a role it does not serve, becomes the user's error. Adding a
// connector is one line in ConnectorRegistry::builtin().
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "connectors/connector.h"

namespace rtsql {

class ConnectorRegistry {
 public:
  // The connectors rtsql ships: kafka, datagen, file, nexmark, blackhole, http, kinesis, in the order error
  // hints list them.
  static const ConnectorRegistry& builtin();

  // Throws InternalError when a connector of the same name is registered.
  void add(std::unique_ptr<Connector> connector);

  // The connector named `name` (any case), or nullptr.
  const Connector* find(std::string_view name) const;

  // The connector named `name` serving `role`. Otherwise SqlError 22023 at the
  // 'connector' option's value in `options` (at `stmtPos` when it has none):
  // "unknown source connector 'x'" (or sink) with the available ones as hint;
  // for a table, "invalid value 'x' for option 'connector' of a table".
  const Connector& require(std::string_view name, ConnectorRole role, const Options& options,
                           size_t stmtPos) const;

  // The names of the connectors that serve `role`, in registration order.
  std::vector<std::string_view> names(ConnectorRole role) const;

 private:
  std::vector<std::unique_ptr<Connector>> connectors_;
};

// CREATE SOURCE / CREATE SINK checks of the WITH options through the builtin
// registry: an unknown connector (see require()), then the connector's own
// checks: a missing required option, a value out of its set, an unknown key
// (with the closest known one suggested), a `kafka.<name>` option the Kafka
// client refuses. SqlError 22023 at the offending key or value, at `stmtPos`
// for a missing option.
void validateSourceOptions(const std::string& connector, const Options& options, size_t stmtPos);
void validateSinkOptions(const std::string& connector, const Options& options, size_t stmtPos);

// The settings of the source `scan` reads: those the plan carries
// (ScanSpec::parsed), or, for a spec built by hand (tests, benchmarks), what
// its connector reads from its options (Connector::parseSource).
SourceOptions sourceOptionsOf(const ScanSpec& scan);

// The settings of the sink `sink` writes: those the plan carries
// (SinkSpec::parsed), or, for a spec built by hand (tests, benchmarks), what
// its connector reads from its options (Connector::parseSink).
SinkOptions sinkOptionsOf(const SinkSpec& sink);

// The options of a source, sink or table that name files or programs on the
// server's machine (Connector::serverSideOptions); none for an unknown
// connector, which validation refuses.
ServerSideOptions serverSideOptions(const std::string& connector, const Options& options);

}  // namespace rtsql
