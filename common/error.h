// Errors in rtsql come in two kinds. A SqlError is the user's: bad SQL, a wrong
// option, an undecodable record. It carries a SQLSTATE, a position in the
// statement text and a hint, and travels to the client as an ErrorResponse. An
// InternalError is ours: a broken invariant. The server reports it as XX000 and
// keeps the session alive; it is never the answer to bad input.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace rtsql {

// Every SQLSTATE code rtsql raises, named as PostgreSQL names them. Code that
// raises an error names its code here rather than spelling the digits.
namespace sqlstate {
inline constexpr const char* kSyntaxError = "42601";
inline constexpr const char* kInvalidName = "42602";
inline constexpr const char* kUndefinedColumn = "42703";
inline constexpr const char* kUndefinedTable = "42P01";
inline constexpr const char* kUndefinedFunction = "42883";
inline constexpr const char* kUndefinedObject = "42704";
inline constexpr const char* kDatatypeMismatch = "42804";
inline constexpr const char* kDuplicateObject = "42710";
inline constexpr const char* kReservedName = "42939";
inline constexpr const char* kAmbiguousColumn = "42702";
inline constexpr const char* kGroupingError = "42803";
inline constexpr const char* kWrongObjectType = "42809";
inline constexpr const char* kInvalidParameterValue = "22023";
inline constexpr const char* kInvalidTextRepresentation = "22P02";
inline constexpr const char* kDivisionByZero = "22012";
inline constexpr const char* kNumericOutOfRange = "22003";
inline constexpr const char* kDataException = "22000";
inline constexpr const char* kFeatureNotSupported = "0A000";
inline constexpr const char* kInsufficientPrivilege = "42501";
inline constexpr const char* kObjectInUse = "55006";
inline constexpr const char* kObjectNotInPrerequisiteState = "55000";
inline constexpr const char* kInsufficientResources = "53000";
inline constexpr const char* kConfigurationLimitExceeded = "53400";
inline constexpr const char* kConnectionFailure = "08006";
// A statement that met another's change at the same moment: run it again.
inline constexpr const char* kSerializationFailure = "40001";
inline constexpr const char* kProtocolViolation = "08P01";
inline constexpr const char* kInternalError = "XX000";
inline constexpr const char* kIoError = "58030";
inline constexpr const char* kDataCorrupted = "XX001";
inline constexpr const char* kInvalidDatetimeFormat = "22007";
inline constexpr const char* kCharacterNotInRepertoire = "22021";  // bad UTF-8
inline constexpr const char* kInvalidRegex = "2201B";
inline constexpr const char* kDuplicateColumn = "42701";
// An event-time operator on a relation whose source declares no WATERMARK.
inline constexpr const char* kInvalidColumnReference = "42P10";
inline constexpr const char* kUndefinedParameter = "42P02";
inline constexpr const char* kDuplicateCursor = "42P03";
// windowing_error: a named window not defined, defined twice, or refined
// against the rules (Spark's MISSING_WINDOW_SPECIFICATION).
inline constexpr const char* kWindowingError = "42P20";
inline constexpr const char* kDuplicatePreparedStatement = "42P05";
inline constexpr const char* kInvalidStatementName = "26000";
// A statement that writes, where only reads are allowed (the console).
inline constexpr const char* kReadOnlySqlTransaction = "25006";
inline constexpr const char* kInvalidCursorName = "34000";
// A scalar subquery that gave more than one row.
inline constexpr const char* kCardinalityViolation = "21000";
inline constexpr const char* kInvalidAuthorization = "28000";
inline constexpr const char* kInvalidPassword = "28P01";
inline constexpr const char* kTooManyConnections = "53300";
inline constexpr const char* kProgramLimitExceeded = "54000";
inline constexpr const char* kStatementTooComplex = "54001";  // nesting too deep
inline constexpr const char* kTooManyColumns = "54011";
inline constexpr const char* kQueryCanceled = "57014";
inline constexpr const char* kConfigFileError = "F0000";
inline constexpr const char* kDependentObjectsStillExist = "2BP01";
inline constexpr const char* kDuplicateFunction = "42723";
inline constexpr const char* kInvalidFunctionDefinition = "42P13";
}  // namespace sqlstate

class SqlError : public std::runtime_error {
 public:
  // position: 0-based byte offset into the text that was parsed, or npos when the
  // error has no place in the text.
  static constexpr size_t npos = static_cast<size_t>(-1);

  SqlError(std::string sqlstate, std::string message, size_t position = npos,
           std::string hint = {})
      : std::runtime_error(message),
        sqlstate_(std::move(sqlstate)),
        message_(std::move(message)),
        position_(position),
        hint_(std::move(hint)) {}

  const std::string& sqlstate() const { return sqlstate_; }
  const std::string& message() const { return message_; }
  size_t position() const { return position_; }
  bool hasPosition() const { return position_ != npos; }
  const std::string& hint() const { return hint_; }
  const std::string& detail() const { return detail_; }

  SqlError& withDetail(std::string d) {
    detail_ = std::move(d);
    return *this;
  }
  SqlError& withHint(std::string h) {
    hint_ = std::move(h);
    return *this;
  }
  // Used when a statement is parsed alone but lives at an offset in a larger text.
  void shiftPosition(size_t by) {
    if (position_ != npos) position_ += by;
  }
  void setPosition(size_t p) { position_ = p; }

 private:
  std::string sqlstate_;
  std::string message_;
  size_t position_;
  std::string hint_;
  std::string detail_;
};

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

template <typename... Args>
[[noreturn]] void throwSql(const char* state, size_t pos, fmt::format_string<Args...> f,
                           Args&&... args) {
  throw SqlError(state, fmt::format(f, std::forward<Args>(args)...), pos);
}

}  // namespace rtsql
