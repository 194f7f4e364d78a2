// The one way an exception that escapes a call into the QueryHandler becomes
// the error a client sees. The engine's statement loop and every place the
// pgwire server calls the handler (opening a session, running, describing)
// report through here, so a failure reads the same whichever path met it.
//
// As in PostgreSQL, a user error keeps its SQLSTATE, message, position and
// hint; anything else is an internal error: SQLSTATE XX000 carrying the
// exception's message as it is, and the session stays alive.
#pragma once

#include <exception>
#include <optional>
#include <utility>

#include "common/error.h"

namespace rtsql {

// The message of an internal error whose exception carries none.
inline constexpr const char* kUnknownInternalError = "unknown internal error";

// The error a client sees for `e`: a SqlError as it is; an InternalError or
// any other std::exception as XX000 with its what(); anything else as XX000
// "unknown internal error".
SqlError handlerError(const std::exception_ptr& e);

// Calls `fn` and returns the error it threw, as handlerError() reports it, or
// nullopt when it returned normally.
template <typename Fn>
std::optional<SqlError> callHandler(Fn&& fn) {
  try {
    std::forward<Fn>(fn)();
    return std::nullopt;
  } catch (...) {
    return handlerError(std::current_exception());
  }
}

}  // namespace rtsql
