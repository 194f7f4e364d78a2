// ANSI mode (see ansi_mode.h).
#include "common/ansi_mode.h"

#include <fmt/format.h>

#include "common/schema.h"
#include "common/pg_session.h"

namespace rtsql {

namespace {
// Per thread, as the session time zone is: the functions are bound on the
// statement's (or the flow planner's) thread. -1: no scope installed.
thread_local int tScopedAnsi = -1;
}  // namespace

bool ansiMode() {
  if (tScopedAnsi >= 0) return tScopedAnsi == 1;
  if (const PgSession* s = currentPgSession()) return s->ansiMode();
  return true;
}

bool parseAnsiMode(std::string_view value, std::string_view key, size_t pos) {
  if (iequals(value, "on") || iequals(value, "true") || value == "1") return true;
  if (iequals(value, "off") || iequals(value, "false") || value == "0") return false;
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("invalid value '{}' for {}", value.substr(0, 64), key), pos,
                 "on or off");
}

AnsiModeScope::AnsiModeScope(bool on) : previous_(tScopedAnsi) { tScopedAnsi = on ? 1 : 0; }

AnsiModeScope::~AnsiModeScope() { tScopedAnsi = previous_; }

namespace ansi {

void raise(const ErrorClass& c, const std::string& message, std::string_view tryFunction,
           size_t pos) {
  std::string hint =
      tryFunction.empty()
          ? std::string("SET ansi_mode = off (or the flow option 'ansi_mode' = 'off') answers "
                        "NULL instead")
          : fmt::format("use {} to answer NULL instead, or SET ansi_mode = off", tryFunction);
  throw SqlError(c.sqlstate, fmt::format("[{}] {}", c.name, message), pos, std::move(hint));
}

}  // namespace ansi

}  // namespace rtsql
