// The file sink: appends each row as one JSON line to a local file, the
// row-by-row (forEach) sink.
//
//   CREATE SINK audit WITH (connector = 'file', path = '/var/lib/rtsql/audit.jsonl',
//                           format = 'json');
//
// Every task of a flow appends to the same file. The file is opened with
// O_APPEND and each write(2) carries whole lines only, so lines of different
// tasks never interleave inside a line. The file is created when missing; its
// directory is not.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/options.h"
#include "executor/connector_provider.h"
#include "planner/connector_options.h"
#include "planner/physical_plan.h"

namespace rtsql {

// Options: path (required), format ('json', the default and only choice),
// fsync ('true': fsync(2) at every flush, i.e. every checkpoint; default false),
// 'buffer.bytes' (lines are held until this many bytes are pending or a flush;
// default 0: every row is written when it arrives, so the file is always
// current). Throws SqlError 22023 for bad options and 58030 when the directory
// of `path` does not exist.
void validateFileSinkOptions(const Options& options, size_t stmtPos);

// The options validateFileSinkOptions accepted, read once at CREATE SINK
// (FileConnector::parseSink) and carried by the plan (SinkOptions::own).
struct FileSinkOptions final : ConnectorOptions {
  std::string path;
  size_t pathPos = SqlError::npos;  // where CREATE SINK wrote it, for messages
  bool csvHeader = false;
  bool fsync = false;
  int64_t bufferBytes = 0;
};
FileSinkOptions parseFileSinkOptions(const Options& options);

// Opens (creates) the file for appending, with the options CREATE SINK read;
// throws SqlError 58030 naming the path when it cannot.
std::unique_ptr<SinkWriter> makeFileSink(const SinkSpec& sink, int task);

}  // namespace rtsql
