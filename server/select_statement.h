// SELECT (select_statement.cpp): a SELECT without FROM evaluated at once, a
// read of a materialized view's snapshot, a bounded query over finite
// relations, or a live query on a stream; and their columns without running.
#pragma once

#include "server/engine_context.h"

namespace rtsql {

class QueryStatements {
 public:
  explicit QueryStatements(EngineContext& ctx) : ctx_(ctx) {}

  void select(EngineSession& s, const ast::SelectStatement& stmt, ResultWriter& out);
  // The columns `select` would send (the extended protocol's Describe).
  std::vector<ResultColumn> columns(EngineSession& s, const ast::Query& q);

 private:
  static bool isConstantQuery(const ast::Query& q);
  static std::string constantColumnName(const ast::SelectItem& item);

  EngineContext& ctx_;
};

}  // namespace rtsql
