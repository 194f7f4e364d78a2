// See dialect_hints.h.
#include "server/dialect_hints.h"

#include <fmt/format.h>

#include "common/schema.h"
#include "connectors/registry.h"
#include "server/create_text.h"

namespace rtsql {

SqlError insertIntoSinkError(const ast::Insert& stmt, const SinkDef& sink) {
  // A flow is made on purpose, with a name its owner chose, and runs until
  // dropped: a statement that looks like a one-off write does not make one.
  std::string hint;
  if (stmt.query && stmt.query->pos >= stmt.pos && stmt.query->pos - stmt.pos < stmt.text.size()) {
    const std::string query = stmt.text.substr(stmt.query->pos - stmt.pos);
    hint = fmt::format(
        "a flow writes a query's rows to a sink, continuously: CREATE FLOW {} INTO {} AS {}",
        sqlName(toLower(sink.name) + "_flow"), sqlName(sink.name), query);
    if (!stmt.columns.empty()) hint += " (name the sink's columns with AS in the SELECT list)";
  } else {
    hint = fmt::format("a sink is written by a flow: CREATE FLOW f INTO {} AS SELECT ...",
                       sqlName(sink.name));
  }
  return SqlError(sqlstate::kFeatureNotSupported,
                  fmt::format("\"{}\" is a sink: INSERT INTO a sink is not supported", sink.name),
                  stmt.tablePos, hint);
}

void refuseStreamTable(const ast::CreateTable& stmt, const Options& options) {
  const OptionEntry* connectorOption = options.find("connector");
  if (!connectorOption) return;
  const std::string connector = toLower(connectorOption->value);
  if (connector != "kafka" && connector != "upsert-kafka") return;
  // Flink's option names, as rtsql spells them.
  OptionList source, sink;
  source.emplace_back("connector", "kafka");
  sink.emplace_back("connector", "kafka");
  for (const OptionEntry& e : options.entries()) {
    const std::string key = toLower(e.key);
    if (key == "connector") continue;
    if (key == "topic") {
      source.emplace_back("subscribe", e.value);
      sink.emplace_back("topic", e.value);
    } else if (key.rfind("properties.", 0) == 0) {
      const std::string k = "kafka." + e.key.substr(std::string("properties.").size());
      // A consumer group is the source's; the sink has none.
      source.emplace_back(k, e.value);
      if (key != "properties.group.id") sink.emplace_back(k, e.value);
    } else if (key == "scan.startup.mode") {
      const std::string v = toLower(e.value);
      if (v == "earliest-offset") source.emplace_back("startingOffsets", "earliest");
      else if (v == "latest-offset") source.emplace_back("startingOffsets", "latest");
    } else if (key == "format" || key == "value.format") {
      source.emplace_back("format", e.value);
      sink.emplace_back("format", e.value);
    } else if (key == "key.fields") {
      sink.emplace_back("key", e.value);
    }
  }
  if (connector == "upsert-kafka") sink.emplace_back("mode", "upsert");
  // The columns as the table declares them, spelled as a source's.
  std::string sourceText = createTableText(stmt, source);
  sourceText.replace(0, std::string("CREATE TABLE").size(), "CREATE SOURCE");
  ast::CreateSink sinkStmt;
  sinkStmt.name = stmt.name;
  throw SqlError(sqlstate::kFeatureNotSupported,
                 fmt::format("a table cannot be of connector '{}': rtsql reads a Kafka topic "
                             "with a SOURCE and writes one with a SINK",
                             connectorOption->value),
                 connectorOption->valuePos,
                 fmt::format("to read it: {}; to write it: {}", sourceText,
                             createSinkText(sinkStmt, sink)));
}

void hintDoubleQuotedString(SqlError& err, std::string_view sql) {
  if (err.sqlstate() != sqlstate::kUndefinedColumn || !err.hasPosition()) return;
  const size_t at = err.position();
  if (at >= sql.size() || sql[at] != '"' || err.message().rfind("column \"", 0) != 0) return;
  // The name as written, "" an escaped quote inside it.
  std::string name;
  size_t i = at + 1;
  for (; i < sql.size(); ++i) {
    if (sql[i] != '"') {
      name += sql[i];
    } else if (i + 1 < sql.size() && sql[i + 1] == '"') {
      name += '"';
      ++i;
    } else {
      break;
    }
  }
  if (i >= sql.size()) return;
  std::string quoted;
  for (char c : name) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  err.withHint(fmt::format("\"{}\" in double quotes is a column name here, as in PostgreSQL; Spark "
                           "reads it as a string: write the string in single quotes, '{}'",
                           name, quoted));
}

}  // namespace rtsql
