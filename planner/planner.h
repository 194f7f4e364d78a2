// Binding and planning: an AST query plus the catalog becomes a PhysicalPlan.
// Errors are SqlErrors at the position of the offending name or expression:
// unknown relation 42P01, unknown column 42703, ambiguous column 42702, type
// mismatch 42804, unknown function 42883, unsupported feature 0A000.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "parser/ast.h"
#include "planner/bounded_relation.h"
#include "planner/catalog.h"
#include "planner/physical_plan.h"

namespace rtsql {

struct PlanContext {
  const Catalog* catalog = nullptr;
  // Number of partitions of a source, asked when `maxPartitions` is not set
  // (the server asks the connector; tests give a number).
  std::function<int(const SourceDef&)> sourcePartitions;
  // Session settings (SET 'shuffle.partitions' = '8').
  Options session;
  // Checks that a flow's sink can write the query's columns (`columns`: each
  // output's name and position), beyond what the planner knows of the
  // format: a protobuf sink's columns against its message. Throws SqlError
  // at the column. Unset: no such check (tests).
  std::function<void(const SinkSpec&, const std::vector<std::pair<std::string, size_t>>&)>
      checkSinkColumns;
  // Set for a bounded query only (planBoundedQuery): the finite relation a
  // FROM name reads (planner/bounded_relation.h), or null when the name is not
  // one (it is then looked up as a source).
  std::function<std::shared_ptr<const BoundedRelation>(const std::string&)> boundedRelation;
};

// Plans `CREATE FLOW`. Checks that the sink exists and that the query's
// columns suit the sink's format (raw needs a `value` column).
PhysicalPlan planFlow(const ast::CreateFlow& stmt, const PlanContext& ctx);

// Plans a query the way a flow would run it, writing to the client instead of a
// sink (sink.connector = "client"): used by EXPLAIN SELECT and live queries.
// LIMIT is allowed here (the client stops after n rows); it is not in a flow.
PhysicalPlan planQuery(const ast::Query& query, const PlanContext& ctx);

// Plans a bounded query (docs/sql.md, "Bounded queries"): as planQuery, but
// each FROM name that ctx.boundedRelation answers is a scan of that finite
// relation (connector kBoundedConnector), and ORDER BY is allowed: the run
// sorts the collected result (server/bounded_query.h). ctx.boundedRelation
// must be set.
PhysicalPlan planBoundedQuery(const ast::Query& query, const PlanContext& ctx);

// Binds a declared column list into a Schema (types resolved; 42701 for a
// name given twice). A source's connector picks its schema
// (Connector::bindSourceSchema): the declared columns alone, or a Kafka
// record's, below.
Schema bindColumns(const std::vector<ast::ColumnDef>& columns);
// A statement's WITH (...) options, each with the positions of its key and
// value for errors.
Options bindOptions(const std::vector<ast::Option>& options);
// A Kafka record's columns: for format 'json' or 'csv' the declared ones (a
// list is required) then the hidden metadata columns (_key, _timestamp,
// _partition, _offset, _headers); for 'raw' Spark's fixed Kafka schema; for
// 'avro' and 'protobuf' the `payload` columns the connector read from the
// record schema or message (connectors/format/avro_schema.h,
// protobuf_schema.h), then the metadata columns.
Schema bindKafkaRecordSchema(const ast::CreateSource& stmt, const std::string& format,
                             bool includeHeaders, const Schema* payload = nullptr);
// Whether `name` is a valid Avro name (letters, digits and _, not starting with
// a digit): an Avro sink's columns and struct fields must be.
bool isAvroName(std::string_view name);
Schema bindTableSchema(const ast::CreateTable& stmt);
DataTypePtr bindType(const ast::TypeName& type);

// Binds a source's `WATERMARK FOR col AS col - INTERVAL ...` against its bound
// schema: the column must be a TIMESTAMP; std::nullopt when none is declared.
std::optional<WatermarkDef> bindWatermark(const ast::CreateSource& stmt, const Schema& schema);

// Evaluates a constant expression (INSERT VALUES); 42804 when not constant.
Value evalConstant(const ast::Expr& expr, const DataTypePtr& target);

// The most entries a select list may have once `*` is expanded. PostgreSQL's
// limit, so a result keeps to what clients are built for and its column count
// stays well inside the 16 bits the wire protocol gives it.
inline constexpr size_t kMaxSelectListEntries = 1664;

// Throws SqlError 54011 (too_many_columns) when a select list has `count`
// entries, more than kMaxSelectListEntries; `firstExtraPos` is where the first
// entry beyond the limit is written.
void checkSelectListLength(size_t count, size_t firstExtraPos);

// Binds an expression against a schema (used for watermark expressions, a
// constant SELECT and tests); it may call the user functions of `functions`
// (null: none).
ExprPtr bindExpression(const ast::Expr& expr, const Schema& schema,
                       const Catalog* functions = nullptr);

}  // namespace rtsql
