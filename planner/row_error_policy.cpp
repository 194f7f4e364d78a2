#include "planner/row_error_policy.h"

#include <string>

#include "common/schema.h"

namespace rtsql {

RowErrorPolicy parseRowErrorPolicy(const Options& options, std::string_view key) {
  const std::string mode = options.getEnum(key, "fail", {"fail", "skip", "dead-letter"});
  if (iequals(mode, "skip")) return RowErrorPolicy::Skip;
  if (iequals(mode, "dead-letter")) return RowErrorPolicy::DeadLetter;
  return RowErrorPolicy::Fail;
}

}  // namespace rtsql
