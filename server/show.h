// SHOW, DESCRIBE and EXPLAIN (show.cpp); SHOW CREATE is show_create.h's.
#pragma once

#include "server/engine_context.h"

namespace rtsql {

class FlowReplace;

class ShowStatements {
 public:
  ShowStatements(EngineContext& ctx, FlowReplace& replace) : ctx_(ctx), replace_(replace) {}

  void show(EngineSession& s, const ast::Show& stmt, ResultWriter& out);
  void describe(const EngineSession& s, const ast::Describe& stmt, ResultWriter& out);
  void explain(EngineSession& s, const ast::Explain& stmt, ResultWriter& out);
  static std::vector<ResultColumn> showColumns(const ast::Show& stmt);
  static const std::vector<ResultColumn> kDescribeColumns;
  static const std::vector<ResultColumn> kExplainColumns;

 private:
  void describeFunction(const EngineSession& s, const ast::Describe& stmt, ResultWriter& out);

  EngineContext& ctx_;
  FlowReplace& replace_;
};

}  // namespace rtsql
