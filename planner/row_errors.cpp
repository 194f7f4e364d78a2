// 'on.error' of a flow (see row_errors.h).
#include "planner/row_errors.h"

#include "planner/catalog.h"

namespace rtsql {

RowErrorPolicy rowErrorPolicy(const Options& flowOptions) {
  const std::string mode = flowOptions.getString(kOnErrorOption, "fail");
  if (iequals(mode, "skip")) return RowErrorPolicy::Skip;
  if (iequals(mode, "dead-letter")) return RowErrorPolicy::DeadLetter;
  return RowErrorPolicy::Fail;
}

void checkRowErrors(const SinkDef& sink, const Options& flowOptions) {
  flowOptions.getEnum(kOnErrorOption, "fail", {"fail", "skip", "dead-letter"});
  checkFlowDeadLetters(kRowErrorsDeadLetters,
                       rowErrorPolicy(flowOptions) == RowErrorPolicy::DeadLetter, sink,
                       flowOptions);
}

}  // namespace rtsql
