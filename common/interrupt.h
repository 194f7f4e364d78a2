// Interrupting an evaluation that takes long on one row. Each function call is
// bounded (regular expressions match in linear time, values are capped at
// 64 MiB), but some loop over many matches of one large value. Such a loop
// polls the check that the thread running it has installed: a statement's
// session thread installs "cancel requested, statement_timeout passed or
// client gone", a flow's task thread "the flow is stopping". So a cancel
// request, statement_timeout, STOP FLOW and SIGTERM take effect between two
// matches rather than after the whole value.
#pragma once

#include "common/error.h"

namespace rtsql {

// Installs a check for the current thread for the life of the scope, and puts
// the previous one back after.
class InterruptScope {
 public:
  using Check = bool (*)(const void* context);
  InterruptScope(Check check, const void* context);
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  Check previousCheck_;
  const void* previousContext_;
};

// What an evaluation throws when it stops for its thread's check: 57014, as
// PostgreSQL reports a cancelled statement.
class Interrupted : public SqlError {
 public:
  Interrupted();
};

// Throws Interrupted when the current thread's check says its work is
// cancelled; does nothing on a thread without one.
void throwIfInterrupted();

}  // namespace rtsql
