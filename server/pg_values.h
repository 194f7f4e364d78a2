// How rtsql's values reach a PostgreSQL client in a result: the type a column
// is declared as, and a value's text form. The constant SELECT (select_statement.cpp)
// and live queries (live_query.cpp) both answer with rows, and a client reads
// a value by the type its column declared, so the two halves of the mapping
// live together here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/time_zone.h"
#include "common/types.h"
#include "common/value.h"

namespace rtsql {

// The PostgreSQL type a column of `type` is sent as (text format).
uint32_t pgTypeOf(const DataType& type);

// A value's text form for a column of pgTypeOf() its type: booleans are t/f,
// a TIMESTAMP as pgTimestamptzText() in the session time zone, a DATE and a
// TIMESTAMP_NTZ as PostgreSQL's date and timestamp write them (a year past
// 9999 without Spark's '+', year 0 as 1 BC), the rest as Value::toString()
// writes them; null for NULL.
std::optional<std::string> pgTextOf(const Value& v);

// An instant as PostgreSQL writes a timestamptz (DateStyle ISO) in `zone`:
// the wall clock there and its offset, "2024-03-31 03:30:00.5+02",
// "+05:30", "-00:01:15" (seconds for a local mean time), " BC" after the
// offset for years before 1.
std::string pgTimestamptzText(int64_t utcMicros, const TimeZone& zone);

// The way back: a value of `type` from the text pgTextOf() wrote for it, in
// any session time zone (a TIMESTAMP's offset says which instant its wall
// clock is), for rows a node of the cluster sends another
// (server/views/view_remote.h). Nullopt when the text is no such value, or
// `type` is not one pgTextReadable() reads.
std::optional<Value> valueOfPgText(std::string_view text, const DataType& type);
// Whether valueOfPgText() reads values of `type`: booleans, numbers,
// decimals, strings, dates and timestamps. Not binary, intervals, arrays,
// maps or structs, whose text does not say all of the value.
bool pgTextReadable(const DataType& type);

// The result of a query that reads only the catalog as PostgreSQL shows it
// (psql's, SQLAlchemy's and pgjdbc's metadata queries) sends its arrays as
// PostgreSQL does, so that drivers read them as lists: the column declared as
// PostgreSQL's array type of the element (text[], int4[], ...; text for an
// element type without one) and each value in PostgreSQL's text form,
// `{a,b}`, elements quoted where PostgreSQL quotes them and NULL written
// NULL. Other queries' arrays keep rtsql's form ([a, b], docs/sql.md).
uint32_t pgArrayTypeOf(const DataType& type);
std::optional<std::string> pgArrayTextOf(const Value& v);

}  // namespace rtsql
