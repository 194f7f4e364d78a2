// What is wrong with an rtsqld --config file, said the way a person fixes it.
//
// The option parser reads `name = value` lines (a long option's name without
// its dashes; a name alone turns a flag on; `#` and `;` start comments) and,
// when a line is not one it takes, says only "INI was not able to parse
// NAME". describeConfigProblem() reads the file again and names the line,
// what is wrong with it, and the option that was probably meant.
#pragma once

#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace rtsql {

// The first line of `in` that names no option in `known` (or names one of
// `commandLineOnly`), as "line N: ..." with a hint; nullopt when every line
// names a known option.
std::optional<std::string> describeConfigProblem(std::istream& in,
                                                 const std::vector<std::string>& known,
                                                 const std::vector<std::string>& commandLineOnly);

// The name of `known` closest to `name` when it is close enough to be a
// misspelling of it (an edit or two, or '_' for '-'), else empty.
std::string closestOptionName(const std::string& name, const std::vector<std::string>& known);

}  // namespace rtsql
