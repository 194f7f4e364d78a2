// Scalar functions whose code lives in a later layer than common: from_avro
// and to_avro are connectors/format's (format_functions.h), which adds them to
// the function table once, as the process starts, before any statement is
// bound (the table is read without a lock). Each is then called by name as a
// built-in function is: its builder runs at bind time with the call's
// arguments and position.
#pragma once

#include <string>
#include <vector>

#include "common/expr.h"

namespace rtsql {

using FunctionBuilder = ExprPtr (*)(const std::string& name, std::vector<ExprPtr>& args,
                                    size_t pos);
void addLayerFunction(const std::string& name, int minArgs, int maxArgs, FunctionBuilder build);

}  // namespace rtsql
