// The shell's variables (`-v name=value`), substituted into statements the way
// psql does it: `:name` is replaced by the value as typed, `:'name'` by the
// value as a quoted SQL string literal, `:"name"` by the value as a quoted
// identifier. Nothing is replaced inside quotes or comments, `::` (a cast) is
// left alone, and a name with no value is left as it is. Pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace rtsql::client {

using Variables = std::map<std::string, std::string>;

// True for a variable name: a letter or '_', then letters, digits or '_'.
bool isVariableName(std::string_view name);

// Parses one `-v` argument, "name=value" (the value may be empty and may hold
// '='). On failure returns false and sets `error`.
bool parseVariableAssignment(std::string_view text, std::string* name, std::string* value,
                             std::string* error);

// `text` with every variable reference outside quotes and comments replaced.
std::string substituteVariables(std::string_view text, const Variables& variables);

}  // namespace rtsql::client
