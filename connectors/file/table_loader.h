// Static tables read from a file at CREATE TABLE time: the broadcast side of a
// stream-table join.
//
//   CREATE TABLE merchants (id BIGINT, name STRING, risk DOUBLE)
//   WITH (connector = 'file', path = 'data/merchants.csv', format = 'csv', header = 'true');
//
// csv: one row per line (RFC 4180 quotes, which may span lines), fields in the
// declared column order, the first line skipped when header = 'true'.
// json: one JSON object per line, columns by name. Empty lines are skipped. The
// rows are decoded by the same decoders as Kafka records, so a value means the
// same thing in a file and in a topic.
#pragma once

#include <vector>

#include "common/options.h"
#include "common/schema.h"
#include "common/value.h"

namespace rtsql {

// Options: connector, path (required), format ('csv' | 'json'; by default from
// the file extension: .json/.jsonl/.ndjson are json, anything else csv),
// header ('true' | 'false', default false; csv only), csv.delimiter.
// Throws SqlError 22023 (at the option's value, else at `stmtPos`).
void validateTableOptions(const Options& options, size_t stmtPos);

// Reads the whole file. Throws SqlError 58030 naming the path when it cannot be
// read, and 22P02 on the first bad line, e.g.
// `data/merchants.csv:7: field 'risk': expected DOUBLE`; the message never
// quotes the file's text (who may name which file: server/privileges.h).
std::vector<Row> loadTableFile(const Schema& schema, const Options& options, size_t stmtPos);

}  // namespace rtsql
