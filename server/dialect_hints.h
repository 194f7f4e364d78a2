// Statements other streaming SQL dialects spell differently, answered with
// rtsql's spelling: Flink's `INSERT INTO sink SELECT ...` (a flow here) and
// Flink's `CREATE TABLE t (...) WITH ('connector' = 'kafka', ...)` (a source
// or a sink here), each refused with a hint that holds the statement to run
// instead; and Spark's "text" in double quotes, a name here.
// (SELECT * FROM a flow is the binder's: planner/query_binder.cpp.)
#pragma once

#include <string_view>

#include "common/error.h"
#include "common/options.h"
#include "parser/ast.h"
#include "planner/catalog.h"

namespace rtsql {

// INSERT INTO <sink> ...: 0A000 at the sink's name, the hint the CREATE FLOW
// statement that writes the query's rows to the sink.
SqlError insertIntoSinkError(const ast::Insert& stmt, const SinkDef& sink);

// CREATE TABLE with a 'connector' that reads or writes a stream (kafka, and
// Flink's upsert-kafka): 0A000 at the connector's value, the hint the CREATE
// SOURCE and CREATE SINK statements with rtsql's option names. Nothing for
// another table.
void refuseStreamTable(const ast::CreateTable& stmt, const Options& options);

// An unknown column written in double quotes ("text" in `sql` at the error's
// position): Spark reads it as a string, rtsql (as PostgreSQL, which psql and
// the drivers need) as a name. The hint says so and gives the string in single
// quotes, in place of the closest column; any other error is left as it is.
void hintDoubleQuotedString(SqlError& err, std::string_view sql);

}  // namespace rtsql
