// The fields of Spark's day-time INTERVAL types (INTERVAL DAY, INTERVAL HOUR
// TO MINUTE, ..., INTERVAL DAY TO SECOND) and the text Spark writes of a
// value in one. rtsql keeps one day-time interval type (microseconds,
// TypeId::Interval), Spark's DAY TO SECOND; the fields only change how Spark
// names and writes a value, never what it holds or how it compares.
#pragma once

#include <cstdint>
#include <string>

namespace rtsql::dt {

enum class DtField : uint8_t { Day = 0, Hour = 1, Minute = 2, Second = 3 };

// Spark's ANSI text of `micros` in a type of fields (start, end), as its
// CAST(.. AS STRING) writes it: INTERVAL '1 02:03:04.5' DAY TO SECOND,
// INTERVAL '02:03' HOUR TO MINUTE, INTERVAL '03' HOUR. Fields below `end`
// are left out (truncated), as Spark does.
std::string sparkText(int64_t micros, DtField start, DtField end);

}  // namespace rtsql::dt
