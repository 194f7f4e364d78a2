// Test helpers for the planner: a catalog filled from DDL text the way the
// server fills it, planning from SQL text, and catching SqlErrors to check their
// SQLSTATE and position.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>

#include "../sql_error_of.h"
#include "parser/parser.h"
#include "planner/planner.h"
#include "planner/sink_changelog.h"
#include "planner/user_function.h"

namespace rtsql::testing {

inline ast::StatementPtr parseOne(const std::string& sql) {
  auto stmts = parseStatements(sql);
  REQUIRE(stmts.size() == 1);
  return std::move(stmts[0]);
}

inline SourceDef sourceFrom(const ast::CreateSource& s) {
  SourceDef def;
  def.name = s.name;
  def.options = bindOptions(s.options);
  def.connector = toLower(def.options.getString("connector"));
  def.format = toLower(def.options.getString("format"));
  // Stands in for the connector registry, which sits above the planner:
  // datagen sources have their declared columns, Kafka sources a record's.
  def.schema = def.connector == "datagen"
                   ? bindColumns(s.columns)
                   : bindKafkaRecordSchema(s, def.format, def.options.getBool("includeHeaders", false));
  def.watermark = bindWatermark(s, def.schema);
  def.traits.partitionedLog = def.connector == "kafka";  // as KafkaConnector says
  // What Connector::parseSource reads that the planner acts on: the topics
  // of 'subscribe' (split at commas, blanks dropped, as kafka::splitTopics),
  // 'maxPartitions' and whether 'kafka.group.id' is set.
  auto parsed = std::make_shared<SourceOptions>();
  const std::string subscribe = def.options.getString("subscribe");
  for (size_t start = 0; start <= subscribe.size();) {
    size_t comma = std::min(subscribe.find(',', start), subscribe.size());
    std::string_view topic = std::string_view(subscribe).substr(start, comma - start);
    const size_t first = topic.find_first_not_of(" \t");
    if (first != std::string_view::npos) {
      topic = topic.substr(first, topic.find_last_not_of(" \t") - first + 1);
      parsed->topics.emplace_back(topic);
    }
    start = comma + 1;
  }
  if (def.options.has("maxPartitions")) {
    parsed->maxPartitions = static_cast<int>(def.options.getInt("maxPartitions", 1, 1, 1 << 20));
  }
  parsed->userGroup = def.options.has("kafka.group.id");
  def.parsed = std::move(parsed);
  def.sql = s.text;
  return def;
}

struct PlannerFixture {
  Catalog catalog;
  PlanContext ctx;
  int partitions = 2;

  PlannerFixture() {
    ctx.catalog = &catalog;
    ctx.sourcePartitions = [this](const SourceDef&) { return partitions; };
  }

  // Runs CREATE SOURCE / SINK / TABLE statements into the catalog.
  void ddl(const std::string& sql) {
    for (auto& stmt : parseStatements(sql)) {
      switch (stmt->kind) {
        case ast::StatementKind::CreateSource: {
          auto& s = static_cast<ast::CreateSource&>(*stmt);
          catalog.addSource(sourceFrom(s), s.ifNotExists, s.namePos);
          break;
        }
        case ast::StatementKind::CreateSink: {
          auto& s = static_cast<ast::CreateSink&>(*stmt);
          SinkDef def;
          def.name = s.name;
          def.options = bindOptions(s.options);
          def.connector = toLower(def.options.getString("connector"));
          def.format = toLower(def.options.getString("format", "json"));
          // As KafkaConnector and BlackholeConnector say.
          def.exactlyOnce = def.connector == "kafka";
          def.traits.kafkaCluster = def.connector == "kafka";
          def.traits.writesEveryChange = def.connector == "blackhole";
          // What Connector::parseSink reads that the planner acts on: 'mode',
          // and a Kafka sink's 'topic' and 'key'.
          auto parsed = std::make_shared<SinkOptions>();
          parsed->mode = sinkMode(def.options);
          if (def.connector == "kafka") {
            parsed->topic = def.options.getString("topic");
            if (const OptionEntry* key = def.options.find("key")) parsed->key = key->value;
          }
          def.parsed = std::move(parsed);
          catalog.addSink(std::move(def), s.ifNotExists, s.namePos);
          break;
        }
        case ast::StatementKind::CreateTable: {
          auto& s = static_cast<ast::CreateTable&>(*stmt);
          TableDef def;
          def.name = s.name;
          def.schema = bindTableSchema(s);
          def.options = bindOptions(s.options);
          catalog.addTable(std::move(def), s.ifNotExists, s.namePos);
          break;
        }
        default:
          FAIL("ddl() takes CREATE SOURCE / SINK / TABLE only");
      }
    }
  }

  PhysicalPlan flow(const std::string& sql) {
    auto stmt = parseOne(sql);
    REQUIRE(stmt->kind == ast::StatementKind::CreateFlow);
    return planFlow(static_cast<const ast::CreateFlow&>(*stmt), ctx);
  }

  PhysicalPlan query(const std::string& sql) {
    auto stmt = parseOne(sql);
    REQUIRE(stmt->kind == ast::StatementKind::Select);
    return planQuery(*static_cast<const ast::SelectStatement&>(*stmt).query, ctx);
  }
};

// The standard fixture of the planner tests: a clicks source, two sinks.
inline void addClicksAndSinks(PlannerFixture& f) {
  f.ddl(R"(
    CREATE SOURCE clicks (
      user_id STRING, url STRING, amount DOUBLE, ts TIMESTAMP,
      info STRUCT<country STRING, zip INT>, tags ARRAY<STRING>,
      WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
    ) WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
            subscribe = 'clicks', format = 'json');
    CREATE SINK alerts WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
                             topic = 'alerts', format = 'json');
    CREATE SINK rawout WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
                             topic = 'out', format = 'raw');
    CREATE SINK changes WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
                              topic = 'changes', format = 'debezium-json');
  )");
}

// The standard fixture with CREATE FUNCTION as the server runs it: the
// definition checked (defineUserFunction), then added to the catalog.
struct FunctionFixture : PlannerFixture {
  FunctionFixture() { addClicksAndSinks(*this); }

  void create(const std::string& sql) {
    auto stmt = parseOne(sql);
    REQUIRE(stmt->kind == ast::StatementKind::CreateFunction);
    const auto& cf = static_cast<const ast::CreateFunction&>(*stmt);
    catalog.addFunction(defineUserFunction(cf, catalog), cf.orReplace, cf.ifNotExists, cf.namePos);
  }

  SqlError createError(const std::string& sql) {
    return sqlErrorOf([&] { create(sql); });
  }
};

}  // namespace rtsql::testing
