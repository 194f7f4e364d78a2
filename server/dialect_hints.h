// Statements other streaming SQL dialects spell differently, answered with
// rtsql's spelling: Flink's `INSERT INTO sink SELECT ...` (a flow here) and
// Flink's `CREATE TABLE t (...) WITH ('connector' = 'kafka', ...)` (a source
// or a sink here), each refused with a hint that holds the statement to run
// instead. (SELECT * FROM a flow is the binder's: planner/query_binder.cpp.)
#pragma once

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

}  // namespace rtsql
