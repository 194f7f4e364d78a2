// The server's log: one line on standard error per event, beginning with its
// UTC time and "rtsqld:", written whole, so that the lines of threads never
// interleave. Every part of the server and of its flows logs through it.
#pragma once

#include <string_view>

namespace rtsql {

void logLine(std::string_view message);

}  // namespace rtsql
