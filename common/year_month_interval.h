// Spark's YEAR-MONTH INTERVAL values (TypeId::YearMonthInterval): a signed
// count of months that fits an int32, and its three types INTERVAL YEAR,
// INTERVAL MONTH and INTERVAL YEAR TO MONTH. This unit holds the value's
// texts (Spark's, PostgreSQL's) and their reading; the operators and
// functions over it are in common/functions/year_month_interval.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/types.h"

namespace rtsql::ym {

// Spark's ANSI text of `months` in a type of fields (start, end), as CAST(..
// AS STRING), to_json and to_csv write it: INTERVAL '1-2' YEAR TO MONTH,
// INTERVAL '1' YEAR, INTERVAL '14' MONTH, INTERVAL '-0-5' YEAR TO MONTH.
std::string sparkText(int64_t months, YmField start, YmField end);
inline std::string sparkText(int64_t months, const DataType& t) {
  return sparkText(months, t.ymStart, t.ymEnd);
}

// PostgreSQL's text of an interval of `months` months, as pgwire sends an
// interval (OID 1186) and psql shows it: "1 year 2 mons", "-3 mons",
// "2 years", and "00:00:00" for none.
void appendPostgres(std::string& out, int64_t months);

// The months of `text` read as a value of type (start, end), as Spark's
// CAST(text AS INTERVAL ...) and its literals read it: '1-2' or
// "INTERVAL '1-2' YEAR TO MONTH" for YEAR TO MONTH (months 0 to 11), '3' or
// "INTERVAL '3' YEAR" for YEAR, '14' or "INTERVAL '14' MONTH" for MONTH, each
// with an optional sign (inside and outside the quotes) and surrounding
// spaces. nullopt when the text is not one of these or the months do not fit
// an int32.
std::optional<int32_t> parse(std::string_view text, YmField start, YmField end);

// The unit words of an interval type or literal: YEAR, YEARS, MONTH, MONTHS in
// any case; nullopt for any other word.
std::optional<YmField> fieldFromName(std::string_view word);

// The interval type of a unit range as written after INTERVAL in a type or a
// literal (`from` and `to` singular, upper case; `to` empty for one unit):
// YEAR, MONTH and YEAR TO MONTH are YEAR-MONTH INTERVAL types; DAY, HOUR,
// MINUTE, SECOND and their ranges (DAY TO SECOND) are the day-time INTERVAL.
// nullptr for a range that is neither (MONTH TO YEAR, YEAR TO DAY).
DataTypePtr intervalType(std::string_view from, std::string_view to);

}  // namespace rtsql::ym
