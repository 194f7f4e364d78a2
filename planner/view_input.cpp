// A materialized view as the input of a flow (view_input.h).
#include "planner/view_input.h"

#include <fmt/format.h>

#include "common/error.h"
#include "parser/parser.h"

namespace rtsql {

std::shared_ptr<const SourceDef> viewInputSource(const FlowDef& view, const PlanContext& ctx) {
  std::vector<ast::StatementPtr> stmts = parseStatements(view.sql);
  if (stmts.size() != 1 || stmts.front()->kind != ast::StatementKind::CreateFlow) {
    throw InternalError(fmt::format("materialized view \"{}\" has no CREATE statement", view.name));
  }
  // The view's plan says its columns and key, as its runtime has them.
  PhysicalPlan plan = planFlow(static_cast<const ast::CreateFlow&>(*stmts.front()), ctx);
  auto def = std::make_shared<SourceDef>();
  def->name = view.name;
  def->connector = kViewChangelogConnector;
  def->format = kViewChangelogFormat;
  def->schema = plan.sink.input;
  std::string key;
  for (int k : plan.sink.keyColumns) key += (key.empty() ? "" : ",") + std::to_string(k);
  def->options.set(kViewKeyOption, key.empty() ? "-" : key);
  return def;
}

std::optional<std::vector<int>> viewInputKey(const ScanSpec& scan) {
  if (scan.connector != kViewChangelogConnector || !scan.options.has(kViewKeyOption)) {
    return std::nullopt;
  }
  std::vector<int> key;
  const std::string text = scan.options.getString(kViewKeyOption);
  if (text == "-") return key;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    key.push_back(std::stoi(text.substr(start, comma - start)));
    start = comma + 1;
  }
  return key;
}

}  // namespace rtsql
