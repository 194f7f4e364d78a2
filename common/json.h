// JSON writing for sinks and the progress JSON, and JSON text <-> Value
// conversion for decoders. Writing is hand-rolled for speed (no DOM); parsing
// uses simdjson.
#pragma once

#include <string>
#include <string_view>

#include "common/schema.h"
#include "common/value.h"

namespace rtsql {

// Appends `s` as a JSON string literal (with quotes and escapes) to `out`.
void appendJsonString(std::string& out, std::string_view s);
// Appends a value as JSON: numbers, strings, booleans, null; timestamps as
// ISO-8601 strings ("2024-05-01T10:00:00.000Z"); binaries as base64 strings;
// arrays as arrays; structs as objects using the field names of `type`.
void appendJsonValue(std::string& out, const Value& v, const DataType& type);
// The row as one JSON object, visible columns only, in schema order.
std::string rowToJson(const Row& row, const Schema& schema);

// Formats a timestamp (micros since epoch, UTC) as "2024-05-01 10:00:00.123456"
// (trailing zero fractions trimmed, as Spark shows it) or in ISO form with 'T'/'Z';
// a year past 9999 or before 0 with its sign, as formatDate.
std::string formatTimestamp(int64_t micros, bool iso = false);
// Parses "2024-05-01 10:00:00[.ffffff][Z|+hh:mm]", "2024-05-01T10:00:00Z" and
// "2024-05-01"; returns false on bad text. Without `applyOffset` an offset in
// the text is read and left out (a TIMESTAMP_NTZ's wall clock, as Spark casts).
bool parseTimestamp(std::string_view text, int64_t* micros, bool applyOffset = true);
// Parses a date as Spark casts text to DATE: "2024", "2024-5", "2024-05-01",
// the last followed by ' ' or 'T' and anything (a time that is not read),
// surrounding spaces allowed; `days` since 1970-01-01. False on bad text or a
// day the month does not have.
bool parseDate(std::string_view text, int64_t* days);
// A date (days since 1970-01-01) as "2024-05-01" (years past 9999 and before 0
// with their sign, +10000-01-01 and -0001-01-01, as Spark prints them).
std::string formatDate(int64_t days);

}  // namespace rtsql
