#include "connectors/file/file_sink.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/file_beneath.h"
#include "connectors/format/decoders.h"
#include "connectors/format/encoding_sink_writer.h"
#include "connectors/registry.h"
#include "planner/sink_changelog.h"

namespace rtsql {

namespace {

const std::vector<std::string>& fileSinkKeys() {
  static const std::vector<std::string> keys = {"connector",     "path",      "format",
                                                "mode",          "fsync",     "buffer.bytes",
                                                "csv.delimiter", "csv.header"};
  return keys;
}

size_t pathPos(const Options& options, size_t stmtPos) {
  const OptionEntry* e = options.find("path");
  return e && e->valuePos != SqlError::npos ? e->valuePos : stmtPos;
}

// The directory of `path` must exist: rtsql does not create directories, so a
// typo in the path is an error rather than a new tree somewhere.
void checkDirectory(const std::string& path, size_t pos) {
  std::filesystem::path p(path);
  std::filesystem::path dir = p.parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec)) {
    throw SqlError(sqlstate::kIoError,
                   fmt::format("cannot write to \"{}\": directory \"{}\" does not exist", path, dir.string()),
                   pos, "Create the directory first; the file itself is created when missing.");
  }
  if (std::filesystem::is_directory(p, ec)) {
    throw SqlError(sqlstate::kIoError, fmt::format("cannot write to \"{}\": it is a directory", path), pos);
  }
}

// The row encoder of a file sink: csv or json lines.
std::unique_ptr<RecordEncoder> lineEncoder(const SinkSpec& sink) {
  return iequals(sink.format, "csv") ? format::makeCsvEncoder(sink) : format::makeJsonEncoder(sink);
}

// Each record is one line; debezium-json writes one line per change.
class FileSink final : public EncodingSinkWriter {
 public:
  FileSink(const SinkSpec& sink, int fd, std::string path, bool fsync, int64_t bufferBytes)
      : EncodingSinkWriter(sink, &lineEncoder),
        fd_(fd),
        path_(std::move(path)),
        fsync_(fsync),
        bufferBytes_(static_cast<size_t>(bufferBytes)) {}

  ~FileSink() override {
    // Rows written since the last flush are not lost on a normal shutdown.
    if (!pending_.empty()) writeAll();
    ::close(fd_);
  }

  int64_t deliveryErrors() const override { return errors_; }

  std::string description() const override { return fmt::format("FileSink[{}]", path_); }

 private:
  void deliver(const EncodedRecord& record) override {
    pending_ += record.value;
    pending_ += '\n';
    if (pending_.size() > bufferBytes_) writeAll();
  }

  void flushRecords(int /*timeoutMs*/) override {
    writeAll();
    if (fsync_ && error_.empty() && ::fsync(fd_) != 0) fail(errno);
    if (!error_.empty()) {
      std::string message = std::move(error_);
      error_.clear();
      throw SqlError(sqlstate::kIoError, message);
    }
  }

  // Writes the pending lines. One write(2) per call on an O_APPEND file puts
  // them at the end as a block; a short write (a full disk, a signal) continues
  // with the rest, which can only split the block at the point of the failure.
  void writeAll() {
    size_t done = 0;
    while (done < pending_.size()) {
      ssize_t n = ::write(fd_, pending_.data() + done, pending_.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        fail(errno);
        break;
      }
      done += static_cast<size_t>(n);
    }
    pending_.clear();
  }

  void fail(int err) {
    ++errors_;
    if (error_.empty()) error_ = fmt::format("could not write to \"{}\": {}", path_, std::strerror(err));
  }

  int fd_;
  std::string path_;
  bool fsync_;
  size_t bufferBytes_;
  std::string pending_;
  std::string error_;
  int64_t errors_ = 0;
};

// 'csv.header': the column names as the file's first line. Every task of the
// flow opens the file; the lock makes exactly one of them find it empty, and
// each task checks before it writes a row, so the header stays first.
void writeCsvHeader(const SinkSpec& sink, char delimiter, int fd, const std::string& path) {
  std::string line;
  bool first = true;
  for (const Column& c : sink.input.columns) {
    if (c.hidden) continue;
    if (!first) line += delimiter;
    first = false;
    format::appendCsvText(line, c.name, delimiter);
  }
  line += '\n';
  ::flock(fd, LOCK_EX);
  struct stat st {};
  int err = 0;
  if (::fstat(fd, &st) != 0) {
    err = errno;
  } else if (st.st_size == 0) {
    size_t done = 0;
    while (done < line.size()) {
      ssize_t n = ::write(fd, line.data() + done, line.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        err = errno;
        break;
      }
      done += static_cast<size_t>(n);
    }
  }
  ::flock(fd, LOCK_UN);
  if (err != 0) {
    ::close(fd);
    throw SqlError(sqlstate::kIoError,
                   fmt::format("could not write to \"{}\": {}", path, std::strerror(err)),
                   pathPos(sink.options, SqlError::npos));
  }
}

}  // namespace

void validateFileSinkOptions(const Options& options, size_t stmtPos) {
  options.checkKnown(fileSinkKeys());
  const OptionEntry& path = options.require("path", stmtPos);
  if (path.value.empty()) {
    throw SqlError(sqlstate::kInvalidParameterValue, "option 'path' is empty", path.valuePos);
  }
  std::string format = toLower(options.getEnum("format", "json", {"json", "csv", "debezium-json"}));
  format::csvDelimiter(options);
  if (const OptionEntry* header = options.find("csv.header")) {
    options.getBool("csv.header", false);
    if (format != "csv") {
      throw SqlError(
          sqlstate::kInvalidParameterValue,
          fmt::format("'csv.header' applies to format 'csv'; this sink has format '{}'", format),
          header->keyPos, "drop 'csv.header', or write format = 'csv'");
    }
  }
  if (const OptionEntry* mode = options.find("mode"); mode && iequals(mode->value, "upsert")) {
    // A file has no keys to replace a row under, nor a tombstone to remove one.
    throw SqlError(sqlstate::kFeatureNotSupported, "file sinks cannot write 'mode' = 'upsert'",
                   mode->valuePos,
                   "use format = 'debezium-json': each change as a line with its old and new row");
  }
  options.getEnum("mode", "update", {"append", "update"});
  options.getBool("fsync", false);
  options.getInt("buffer.bytes", 0, 0, int64_t{1} << 30);
  checkDirectory(path.value, pathPos(options, stmtPos));
}

FileSinkOptions parseFileSinkOptions(const Options& options) {
  FileSinkOptions parsed;
  parsed.path = options.getString("path");
  parsed.pathPos = pathPos(options, SqlError::npos);
  parsed.csvHeader = options.getBool("csv.header", false);
  parsed.fsync = options.getBool("fsync", false);
  parsed.bufferBytes = options.getInt("buffer.bytes", 0, 0, int64_t{1} << 30);
  return parsed;
}

std::unique_ptr<SinkWriter> makeFileSink(const SinkSpec& sink, int /*task*/) {
  // What CREATE SINK read, carried by the plan. A spec built by hand (tests,
  // benchmarks) is checked here as CREATE SINK would, and read through its
  // connector by sinkOptionsOf.
  if (!sink.parsed) validateFileSinkOptions(sink.options, SqlError::npos);
  const SinkOptions parsed = sinkOptionsOf(sink);
  const FileSinkOptions& config = connectorOptionsAs<FileSinkOptions>(parsed.own, "file sink");
  // The directory may have gone since CREATE SINK: say so rather than that
  // the file could not be opened.
  checkDirectory(config.path, config.pathPos);
  // Beneath --files-dir at every open: a link swapped in since CREATE SINK
  // must not lead the flow's rows out of the directory.
  std::string why;
  int fd = openServerFile(config.path, O_WRONLY | O_APPEND | O_CREAT, 0644, why);
  if (fd < 0) {
    throw SqlError(sqlstate::kIoError, fmt::format("could not open \"{}\": {}", config.path, why),
                   config.pathPos);
  }
  if (iequals(sink.format, "csv") && config.csvHeader) {
    writeCsvHeader(sink, parsed.csvDelimiter, fd, config.path);
  }
  return std::make_unique<FileSink>(sink, fd, config.path, config.fsync, config.bufferBytes);
}

}  // namespace rtsql
