// 'on.error' of a flow (see row_errors.h).
#include "planner/row_errors.h"

#include "planner/catalog.h"

namespace rtsql {

void checkRowErrors(const SinkDef& sink, const Options& flowOptions) {
  checkFlowDeadLetters(kRowErrorsDeadLetters,
                       parseRowErrorPolicy(flowOptions) == RowErrorPolicy::DeadLetter, sink,
                       flowOptions);
}

}  // namespace rtsql
