#include "planner/processor.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "parser/expr_walker.h"
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
  ast::enumerate(
      query, [](const ast::Expr&) {},
      [&](const ast::TableRef& t) {
        if (t.kind != ast::TableRef::Kind::Transform) return;
        const std::string name = toLower(t.processor);
        if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
      });
  return out;
}

}  // namespace rtsql
