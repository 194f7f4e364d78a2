// The Connector interface: everything rtsql knows about one kind of external
// system (Kafka, datagen, files) sits behind it, in that connector's folder,
// so that a new connector is one folder implementing this class plus one line
// in connectors/registry.cpp. The rest of the server never compares connector
// names: it asks the registry for the connector and the connector for the
// answer (which roles it serves, whether its options are right, which columns
// a source has, how to open a task).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/options.h"
#include "common/schema.h"
#include "common/value.h"
#include "executor/connector_provider.h"
#include "parser/ast.h"
#include "planner/physical_plan.h"

namespace rtsql {

// What a connector can be named in: CREATE SOURCE, CREATE SINK, or CREATE
// TABLE (a static table loaded once).
enum class ConnectorRole { Source, Sink, Table };

// What the running server gives every connector: the address of its embedded
// broker, what 'kafka.bootstrap.servers' = 'embedded' means (empty when the
// server runs none).
struct ConnectorEnv {
  std::string embeddedBootstrap;
  std::string cluster;  // the server's cluster (--cluster); empty outside one
};

// The options of a source, sink or table that reach into the server's own
// machine rather than the catalog: `files` name a file the server reads or
// writes, `programs` make it load a library or run a command, `destinations`
// are URLs the server connects to (connectors/net/outbound_policy.h),
// `brokers` are Kafka bootstrap lists ('host:port,host:port'; 'embedded' is
// the server's own broker), and
// `serverCredentials` says that the server's own credentials (its
// environment's AWS keys) would be used, and sent to the destination. Who may
// set them is the engine's decision (server/privileges.h); the connector only
// says which they are.
struct ServerSideOptions {
  std::vector<const OptionEntry*> files;
  std::vector<const OptionEntry*> programs;
  std::vector<const OptionEntry*> destinations;
  std::vector<const OptionEntry*> brokers;
  bool serverCredentials = false;
};

// The options every connector reads the same way: 'on.error',
// 'failOnDataLoss', 'maxPartitions', the format's decoding settings and the
// dead-letter topic and cluster, each at its default when not set
// (Connector::parseSource).
SourceOptions parseCommonSourceOptions(const Options& options);
// Likewise for sinks: 'mode' and 'csv.delimiter' (Connector::parseSink).
SinkOptions parseCommonSinkOptions(const Options& options);

// One connector. Implementations are stateless: one instance serves every
// source, sink and table that names it, from any thread. A method of a role
// the connector does not serve is never called (the registry checks roles
// first); the defaults throw InternalError to say so. A connector gives its
// name and roles to the constructor and overrides the methods of its roles.
class Connector {
 public:
  virtual ~Connector() = default;
  Connector(const Connector&) = delete;
  Connector& operator=(const Connector&) = delete;

  // The value of the 'connector' option, lower case ("kafka").
  std::string_view name() const { return name_; }
  bool serves(ConnectorRole role) const { return (roles_ & bit(role)) != 0; }

  // CREATE-time checks of the WITH options: SqlError (22023 unless said
  // otherwise) at the offending key or value, at `stmtPos` for a missing one.
  virtual void validateSource(const Options& options, size_t stmtPos) const;
  virtual void validateSink(const Options& options, size_t stmtPos) const;
  virtual void validateTable(const Options& options, size_t stmtPos) const;
  // CREATE SOURCE, after validateSource: the settings the code that runs the
  // source reads (planner/source_options.h), recorded in the catalog and
  // carried by the plan (ScanSpec::parsed). The default reads 'on.error' and
  // 'failOnDataLoss', each at its default when the connector has no such
  // option.
  virtual SourceOptions parseSource(const Options& options) const;
  // CREATE SINK, after validateSink: the settings the code that writes the
  // sink reads (planner/sink_options.h), recorded in the catalog and carried
  // by the plan (SinkSpec::parsed). The default reads those every sink
  // reads the same way (parseCommonSinkOptions).
  virtual SinkOptions parseSink(const Options& options) const;
  // The connector's answers to what the planner and the server ask of its
  // sources and sinks (planner/connector_traits.h), recorded at CREATE.
  virtual SourceTraits sourceTraits() const { return {}; }
  virtual SinkTraits sinkTraits() const { return {}; }
  // CREATE-time checks that need the running server (Kafka: 'embedded' names
  // a broker only when the server runs one). Throws SqlError at the option.
  virtual void checkCreate(const Options& options, const ConnectorEnv& env) const {
    (void)options;
    (void)env;
  }
  // The options that name files or programs on the server's machine.
  virtual ServerSideOptions serverSideOptions(const Options& options) const {
    (void)options;
    return {};
  }

  // The record format a source reads, lower case ("json"), recorded in the
  // catalog; empty for connectors that make rows rather than decode them.
  virtual std::string sourceFormat(const Options& options) const {
    (void)options;
    return {};
  }
  // A source's columns: the declared ones and any hidden columns the
  // connector fills (Kafka's metadata), or a fixed schema. Throws SqlError at
  // the column or option that does not fit.
  virtual Schema bindSourceSchema(const ast::CreateSource& stmt, const Options& options) const;
  // Checks that need the bound schema (datagen's `fields.<column>` options
  // must name a declared column of a fitting type).
  virtual void validateSourceColumns(const Options& options, const Schema& schema,
                                     size_t stmtPos) const {
    (void)options;
    (void)schema;
    (void)stmtPos;
  }

  // Partitions of a source, which bound how many source tasks read it. Throws
  // SqlError when the source is unreachable.
  virtual int sourcePartitions(const ScanSpec& scan, const ConnectorEnv& env) const;
  // Source task `task` of `tasks`; it owns partitions p with p % tasks == task.
  virtual std::unique_ptr<SourceTask> openSource(const ScanSpec& scan, const ConnectorEnv& env,
                                                 const std::string& flowName, int task,
                                                 int tasks) const;
  virtual std::unique_ptr<SinkWriter> openSink(const SinkSpec& sink, const ConnectorEnv& env,
                                               const std::string& flowName, int task) const;

  // Exactly-once output ('delivery' = 'exactly-once'): whether the sink can
  // write an epoch's rows in one transaction committed with the checkpoint,
  // and the transaction and writers that do it. The defaults refuse, as
  // ConnectorProvider's do.
  virtual bool exactlyOnce() const { return false; }
  virtual std::unique_ptr<SinkTransaction> openSinkTransaction(const SinkSpec& sink,
                                                               const ConnectorEnv& env,
                                                               const std::string& flowName,
                                                               int64_t timeoutMs) const;
  virtual std::unique_ptr<SinkWriter> openTransactionalSink(const SinkSpec& sink,
                                                            const ConnectorEnv& env,
                                                            const std::string& flowName, int task,
                                                            SinkTransaction& transaction) const;

  // A static table's rows, read once at CREATE TABLE (validates as
  // validateTable does).
  virtual std::vector<Row> loadTable(const Schema& schema, const Options& options,
                                     size_t stmtPos) const;

 protected:
  // `name` must outlive the connector (a string literal).
  Connector(std::string_view name, std::initializer_list<ConnectorRole> roles) : name_(name) {
    for (ConnectorRole r : roles) roles_ |= bit(r);
  }

 private:
  static unsigned bit(ConnectorRole role) { return 1u << static_cast<unsigned>(role); }

  std::string_view name_;
  unsigned roles_ = 0;
};

}  // namespace rtsql
