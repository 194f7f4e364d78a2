// Where a built-in function answers otherwise than Apache Spark 4.3, one line
// per function: SHOW FUNCTIONS shows it in its `spark` column, and
// docs/sql.md lists the same lines ("Functions that differ from Spark"),
// which tests/e2e/test_spark_functions.py checks against SHOW FUNCTIONS.
// tests/data/spark/known_differences.txt holds the calls that show each one.
#include "common/functions/spark_differences.h"

#include <algorithm>
#include <array>
#include <utility>

namespace rtsql {

namespace {

constexpr std::string_view kLastDigit =
    "the C library's result, which may differ from Java's StrictMath in the last digit";
// Spark's sin, cos and tan (and cot, sec, csc over them) call java.lang.Math,
// not StrictMath: on x86-64 a HotSpot intrinsic, closer to the C library than
// fdlibm is.
constexpr std::string_view kTrig =
    "the C library's result, which may differ from Java's Math (a HotSpot intrinsic) in the last "
    "digit";
constexpr std::string_view kFromText =
    "takes no options argument; a field that does not convert is NULL, where Spark's PERMISSIVE "
    "mode makes the whole record NULL";

// Sorted by name (checked when compiled).
constexpr auto kDifferences = std::to_array<std::pair<std::string_view, std::string_view>>({
    {"acos", kLastDigit},
    {"acosh", kLastDigit},
    {"asin", kLastDigit},
    {"asinh", kLastDigit},
    {"atan", kLastDigit},
    {"atan2", kLastDigit},
    {"atanh", kLastDigit},
    {"cbrt", kLastDigit},
    {"coalesce",
     "in the legacy mode a STRING mixed with a number or BOOLEAN is 42804; Spark's legacy mode "
     "makes them STRING"},
    {"collect_set", "its values in ascending order; Spark's in its hash set's order"},
    {"cos", kTrig},
    {"cosh", kLastDigit},
    {"cot", kTrig},
    {"csc", kTrig},
    {"date_trunc",
     "an unknown literal unit is an error when the statement is planned; Spark gives NULL"},
    {"exp", kLastDigit},
    {"expm1", kLastDigit},
    {"format_number",
     "a pattern with quotes, per mille or a negative subpattern is an error; Spark takes any "
     "DecimalFormat pattern"},
    {"from_avro",
     "reads the Avro types the avro source reads: a map, a decimal and a union of other than "
     "null and one type are 0A000; Spark reads them"},
    {"from_csv", kFromText},
    {"from_json", kFromText},
    {"hypot", kLastDigit},
    {"ln", kLastDigit},
    {"log", kLastDigit},
    {"log10", kLastDigit},
    {"log1p", kLastDigit},
    {"log2", kLastDigit},
    {"pow", kLastDigit},
    {"power", kLastDigit},
    {"sec", kTrig},
    {"sin", kTrig},
    {"sinh", kLastDigit},
    {"tan", kTrig},
    {"tanh", kLastDigit},
    {"to_avro",
     "without a schema writes every value as nullable (a union of its type and null); Spark "
     "leaves out the union where it knows the value is not NULL (a literal)"},
    {"typeof",
     "a day-time interval of another range than DAY TO SECOND (INTERVAL '3' HOUR) is named "
     "interval day to second, rtsql's one day-time type; Spark names its range"},
});
static_assert(std::is_sorted(kDifferences.begin(), kDifferences.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; }));

}  // namespace

std::optional<std::string_view> sparkDifference(std::string_view function) {
  auto it = std::lower_bound(kDifferences.begin(), kDifferences.end(), function,
                             [](const auto& e, std::string_view n) { return e.first < n; });
  if (it == kDifferences.end() || it->first != function) return std::nullopt;
  return it->second;
}

}  // namespace rtsql
