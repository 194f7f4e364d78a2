#include "connectors/file/table_loader.h"

#include <fmt/format.h>

#include "common/file_beneath.h"
#include "connectors/format/codec.h"
#include "connectors/format/decoders.h"

namespace rtsql {

namespace {

const std::vector<std::string>& tableFileKeys() {
  static const std::vector<std::string> keys = {"connector", "path", "format", "header", "csv.delimiter",
                                                "json.ignore-missing"};
  return keys;
}

// A static table is held in memory whole; a file past this is not one.
constexpr size_t kMaxTableFileBytes = size_t{4} << 30;

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && iequals(s.substr(s.size() - suffix.size()), suffix);
}

std::string tableFormat(const Options& options) {
  std::string def = "csv";
  std::string path = options.getString("path");
  if (endsWith(path, ".json") || endsWith(path, ".jsonl") || endsWith(path, ".ndjson")) def = "json";
  return toLower(options.getEnum("format", def, {"csv", "json"}));
}

// Splits the file into records with their 1-based starting line numbers. For
// csv a quoted field may contain line breaks, so quotes are tracked.
struct Line {
  std::string_view text;
  size_t number;
};

std::vector<Line> splitRecords(std::string_view data, bool csv) {
  std::vector<Line> lines;
  size_t lineNo = 1;
  size_t start = 0;
  size_t startLine = 1;
  bool inQuotes = false;
  for (size_t i = 0; i < data.size(); ++i) {
    char c = data[i];
    if (csv && c == '"') inQuotes = !inQuotes;
    if (c != '\n') continue;
    if (!inQuotes) {
      lines.push_back({data.substr(start, i - start), startLine});
      start = i + 1;
      startLine = lineNo + 1;
    }
    ++lineNo;
  }
  if (start < data.size()) lines.push_back({data.substr(start), startLine});
  return lines;
}

bool blank(std::string_view s) {
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\r') return false;
  return true;
}

}  // namespace

void validateTableOptions(const Options& options, size_t stmtPos) {
  options.checkKnown(tableFileKeys());
  const OptionEntry& path = options.require("path", stmtPos);
  if (path.value.empty()) {
    throw SqlError(sqlstate::kInvalidParameterValue, "option 'path' is empty", path.valuePos);
  }
  tableFormat(options);
  options.getBool("header", false);
  options.getBool("json.ignore-missing", true);
  format::csvDelimiter(options);
}

std::vector<Row> loadTableFile(const Schema& schema, const Options& options, size_t stmtPos) {
  validateTableOptions(options, stmtPos);
  const OptionEntry* pathEntry = options.find("path");
  const std::string& path = pathEntry->value;
  const size_t pos = pathEntry->valuePos != SqlError::npos ? pathEntry->valuePos : stmtPos;
  const std::string fmt = tableFormat(options);
  const bool csv = fmt == "csv";

  // Beneath --files-dir, and only a regular file: a FIFO or a device would be
  // read without end.
  std::string data;
  std::string why;
  if (!readServerFile(path, kMaxTableFileBytes, data, why)) {
    throw SqlError(sqlstate::kIoError,
                   fmt::format("could not read table file \"{}\": {}", path, why), pos);
  }
  std::string_view view(data);
  if (view.substr(0, 3) == "\xEF\xBB\xBF") view.remove_prefix(3);  // a UTF-8 byte order mark

  std::unique_ptr<RecordDecoder> decoder = makeDecoder(fmt, schema, options);
  // The file is the server's: an error names the line and the field only.
  decoder->setQuoteValues(false);
  std::vector<Line> lines = splitRecords(view, csv);
  bool skipHeader = csv && options.getBool("header", false);
  std::vector<Row> rows;
  rows.reserve(lines.size());
  std::string error;
  for (const Line& line : lines) {
    if (blank(line.text)) continue;
    if (skipHeader) {
      skipHeader = false;
      continue;
    }
    RecordView rec;
    rec.value = line.text.data();
    rec.valueLen = line.text.size();
    rec.offset = static_cast<int64_t>(line.number);
    Row row;
    if (!decoder->decode(rec, row, error)) {
      throw SqlError(sqlstate::kInvalidTextRepresentation, fmt::format("{}:{}: {}", path, line.number, error),
                     pos);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace rtsql
