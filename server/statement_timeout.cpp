#include "server/statement_timeout.h"

#include <fmt/format.h>

#include <cctype>
#include <limits>

#include "common/schema.h"

namespace rtsql {

int64_t parseStatementTimeoutMs(const std::string& text, size_t pos) {
  auto bad = [&] {
    return SqlError(sqlstate::kInvalidParameterValue,
                    fmt::format("invalid value for parameter \"statement_timeout\": \"{}\"", text), pos,
                    "a number of milliseconds, or a number with a unit: ms, s, min, h, d (0 for no limit)");
  };
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  size_t digits = i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == digits || i - digits > 12) throw bad();
  const int64_t n = std::stoll(text.substr(digits, i - digits));
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  size_t unitEnd = text.find_last_not_of(" \t") + 1;
  std::string unit = toLower(text.substr(i, unitEnd > i ? unitEnd - i : 0));
  int64_t scale = 0;
  if (unit.empty() || unit == "ms") scale = 1;
  else if (unit == "s") scale = 1000;
  else if (unit == "min") scale = 60 * 1000;
  else if (unit == "h") scale = 3600 * 1000;
  else if (unit == "d") scale = 86400 * 1000;
  else throw bad();
  // PostgreSQL's largest value, about 24 days.
  if (n > std::numeric_limits<int32_t>::max() / scale) throw bad();
  return n * scale;
}

DeadlineWriter::DeadlineWriter(ResultWriter& out, int64_t timeoutMs)
    : out_(out),
      hasDeadline_(timeoutMs > 0),
      deadline_(Clock::now() + std::chrono::milliseconds(timeoutMs)) {}

bool DeadlineWriter::cancelled() const {
  if (out_.cancelled()) return true;
  if (!hasDeadline_) return false;
  if (!expired_ && Clock::now() >= deadline_) expired_ = true;
  return expired_;
}

void DeadlineWriter::complete(const std::string& commandTag) {
  if (expired_) {
    out_.error(timeoutError());
  } else {
    out_.complete(commandTag);
  }
}

SqlError DeadlineWriter::timeoutError() {
  return SqlError(sqlstate::kQueryCanceled, "canceling statement due to statement timeout",
                  SqlError::npos, "SET statement_timeout = 0 lets statements run without a limit");
}

}  // namespace rtsql
