// 'on.error': what a source does with a record it cannot decode, and what a
// flow does with a row whose evaluation fails ('fail', the default; 'skip';
// 'dead-letter'). Both options take the same three values, parsed here once
// into RowErrorPolicy; the code that acts on them reads the enum, never the
// option's text (a source's in SourceOptions, a flow's in PhysicalPlan).
#pragma once

#include <string_view>

#include "common/options.h"

namespace rtsql {

inline constexpr const char* kOnErrorOption = "on.error";

enum class RowErrorPolicy { Fail, Skip, DeadLetter };

// The policy option `key` of `options` names ('fail' when it is not set).
// SqlError 22023 at the value when it is none of the three, listing them.
RowErrorPolicy parseRowErrorPolicy(const Options& options, std::string_view key = kOnErrorOption);

}  // namespace rtsql
