#include "parser/comma_joins.h"

#include <set>
#include <string>

#include "common/schema.h"
#include "parser/expr_walker.h"

namespace rtsql::ast {
namespace {

using Names = std::set<std::string>;

// The names a relation's columns are qualified by: its alias, or its name's
// last part (pg_catalog.pg_class is pg_class); every one of a join's.
void exposedNames(const TableRef& ref, Names& out) {
  switch (ref.kind) {
    case TableRef::Kind::Named: {
      if (!ref.alias.empty()) {
        out.insert(toLower(ref.alias));
      } else {
        const size_t dot = ref.name.rfind('.');
        out.insert(toLower(dot == std::string::npos ? ref.name : ref.name.substr(dot + 1)));
      }
      break;
    }
    case TableRef::Kind::Subquery:
    case TableRef::Kind::Transform:
      if (!ref.alias.empty()) out.insert(toLower(ref.alias));
      break;
    case TableRef::Kind::Join:
      if (ref.left) exposedNames(*ref.left, out);
      if (ref.right) exposedNames(*ref.right, out);
      break;
  }
}

bool hasSubqueryIn(const Expr& e) {
  bool found = false;
  enumerateAll(e, [&](const Expr& n) { found = found || n.subquery != nullptr; });
  return found;
}

struct Conjunct {
  ExprPtr expr;
  Names names;           // the relations it names
  bool unknown = false;  // a column without its relation's name
  bool equality = false; // a = b between two relations
};

void split(ExprPtr e, std::vector<Conjunct>& out) {
  if (e->kind == ExprKind::Binary && e->op == "AND" && e->args.size() == 2) {
    split(std::move(e->args[0]), out);
    split(std::move(e->args[1]), out);
    return;
  }
  Conjunct c;
  enumerate(*e, [&](const Expr& n) {
    if (n.kind != ExprKind::Column) return;
    if (n.parts.size() < 2) {
      c.unknown = true;
    } else {
      c.names.insert(toLower(n.parts[n.parts.size() - 2]));
    }
  });
  c.equality = e->kind == ExprKind::Binary && e->op == "=" && c.names.size() >= 2;
  c.expr = std::move(e);
  out.push_back(std::move(c));
}

bool within(const Names& names, const Names& of) {
  for (const std::string& n : names)
    if (!of.count(n)) return false;
  return true;
}

void addTo(ExprPtr& to, ExprPtr more) {
  if (!to) {
    to = std::move(more);
    return;
  }
  auto e = std::make_unique<Expr>();
  e->kind = ExprKind::Binary;
  e->op = "AND";
  e->pos = to->pos;
  e->endPos = more->endPos;
  e->args.push_back(std::move(to));
  e->args.push_back(std::move(more));
  to = std::move(e);
}

}  // namespace

TableRefPtr joinCommaRelations(std::vector<TableRefPtr> relations, ExprPtr& where,
                               bool keepOrder) {
  std::vector<Conjunct> conjuncts;
  ExprPtr stays;
  if (where && relations.size() > 1) {
    std::vector<Conjunct> all;
    split(std::move(where), all);
    for (Conjunct& c : all) {
      if (hasSubqueryIn(*c.expr)) {
        addTo(stays, std::move(c.expr));
      } else {
        conjuncts.push_back(std::move(c));
      }
    }
    where = std::move(stays);
  }
  std::vector<Names> names(relations.size());
  for (size_t i = 0; i < relations.size(); ++i) exposedNames(*relations[i], names[i]);

  TableRefPtr from = std::move(relations[0]);
  Names joined = names[0];
  std::vector<bool> taken(relations.size(), false);
  taken[0] = true;
  for (size_t step = 1; step < relations.size(); ++step) {
    // The first relation not yet joined that an equality ties to those joined.
    size_t next = 0;
    for (size_t i = 1; i < relations.size() && !keepOrder && next == 0; ++i) {
      if (taken[i]) continue;
      Names with = joined;
      with.insert(names[i].begin(), names[i].end());
      for (const Conjunct& c : conjuncts) {
        if (c.expr && c.equality && !c.unknown && within(c.names, with) &&
            !within(c.names, joined) && !within(c.names, names[i])) {
          next = i;
          break;
        }
      }
    }
    if (next == 0) {
      for (size_t i = 1; i < relations.size() && next == 0; ++i)
        if (!taken[i]) next = i;
    }
    taken[next] = true;
    joined.insert(names[next].begin(), names[next].end());
    const bool last = step + 1 == relations.size();
    auto join = std::make_unique<TableRef>();
    join->kind = TableRef::Kind::Join;
    join->joinType = JoinType::Cross;
    join->pos = relations[next]->pos;
    join->left = std::move(from);
    join->right = std::move(relations[next]);
    for (Conjunct& c : conjuncts) {
      if (c.expr && (last || (!c.unknown && within(c.names, joined))))
        addTo(join->on, std::move(c.expr));
    }
    if (join->on) join->joinType = JoinType::Inner;
    from = std::move(join);
  }
  return from;
}

}  // namespace rtsql::ast
