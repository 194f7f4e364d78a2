// Interrupting an evaluation that takes long on one row. Each function call is
// bounded (regular expressions match in linear time, values are capped at
// 64 MiB), but some loop over many matches of one large value. Such a loop
// polls the check that the thread running it has installed: a statement's
// session thread installs "cancel requested, statement_timeout passed or
// client gone", a flow's task thread "the flow is stopping". So a cancel
// request, statement_timeout, STOP FLOW and SIGTERM take effect between two
// matches rather than after the whole value.
//
// A Python call is interrupted from outside: the Python watchdog
// (common/python/interrupt.cpp) polls, from its own thread, the
// check the scope gives for that use (`fromAnyThread`), which reads only
// atomics and the clock and never waits.
#pragma once

#include "common/error.h"

namespace rtsql {

// Installs a check for the current thread for the life of the scope, and puts
// the previous one back after.
class InterruptScope {
 public:
  using Check = bool (*)(const void* context);
  // `fromAnyThread`, when given, says the same as `check` or less, and may be
  // called from any thread while the scope lives.
  InterruptScope(Check check, const void* context, Check fromAnyThread = nullptr);
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  Check previousCheck_;
  const void* previousContext_;
  Check previousFromAnyThread_;
};

// The check of the current thread that any thread may call, and its context.
struct InterruptCheck {
  InterruptScope::Check check = nullptr;
  const void* context = nullptr;
};

// The current thread's check for other threads (none outside every
// InterruptScope, or where its scope gave none).
InterruptCheck currentInterruptCheck();

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
