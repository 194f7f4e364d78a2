#include "common/interrupt.h"

namespace rtsql {

namespace {
thread_local InterruptScope::Check tCheck = nullptr;
thread_local const void* tContext = nullptr;
}  // namespace

InterruptScope::InterruptScope(Check check, const void* context)
    : previousCheck_(tCheck), previousContext_(tContext) {
  tCheck = check;
  tContext = context;
}

InterruptScope::~InterruptScope() {
  tCheck = previousCheck_;
  tContext = previousContext_;
}

Interrupted::Interrupted()
    : SqlError(sqlstate::kQueryCanceled, "canceling statement due to user request") {}

void throwIfInterrupted() {
  if (tCheck != nullptr && tCheck(tContext)) throw Interrupted();
}

}  // namespace rtsql
