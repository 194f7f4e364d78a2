// INSERT INTO <kafka source>: writes records to the source's topic in the
// source's own format, so that a script can feed a flow (an example's
// `*_input.sql`, a test, a demo) without a Kafka producer of its own.
//
//   INSERT INTO clicks VALUES ('alice', '/home', 12.5, TIMESTAMP '2024-05-01 12:00:00');
//   INSERT INTO clicks (user_id, amount, _key) VALUES ('bob', 3, CAST('bob' AS BINARY));
//   INSERT INTO clicks SELECT name, '/home', 1.0, now() FROM users_table WHERE ...;
//
// Each row becomes one record: its declared columns are encoded as a flow's
// sink of that format would write them (json, csv; a debezium-json source
// gets a create, "op": "c"; avro and protobuf are refused, their sinks
// writing a schema of their own), and the hidden Kafka
// metadata columns name the record's key (`_key`), headers (`_headers`),
// partition (`_partition`) and timestamp (`_timestamp`). A raw source takes
// its `key`, `value`, `partition`, `timestamp` and `headers` columns.
//
// The rows come from VALUES or from a bounded SELECT: one without FROM, or a
// bounded query (over static tables or a source's FOR OFFSETS range: any
// clause, aggregates, joins and ORDER BY included, run by the bounded-query
// engine, server/bounded_query.h). A SELECT that reads a source as it grows
// would never end and is refused with a hint.
//
// The statement completes when the broker has acknowledged every record
// (INSERT 0 n), within a bounded wait that a cancel and the statement
// timeout end; a record the broker refused fails it, naming how many were
// written. Records already acknowledged stay written: Kafka has no rollback.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "parser/ast.h"
#include "planner/catalog.h"
#include "server/query_handler.h"

namespace rtsql {

struct InsertIntoSource {
  const Catalog& catalog;         // the tables a SELECT may read
  const SourceDef& source;        // the target
  std::string embeddedBootstrap;  // what 'embedded' means here (empty: none)
  bool dryRun = false;            // validate and encode, write nothing
  // A SELECT over bounded relations only (server/bounded_query.h), run by
  // the bounded-query engine: its rows, or nothing for any other SELECT,
  // which the statement evaluates itself (one without FROM) or refuses.
  std::function<std::optional<std::vector<Row>>(const ast::Query&)> boundedRows;
};

// Runs `stmt` (whose target is `target.source`) and completes `out` with
// "INSERT 0 n". Throws SqlError: 0A000 for a source that is not Kafka's or a
// SELECT that is not bounded, 42703 for an unknown column, 42804 for a value
// of the wrong type, 08006 when the broker does not acknowledge in time.
void insertIntoSource(const InsertIntoSource& target, const ast::Insert& stmt, ResultWriter& out);

}  // namespace rtsql
