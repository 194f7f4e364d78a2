// Fuzz target: SQL text, as a client sends it, through the parser. Any text must
// either parse or fail with a SqlError; a crash, a sanitizer report or any other
// exception is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/error.h"
#include "parser/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    rtsql::parseStatements(text);
  } catch (const rtsql::SqlError&) {
  }
  return 0;
}
