// The SqlError a call throws, for unit tests of every layer that check an
// error's SQLSTATE, position and hint. Header-only over common/error.h, so
// each layer's test binary still links only its own layer.
#pragma once

#include <doctest/doctest.h>

#include "common/error.h"

namespace rtsql::testing {

// Runs `f` and returns the SqlError it throws; fails the test when it throws
// none.
template <typename F>
SqlError sqlErrorOf(F&& f) {
  try {
    f();
  } catch (const SqlError& e) {
    return e;
  }
  FAIL("expected a SqlError");
  return SqlError("", "");
}

}  // namespace rtsql::testing
