// Savepoints of a flow (savepoints.cpp): STOP FLOW ... WITH SAVEPOINT,
// START FLOW ... FROM SAVEPOINT, SHOW SAVEPOINTS and DROP SAVEPOINT.
#pragma once

#include "server/engine_context.h"

namespace rtsql {

class Savepoints {
 public:
  explicit Savepoints(EngineContext& ctx) : ctx_(ctx) {}

  void savepointStatement(EngineSession& s, const ast::SavepointStatement& stmt, ResultWriter& out);
  static const std::vector<ResultColumn> kSavepointColumns;

 private:
  std::string savepointDir(const std::string& flow) const;

  EngineContext& ctx_;
};

}  // namespace rtsql
