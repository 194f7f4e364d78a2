#include "common/log.h"

#include <cstdio>
#include <string>

#include "common/clock.h"
#include "common/json.h"

namespace rtsql {

void logLine(std::string_view message) {
  std::string line = formatTimestamp(nowMicros(), true);
  line += " rtsqld: ";
  line += message;
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace rtsql
