// The file connector: what 'connector' = 'file' means for a sink (rows
// appended as JSON lines, file_sink.h) and for a static table (rows read once
// from a CSV or JSON file, table_loader.h). Its 'path' names a file on the
// server's machine, which is why setting it is a privilege.
#pragma once

#include <string_view>

#include "connectors/connector.h"

namespace rtsql {

class FileConnector final : public Connector {
 public:
  static constexpr std::string_view kName = "file";

  FileConnector() : Connector(kName, {ConnectorRole::Sink, ConnectorRole::Table}) {}

  void validateSink(const Options& options, size_t stmtPos) const override;
  // The path and write settings (file_sink.h), carried to the writers.
  SinkOptions parseSink(const Options& options) const override;
  void validateTable(const Options& options, size_t stmtPos) const override;
  ServerSideOptions serverSideOptions(const Options& options) const override;

  std::unique_ptr<SinkWriter> openSink(const SinkSpec& sink, const ConnectorEnv& env,
                                       const std::string& flowName, int task) const override;
  std::vector<Row> loadTable(const Schema& schema, const Options& options,
                             size_t stmtPos) const override;
};

}  // namespace rtsql
