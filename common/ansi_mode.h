// ANSI mode, as Spark 4 has it on by default: a cast of text that does not
// parse, an overflow, a division by zero, an invalid date or an array index
// out of range raises an error instead of answering NULL (or a wrapped
// value), which the legacy mode (`SET ansi_mode = off`) keeps doing.
//
// The mode is chosen when an expression is bound, never per record: a node
// that may fail either way is built for the mode in force on the binding
// thread and raises only on its error path. A session's statements bind
// under the session's `ansi_mode` (read through its PgSession); a flow binds
// under the mode it recorded when it was created (planner/planner.cpp
// installs an AnsiModeScope), so a later SET never changes a running flow.
//
// The errors carry Spark's error class in brackets at the start of the
// message, its SQLSTATE, and a hint naming the try_ function that answers
// NULL instead, or the setting that turns the mode off.
#pragma once

#include <string>
#include <string_view>

#include "common/error.h"

namespace rtsql {

// The session setting, and Spark's name for it, which SET takes too.
inline constexpr const char* kAnsiModeSetting = "ansi_mode";
inline constexpr const char* kSparkAnsiSetting = "spark.sql.ansi.enabled";

// Whether expressions bound now on this thread follow ANSI mode: the mode an
// AnsiModeScope installed, else the PostgreSQL session's setting, else on.
bool ansiMode();

// Reads a setting's text as a mode: on/true/1 or off/false/0 (any case).
// SqlError 22023 at `pos` naming `key` for anything else.
bool parseAnsiMode(std::string_view value, std::string_view key, size_t pos = SqlError::npos);

// Installs `on` as this thread's mode for the life of the scope.
class AnsiModeScope {
 public:
  explicit AnsiModeScope(bool on);
  ~AnsiModeScope();
  AnsiModeScope(const AnsiModeScope&) = delete;
  AnsiModeScope& operator=(const AnsiModeScope&) = delete;

 private:
  int previous_;
};

// Spark's error classes and the SQLSTATE each is raised with.
namespace ansi {
struct ErrorClass {
  const char* name;
  const char* sqlstate;
};
inline constexpr ErrorClass kCastInvalidInput{"CAST_INVALID_INPUT", "22018"};
inline constexpr ErrorClass kCastOverflow{"CAST_OVERFLOW", "22003"};
inline constexpr ErrorClass kArithmeticOverflow{"ARITHMETIC_OVERFLOW", "22003"};
inline constexpr ErrorClass kNumericOutOfRange{"NUMERIC_VALUE_OUT_OF_RANGE", "22003"};
inline constexpr ErrorClass kDivideByZero{"DIVIDE_BY_ZERO", "22012"};
inline constexpr ErrorClass kRemainderByZero{"REMAINDER_BY_ZERO", "22012"};
inline constexpr ErrorClass kIntervalDividedByZero{"INTERVAL_DIVIDED_BY_ZERO", "22012"};
inline constexpr ErrorClass kInvalidArrayIndex{"INVALID_ARRAY_INDEX", "22003"};
inline constexpr ErrorClass kInvalidArrayIndexInElementAt{"INVALID_ARRAY_INDEX_IN_ELEMENT_AT",
                                                          "22003"};
inline constexpr ErrorClass kInvalidIndexOfZero{"INVALID_INDEX_OF_ZERO", "22003"};
inline constexpr ErrorClass kCannotParseTimestamp{"CANNOT_PARSE_TIMESTAMP", "22007"};
inline constexpr ErrorClass kDatetimeFieldOutOfBounds{"DATETIME_FIELD_OUT_OF_BOUNDS", "22023"};
inline constexpr ErrorClass kDatetimeOverflow{"DATETIME_OVERFLOW", "22008"};
inline constexpr ErrorClass kIllegalDayOfWeek{"ILLEGAL_DAY_OF_WEEK", "22009"};
inline constexpr ErrorClass kConversionInvalidInput{"CONVERSION_INVALID_INPUT", "22018"};
inline constexpr ErrorClass kMalformedCharacterCoding{"MALFORMED_CHARACTER_CODING", "22000"};
inline constexpr ErrorClass kInvalidUrl{"INVALID_URL", "22P02"};

// Throws the error of class `c` with `message` (what failed, naming the
// value) and a hint: `tryFunction` when one answers NULL instead, and
// always how to turn ANSI mode off. Out of line and cold: the nodes that
// call it keep their record path as it was.
[[noreturn, gnu::cold, gnu::noinline]] void raise(const ErrorClass& c, const std::string& message,
                                                  std::string_view tryFunction = {},
                                                  size_t pos = SqlError::npos);
}  // namespace ansi

}  // namespace rtsql
