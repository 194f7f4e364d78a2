// The test stand-in for the operator after the one under test: it records
// every row, record context, watermark and epoch end it receives, so a test
// checks what an operator emitted and forwarded. Shared by the operator tests
// so that each of them sees the same downstream behaviour.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "executor/operators/operator.h"

namespace rtsql::testing {

class Capture final : public Operator {
 public:
  // After recording a row it scribbles over the original, as a downstream
  // operator that works in place may: an operator that reused a row it had
  // emitted would then show wrong values in its next output.
  void push(Row& row, const RecordContext& ctx) override {
    rows.push_back(row);
    contexts.push_back(ctx);
    for (auto& v : row) v = Value::string("scribbled");
  }
  void onWatermark(int64_t watermarkMicros) override { watermarks.push_back(watermarkMicros); }
  void onEpochEnd() override { ++epochs; }
  std::string name() const override { return "Capture"; }

  std::vector<Row> rows;
  std::vector<RecordContext> contexts;
  std::vector<int64_t> watermarks;
  int epochs = 0;
};

}  // namespace rtsql::testing
