#include "server/views/view_remote.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string_view>

#include "common/error.h"
#include "common/expr.h"
#include "common/function_determinism.h"
#include "common/options.h"
#include "parser/expr_walker.h"
#include "server/pg_values.h"

namespace rtsql {

namespace {

std::string quotedName(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    out.push_back(c);
    if (c == '"') out.push_back('"');
  }
  return out + "\"";
}

// Where a reference to the view is in the query: the SELECT whose FROM
// holds it, and whether that SELECT's WHERE filters its rows before
// anything else does (only inner joins and the kept side of outer joins
// between them).
struct Found {
  const ast::TableRef* ref = nullptr;
  const ast::Select* term = nullptr;
  bool filterable = false;
};

void findIn(const ast::Query& q, const std::string& view, std::vector<Found>& out);

void findInFrom(const ast::TableRef& t, const ast::Select& term, bool direct,
                const std::string& view, std::vector<Found>& out) {
  switch (t.kind) {
    case ast::TableRef::Kind::Named:
      if (!t.on && !t.offsetRange && iequals(t.name, view)) out.push_back({&t, &term, direct});
      return;
    case ast::TableRef::Kind::Subquery:
      if (t.subquery) findIn(*t.subquery, view, out);
      return;
    case ast::TableRef::Kind::Join: {
      const ast::JoinType j = t.joinType;
      const bool inner = j == ast::JoinType::Inner || j == ast::JoinType::Cross;
      if (t.left) findInFrom(*t.left, term, direct && (inner || j == ast::JoinType::Left), view, out);
      if (t.right)
        findInFrom(*t.right, term, direct && (inner || j == ast::JoinType::Right), view, out);
      return;
    }
    case ast::TableRef::Kind::Transform:
      if (t.left) findInFrom(*t.left, term, false, view, out);
      return;
  }
}

void findIn(const ast::Query& q, const std::string& view, std::vector<Found>& out) {
  for (const ast::Select& term : q.terms) {
    if (term.from) findInFrom(*term.from, term, true, view, out);
  }
}

void conjuncts(const ast::Expr& e, std::vector<const ast::Expr*>& out) {
  if (e.kind == ast::ExprKind::Binary && iequals(e.op, "AND") && e.args.size() == 2) {
    conjuncts(*e.args[0], out);
    conjuncts(*e.args[1], out);
    return;
  }
  out.push_back(&e);
}

// Whether conjunct `e` of the WHERE of `f.term` reads only the view, as the
// holder would read it in `SELECT ... FROM v AS <qualifier> WHERE e`.
bool readsOnlyView(const ast::Expr& e, const Found& f, const std::string& qualifier,
                   const Schema& schema) {
  const bool alone = f.term->from.get() == f.ref;
  const ast::Expr* other = ast::findNode(e, [&](const ast::Expr& n) {
    if (n.subquery || n.over) return true;
    if (n.kind == ast::ExprKind::Star) return true;
    // A function whose value is not the same at each call, or not the same
    // on the holder as here, keeps the filter here.
    if (n.kind == ast::ExprKind::Call) return !isDeterministicFunction(n.name);
    if (n.kind != ast::ExprKind::Column) return false;
    if (n.parts.size() == 1) return !alone || schema.find(n.parts[0]) < 0;
    if (n.parts.size() == 2) return !iequals(n.parts[0], qualifier) || schema.find(n.parts[1]) < 0;
    return true;
  });
  return other == nullptr;
}

// Collects what a read of the view returns, row by row, as rows of the
// view's schema.
class RowCollector final : public ResultWriter {
 public:
  RowCollector(const RemoteViewScan& scan, const Schema& schema, const ForwardedRead& read,
               ResultWriter& out)
      : scan_(scan), schema_(schema), read_(read), out_(out) {}

  void columns(const std::vector<ResultColumn>& cols) override {
    if (cols.size() != scan_.columns.size()) {
      mismatch(fmt::format("it returned {} columns where {} were asked for", cols.size(),
                           scan_.columns.size()));
    }
  }
  void row(const std::vector<std::optional<std::string>>& values) override {
    Row row(schema_.size());
    for (size_t i = 0; i < values.size() && i < scan_.columns.size(); ++i) {
      if (!values[i]) continue;
      const Column& c = schema_.columns[static_cast<size_t>(scan_.columns[i])];
      std::optional<Value> v = valueOfPgText(*values[i], *c.type);
      if (!v) mismatch(fmt::format("column \"{}\" is not a {}", c.name, c.type->toString()));
      row[static_cast<size_t>(scan_.columns[i])] = std::move(*v);
    }
    rows_->push_back(std::move(row));
  }
  void complete(const std::string&) override {}
  void error(const SqlError& err) override { throw err; }
  void notice(const std::string& message) override { out_.notice(message); }
  bool cancelled() const override { return out_.cancelled(); }
  bool cancelledFromAnyThread() const override { return out_.cancelledFromAnyThread(); }

  std::shared_ptr<std::vector<Row>> rows() { return rows_; }

 private:
  // The holder's view is not the one planned here (a replace not yet seen
  // on one of the two nodes).
  [[noreturn]] void mismatch(const std::string& why) const {
    throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                   fmt::format("materialized view \"{}\" on node \"{}\" does not have the columns "
                               "it has here: {}",
                               read_.view, read_.holder, why),
                   read_.pos, "try again: the nodes see the view's new definition within seconds");
  }

  const RemoteViewScan& scan_;
  const Schema& schema_;
  const ForwardedRead& read_;
  ResultWriter& out_;
  std::shared_ptr<std::vector<Row>> rows_ = std::make_shared<std::vector<Row>>();
};

}  // namespace

RemoteViewScan remoteViewScan(const ast::Query& query, const std::string& text, size_t textPos,
                              const std::string& view, const Schema& schema) {
  RemoteViewScan scan;
  // Every reference to the view, at any depth (subqueries in expressions
  // included), and the qualifiers they go by.
  std::vector<const ast::TableRef*> refs;
  std::set<int> used;
  bool every = false;
  auto onTable = [&](const ast::TableRef& t) {
    if (t.kind == ast::TableRef::Kind::Named && !t.on && iequals(t.name, view))
      refs.push_back(&t);
  };
  std::vector<const ast::Expr*> stars;
  ast::enumerate(
      query,
      [&](const ast::Expr& e) {
        if (e.kind == ast::ExprKind::Star) stars.push_back(&e);
        if (e.kind != ast::ExprKind::Column) return;
        // Any part that names a column of the view may be it: more than the
        // query reads, never less.
        for (const std::string& part : e.parts) {
          if (const int i = schema.find(part); i >= 0) used.insert(i);
        }
      },
      onTable);
  if (refs.empty()) {
    throw InternalError(fmt::format("remote view scan: the query does not name \"{}\"", view));
  }
  scan.pos = refs.front()->pos;
  for (const ast::Expr* star : stars) {
    if (star->parts.empty()) every = true;
    for (const ast::TableRef* r : refs) {
      if (!star->parts.empty() && iequals(star->parts.back(), r->alias.empty() ? r->name : r->alias))
        every = true;
    }
  }
  for (size_t i = 0; i < schema.size(); ++i) {
    if (schema.columns[i].hidden) continue;
    if (every || used.count(static_cast<int>(i))) scan.columns.push_back(static_cast<int>(i));
  }
  // A read of no column (count(*) of a join): the first, for the rows' count.
  if (scan.columns.empty()) {
    for (size_t i = 0; i < schema.size() && scan.columns.empty(); ++i) {
      if (!schema.columns[i].hidden) scan.columns.push_back(static_cast<int>(i));
    }
  }
  for (int i : scan.columns) {
    const Column& c = schema.columns[static_cast<size_t>(i)];
    if (!pgTextReadable(*c.type)) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     fmt::format("column \"{}\" ({}) of materialized view \"{}\", which another "
                                 "node holds, cannot be read into a query run on this node",
                                 c.name, c.type->toString(), view),
                     scan.pos,
                     "leave the column out of the query, read the query on the view's node, or "
                     "keep the views it joins on one node");
    }
  }

  // The qualifier the query's filters use: its alias, or its name.
  const ast::TableRef& first = *refs.front();
  const std::string qualifier = first.alias.empty() ? first.name : first.alias;
  std::vector<std::string> filters;
  std::vector<Found> found;
  findIn(query, view, found);
  if (refs.size() == 1 && found.size() == 1 && found[0].filterable &&
      found[0].term->where) {
    std::vector<const ast::Expr*> terms;
    conjuncts(*found[0].term->where, terms);
    for (const ast::Expr* c : terms) {
      if (c->endPos <= c->pos || c->pos < textPos || c->endPos - textPos > text.size()) continue;
      if (!readsOnlyView(*c, found[0], qualifier, schema)) continue;
      filters.push_back(text.substr(c->pos - textPos, c->endPos - c->pos));
    }
  }
  scan.filters = filters.size();

  std::string cols;
  for (int i : scan.columns) {
    if (!cols.empty()) cols += ", ";
    cols += quotedName(schema.columns[static_cast<size_t>(i)].name);
  }
  scan.text = fmt::format("SELECT {} FROM {} AS {}", cols, quotedName(view), quotedName(qualifier));
  for (size_t i = 0; i < filters.size(); ++i) {
    // Each on lines of its own: a comment at a filter's end ends there.
    scan.text += fmt::format("{}(\n{}\n)", i == 0 ? " WHERE " : " AND ", filters[i]);
  }
  return scan;
}

std::shared_ptr<const BoundedRelation> readRemoteView(ForwardedRead read,
                                                      const RemoteViewScan& scan,
                                                      const Schema& schema, ResultWriter& out,
                                                      std::optional<uint64_t>& epoch) {
  // The session's settings go with the read as they are (its time zone
  // too: the holder evaluates the filters in it, and writes each timestamp
  // with its offset, which valueOfPgText() reads back as the instant).
  const ForwardedRead sent{read.route, read.holder, read.view, read.user,     read.database,
                           read.settings, scan.text, scan.pos, false};
  RowCollector rows(scan, schema, sent, out);
  epoch = forwardViewRead(sent, rows);
  return std::make_shared<RowsRelation>(schema, rows.rows());
}

}  // namespace rtsql
