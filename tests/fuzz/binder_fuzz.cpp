// Fuzz target: SQL text through the parser, then the binder and planner, over a
// catalog like the one the SQL logic tests build (a source of every column
// type with a watermark, a table, json and raw sinks). Every statement that
// parses is bound the way rtsqld would: CREATE SOURCE / TABLE bind their
// schemas, INSERT evaluates its values, CREATE / DROP FUNCTION change the
// functions, SELECT and CREATE FLOW (also under EXPLAIN) are planned (with
// calls of those functions inlined) and explained. Only SqlError may come out.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "parser/parser.h"
#include "planner/planner.h"
#include "planner/user_function.h"

using namespace rtsql;

namespace {

SourceDef sourceDef(const ast::CreateSource& s) {
  SourceDef def;
  def.name = s.name;
  def.options = bindOptions(s.options);
  def.connector = toLower(def.options.getString("connector"));
  def.format = toLower(def.options.getString("format", "json"));
  // Stands in for the connector registry, which sits above the planner.
  def.schema = def.connector == "datagen"
                   ? bindColumns(s.columns)
                   : bindKafkaRecordSchema(s, def.format, def.options.getBool("includeHeaders", false));
  if (auto wm = bindWatermark(s, def.schema)) def.watermark = *wm;
  def.traits.partitionedLog = def.connector == "kafka";
  def.sql = s.text;
  return def;
}

// Adds CREATE SOURCE / SINK / TABLE / FUNCTION to `catalog`; plans everything else.
void bindStatement(const ast::Statement& stmt, Catalog& catalog, const PlanContext& ctx) {
  switch (stmt.kind) {
    case ast::StatementKind::CreateSource: {
      const auto& s = static_cast<const ast::CreateSource&>(stmt);
      catalog.addSource(sourceDef(s), s.ifNotExists, s.namePos);
      break;
    }
    case ast::StatementKind::CreateSink: {
      const auto& s = static_cast<const ast::CreateSink&>(stmt);
      SinkDef def;
      def.name = s.name;
      def.options = bindOptions(s.options);
      def.connector = toLower(def.options.getString("connector"));
      def.format = toLower(def.options.getString("format", "json"));
      def.exactlyOnce = def.connector == "kafka";
      def.traits.kafkaCluster = def.connector == "kafka";
      def.traits.writesEveryChange = def.connector == "blackhole";
      catalog.addSink(std::move(def), s.ifNotExists, s.namePos);
      break;
    }
    case ast::StatementKind::CreateTable: {
      const auto& s = static_cast<const ast::CreateTable&>(stmt);
      TableDef def;
      def.name = s.name;
      def.schema = bindTableSchema(s);
      def.options = bindOptions(s.options);
      catalog.addTable(std::move(def), s.ifNotExists, s.namePos);
      break;
    }
    case ast::StatementKind::Insert: {
      const auto& s = static_cast<const ast::Insert&>(stmt);
      auto table = catalog.findTable(s.table);
      if (!table) break;
      for (const auto& row : s.rows) {
        for (size_t i = 0; i < row.size() && i < table->schema.size(); ++i) {
          evalConstant(*row[i], table->schema.columns[i].type);
        }
      }
      break;
    }
    case ast::StatementKind::CreateFunction: {
      const auto& s = static_cast<const ast::CreateFunction&>(stmt);
      catalog.addFunction(defineUserFunction(s, catalog), s.orReplace, s.ifNotExists, s.namePos);
      break;
    }
    case ast::StatementKind::Drop: {
      const auto& s = static_cast<const ast::Drop&>(stmt);
      if (s.object == ast::ObjectKind::Function)
        catalog.dropFunction(s.name, s.ifExists, s.namePos);
      break;
    }
    case ast::StatementKind::CreateFlow:
      planFlow(static_cast<const ast::CreateFlow&>(stmt), ctx).explain();
      break;
    case ast::StatementKind::Select:
      planQuery(*static_cast<const ast::SelectStatement&>(stmt).query, ctx).explain();
      break;
    case ast::StatementKind::Explain:
      // EXPLAIN FLOW name has no statement inside: it reads a running flow's plan.
      if (const auto& inner = static_cast<const ast::Explain&>(stmt).inner) {
        bindStatement(*inner, catalog, ctx);
      }
      break;
    default:
      break;
  }
}

const char* kCatalog = R"(
CREATE SOURCE clicks (
  user_id STRING, url STRING, amount DOUBLE, n INT, big BIGINT, ok BOOLEAN, ts TIMESTAMP,
  payload BINARY, info STRUCT<country STRING, zip INT>, tags ARRAY<STRING>,
  WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
) WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
        subscribe = 'clicks', format = 'json');
CREATE SOURCE users (id STRING, name STRING, ts TIMESTAMP,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
  WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
        subscribe = 'users', format = 'csv');
CREATE SOURCE rawin WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
                          subscribe = 'rawin', format = 'raw');
CREATE TABLE countries (code STRING, name STRING) WITH (primaryKey = 'code');
CREATE SINK alerts WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
                         topic = 'alerts', format = 'json');
CREATE SINK rawout WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
                         topic = 'out', format = 'raw');
)";

const Catalog& baseCatalog() {
  static const Catalog* catalog = [] {
    auto* c = new Catalog();
    PlanContext ctx;
    ctx.catalog = c;
    for (const auto& stmt : parseStatements(kCatalog)) bindStatement(*stmt, *c, ctx);
    return c;
  }();
  return *catalog;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<ast::StatementPtr> stmts;
  try {
    stmts = parseStatements(text);
  } catch (const SqlError&) {
    return -1;  // not worth keeping in the corpus: the parser target covers it
  }
  Catalog catalog(baseCatalog());
  PlanContext ctx;
  ctx.catalog = &catalog;
  ctx.sourcePartitions = [](const SourceDef&) { return 2; };
  for (const auto& stmt : stmts) {
    try {
      bindStatement(*stmt, catalog, ctx);
    } catch (const SqlError&) {
    }
  }
  return 0;
}
