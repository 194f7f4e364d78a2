// FileConnector (see file_connector.h).
#include "connectors/file/file_connector.h"

#include "connectors/file/file_sink.h"
#include "connectors/file/table_loader.h"

namespace rtsql {

void FileConnector::validateSink(const Options& options, size_t stmtPos) const {
  validateFileSinkOptions(options, stmtPos);
}

SinkOptions FileConnector::parseSink(const Options& options) const {
  SinkOptions parsed = parseCommonSinkOptions(options);
  parsed.own = std::make_shared<const FileSinkOptions>(parseFileSinkOptions(options));
  return parsed;
}

void FileConnector::validateTable(const Options& options, size_t stmtPos) const {
  validateTableOptions(options, stmtPos);
}

ServerSideOptions FileConnector::serverSideOptions(const Options& options) const {
  ServerSideOptions out;
  if (const OptionEntry* e = options.find("path")) out.files.push_back(e);
  return out;
}

std::unique_ptr<SinkWriter> FileConnector::openSink(const SinkSpec& sink, const ConnectorEnv&,
                                                    const std::string&, int task) const {
  return makeFileSink(sink, task);
}

std::vector<Row> FileConnector::loadTable(const Schema& schema, const Options& options,
                                          size_t stmtPos) const {
  return loadTableFile(schema, options, stmtPos);
}

}  // namespace rtsql
