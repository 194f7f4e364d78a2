// The connector provider the server hands to the executor: it turns a ScanSpec
// or SinkSpec into a running source task or sink writer by connector name
// (kafka, datagen, file), and checks connector options when a source or sink is
// created, so that a typo fails the CREATE statement rather than the flow.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/options.h"
#include "executor/connector.h"

namespace rtsql {

class DefaultConnectorProvider : public ConnectorProvider {
 public:
  // `embeddedBootstrap` is the address of the server's embedded broker, what
  // 'kafka.bootstrap.servers' = 'embedded' means; empty when there is none.
  explicit DefaultConnectorProvider(std::string embeddedBootstrap = {})
      : embeddedBootstrap_(std::move(embeddedBootstrap)) {}

  int sourcePartitions(const ScanSpec& scan) override;
  std::unique_ptr<SourceTask> openSource(const ScanSpec& scan, const std::string& flowName,
                                         int task, int tasks) override;
  std::unique_ptr<SinkWriter> openSink(const SinkSpec& sink, const std::string& flowName,
                                       int task) override;
  std::unique_ptr<SinkTransaction> openSinkTransaction(const SinkSpec& sink,
                                                       const std::string& flowName,
                                                       int64_t timeoutMs) override;
  std::unique_ptr<SinkWriter> openTransactionalSink(const SinkSpec& sink, const std::string& flowName,
                                                    int task, SinkTransaction& transaction) override;

  const std::string& embeddedBootstrap() const { return embeddedBootstrap_; }
  // CREATE-time check that a Kafka source's or sink's 'kafka.bootstrap.servers'
  // can be honoured here: 'embedded' on a server without the embedded broker is
  // SqlError 55000 at the option's value. Other connectors pass.
  void checkBootstrap(const std::string& connector, const Options& options) const;
  void checkCreate(const std::string& connector, const Options& options) const override {
    checkBootstrap(connector, options);
  }

 private:
  std::string embeddedBootstrap_;
};

// CREATE SOURCE / CREATE SINK checks of the WITH options. Errors are SqlError
// 22023 at the offending key or value (at `stmtPos` for a missing option): an
// unknown connector, a missing required option, a value out of its set, an
// unknown key (with the closest known one suggested), or a `kafka.<name>` option
// the Kafka client refuses.
void validateSourceOptions(const std::string& connector, const Options& options, size_t stmtPos);
void validateSinkOptions(const std::string& connector, const Options& options, size_t stmtPos);

// The options of a source, sink or table that reach into the server's own
// machine rather than the catalog: `files` name a file the server reads or
// writes (the file connector's 'path'; the Kafka client's certificate, key,
// CRL, keystore, keytab and offset-file locations), `programs` make it load a
// library or run a command (the Kafka client's plugin.library.paths,
// ssl.engine.location and sasl.kerberos.kinit.cmd). Who may set them is the
// engine's decision (server/privileges.h); this only says which they are.
struct ServerSideOptions {
  std::vector<const OptionEntry*> files;
  std::vector<const OptionEntry*> programs;
};
ServerSideOptions serverSideOptions(const std::string& connector, const Options& options);

}  // namespace rtsql
