// The Project a stateful operator reads from (see pre_projection.h).
#include "planner/pre_projection.h"

namespace rtsql::planner_detail {

int PreProjection::find(const ExprPtr& e) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].expr == e) return static_cast<int>(i);
  }
  return -1;
}

int PreProjection::add(const ExprPtr& e, const ast::Expr& written) {
  std::string name = written.kind == ast::ExprKind::Column && !written.parts.empty()
                         ? written.parts.back()
                         : e->toString();
  columns.push_back(OutputColumn{std::move(name), e, written.pos});
  return static_cast<int>(columns.size() - 1);
}

int PreProjection::findOrAdd(const ExprPtr& e, const ast::Expr& written) {
  const int i = find(e);
  return i >= 0 ? i : add(e, written);
}

const NodePtr& PreProjection::project(NodePtr input) {
  node_ = projectNode(std::move(input), columns);
  return node_;
}

ExprPtr PreProjection::ref(int i) const {
  const Column& c = node_->schema.columns[static_cast<size_t>(i)];
  return makeColumnRef(i, c.type, c.name);
}

std::vector<ExprPtr> PreProjection::refs(const std::vector<int>& columns) const {
  std::vector<ExprPtr> out;
  out.reserve(columns.size());
  for (int i : columns) out.push_back(ref(i));
  return out;
}

}  // namespace rtsql::planner_detail
