#include "planner/processor.h"

#include <fmt/format.h>

#include <functional>

#include "common/error.h"
#include "planner/planner.h"

namespace rtsql {

ProcessorDef defineProcessor(const ast::CreateProcessor& stmt) {
  if (stmt.language != "python") {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("processors in LANGUAGE {} are not supported", stmt.language),
                   stmt.languagePos, "write LANGUAGE PYTHON with the class between $$");
  }
  ProcessorDef def;
  def.name = stmt.name;
  def.returns = bindColumns(stmt.returns);
  def.bodyText = stmt.code;
  def.sql = stmt.text;
  def.python = PythonProcessor::compile(stmt.name, def.returns, stmt.code, stmt.codePos);
  return def;
}

std::vector<std::string> processorsUsed(const ast::Query& query) {
  std::vector<std::string> out;
  std::function<void(const ast::Query&)> inQuery;
  std::function<void(const ast::Expr&)> inExpr = [&](const ast::Expr& e) {
    for (const auto& a : e.args) {
      if (a) inExpr(*a);
    }
    for (const auto& [w, t] : e.whens) {
      inExpr(*w);
      inExpr(*t);
    }
    if (e.elseExpr) inExpr(*e.elseExpr);
    if (e.filter) inExpr(*e.filter);
    if (e.subquery) inQuery(*e.subquery);
  };
  std::function<void(const ast::TableRef&)> inRef = [&](const ast::TableRef& t) {
    if (t.kind == ast::TableRef::Kind::Transform) {
      const std::string name = toLower(t.processor);
      bool seen = false;
      for (const auto& n : out) seen = seen || n == name;
      if (!seen) out.push_back(name);
    }
    if (t.subquery) inQuery(*t.subquery);
    if (t.left) inRef(*t.left);
    if (t.right) inRef(*t.right);
    if (t.on) inExpr(*t.on);
  };
  inQuery = [&](const ast::Query& q) {
    for (const ast::Select& s : q.terms) {
      for (const auto& item : s.items) {
        if (item.expr) inExpr(*item.expr);
      }
      if (s.from) inRef(*s.from);
      if (s.where) inExpr(*s.where);
      if (s.having) inExpr(*s.having);
    }
  };
  inQuery(query);
  return out;
}

}  // namespace rtsql
