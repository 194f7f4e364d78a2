#include "common/interrupt.h"

namespace rtsql {

namespace {
// Per thread on purpose: a cancel is polled from any evaluation on the thread
// that runs the statement or the task, whose callers cannot all pass it.
thread_local InterruptScope::Check tCheck = nullptr;
thread_local const void* tContext = nullptr;
thread_local InterruptScope::Check tFromAnyThread = nullptr;
}  // namespace

InterruptScope::InterruptScope(Check check, const void* context, Check fromAnyThread)
    : previousCheck_(tCheck), previousContext_(tContext), previousFromAnyThread_(tFromAnyThread) {
  tCheck = check;
  tContext = context;
  tFromAnyThread = fromAnyThread;
}

InterruptScope::~InterruptScope() {
  tCheck = previousCheck_;
  tContext = previousContext_;
  tFromAnyThread = previousFromAnyThread_;
}

InterruptCheck currentInterruptCheck() {
  return InterruptCheck{tFromAnyThread, tContext};
}

Interrupted::Interrupted()
    : SqlError(sqlstate::kQueryCanceled, "canceling statement due to user request") {}

void throwIfInterrupted() {
  if (tCheck != nullptr && tCheck(tContext)) throw Interrupted();
}

}  // namespace rtsql
