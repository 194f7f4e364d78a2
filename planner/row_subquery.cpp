// Subqueries in a bounded query's select list, evaluated row by row (see
// row_subquery.h). Binding compiles the subquery into a small tree of FROM
// items over one growing row: the enclosing query's columns first, then each
// FROM item's columns as the nested loops reach it. Names resolve from the
// innermost query outwards, as in PostgreSQL: a subquery's own `oid` hides
// the enclosing query's, which stays reachable by its qualifier.
#include "planner/row_subquery.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/error.h"
#include "common/schema.h"
#include "planner/bounded_relation.h"
#include "planner/logical_plan.h"
#include "planner/catalog.h"

namespace rtsql::planner_detail {

namespace {

// ------------------------------------------------------------------ compiled form

struct CompiledQuery;

// One FROM item: what it appends to the row, for each of its rows.
struct FromNode {
  enum class Kind { Rows, Function, Join, Derived } kind = Kind::Rows;
  size_t width = 0;                              // the columns it appends
  std::shared_ptr<const std::vector<Row>> rows;  // Rows
  std::string function;                          // Function: unnest or generate_series
  std::vector<ExprPtr> args;                     // Function, over the row so far
  std::unique_ptr<FromNode> left, right;         // Join
  bool leftJoin = false;                         // Join: LEFT (else inner or cross)
  ExprPtr on;                                    // Join, may be null
  std::shared_ptr<const CompiledQuery> derived;  // Derived: a subquery in FROM
};

struct SubAggregate {
  std::string function;  // count, collect_list, string_agg, min, max
  ExprPtr arg;           // null for count(*)
  std::string separator;
};

struct SubSortKey {
  int item = -1;  // a result column, or
  ExprPtr expr;   // an expression over the row
  bool descending = false;
  bool nullsFirst = false;
};

struct CompiledQuery {
  std::unique_ptr<FromNode> from;  // null: one row of no columns
  ExprPtr where;
  std::vector<ExprPtr> items;
  std::vector<std::string> names;
  bool aggregated = false;
  std::vector<SubAggregate> aggregates;  // aggregated: one per item
  std::vector<DataTypePtr> types;        // each result column's
  std::vector<SubSortKey> order;
  std::optional<int64_t> limit, offset;
};

// ------------------------------------------------------------------ evaluation

class Budget {
 public:
  void spend() {
    if (++spent_ > kMaxSubqueryRows) {
      throw SqlError(sqlstate::kProgramLimitExceeded,
                     fmt::format("a subquery in the select list reads more than {} rows for one "
                                 "row of its query",
                                 kMaxSubqueryRows))
          .withHint("join the relation in FROM, or filter it further");
    }
  }

 private:
  int64_t spent_ = 0;
};

// The budget of the outermost subquery being evaluated on this thread: a
// subquery nested in another spends its enclosing one's, so that the bound
// holds for the whole evaluation of one outer row.
thread_local Budget* tlsBudget = nullptr;

class BudgetScope {
 public:
  explicit BudgetScope(Budget& own) : previous_(tlsBudget) {
    if (!tlsBudget) tlsBudget = &own;
  }
  ~BudgetScope() { tlsBudget = previous_; }
  BudgetScope(const BudgetScope&) = delete;
  BudgetScope& operator=(const BudgetScope&) = delete;
  Budget& budget() const { return *tlsBudget; }

 private:
  Budget* previous_;
};

bool isTrue(const Value& v) { return v.type() == TypeId::Boolean && v.asBool(); }

std::vector<Row> run(const CompiledQuery& q, Row& row, Budget& budget);

using RowFn = std::function<void(Row&)>;

void appendNulls(Row& row, size_t n) { row.resize(row.size() + n); }

void visit(const FromNode& f, Row& row, Budget& budget, const RowFn& fn) {
  const size_t at = row.size();
  switch (f.kind) {
    case FromNode::Kind::Rows:
      for (const Row& r : *f.rows) {
        budget.spend();
        row.insert(row.end(), r.begin(), r.end());
        row.resize(at + f.width);
        fn(row);
        row.resize(at);
      }
      return;
    case FromNode::Kind::Function: {
      std::vector<Value> args;
      for (const ExprPtr& a : f.args) args.push_back(a->eval(row));
      auto emit = [&](Value v) {
        budget.spend();
        row.push_back(std::move(v));
        fn(row);
        row.resize(at);
      };
      if (f.function == "unnest") {
        if (args[0].isNull()) return;
        for (const Value& v : args[0].asList()) emit(v);
        return;
      }
      if (f.function == "pg_options_to_table") {
        if (args[0].isNull()) return;
        for (const Value& v : args[0].asList()) {
          budget.spend();
          const std::string option = v.isNull() ? std::string() : v.asString();
          const size_t eq = option.find('=');
          row.push_back(Value::string(option.substr(0, eq)));
          row.push_back(eq == std::string::npos ? Value() : Value::string(option.substr(eq + 1)));
          fn(row);
          row.resize(at);
        }
        return;
      }
      // generate_series(start, stop[, step])
      for (const Value& a : args) {
        if (a.isNull()) return;
      }
      const int64_t start = args[0].asInt();
      const int64_t stop = args[1].asInt();
      const int64_t step = args.size() > 2 ? args[2].asInt() : 1;
      if (step == 0) {
        throw SqlError(sqlstate::kInvalidParameterValue, "step size cannot equal zero");
      }
      const bool wide = f.args[0]->type()->id == TypeId::BigInt ||
                        f.args[1]->type()->id == TypeId::BigInt ||
                        (f.args.size() > 2 && f.args[2]->type()->id == TypeId::BigInt);
      for (int64_t v = start; step > 0 ? v <= stop : v >= stop;) {
        emit(wide ? Value::bigint(v) : Value::integer(static_cast<int32_t>(v)));
        if (__builtin_add_overflow(v, step, &v)) break;
      }
      return;
    }
    case FromNode::Kind::Join:
      visit(*f.left, row, budget, [&](Row& withLeft) {
        bool matched = false;
        visit(*f.right, withLeft, budget, [&](Row& both) {
          if (f.on && !isTrue(f.on->eval(both))) return;
          matched = true;
          fn(both);
        });
        if (f.leftJoin && !matched) {
          const size_t leftEnd = withLeft.size();
          appendNulls(withLeft, f.right->width);
          fn(withLeft);
          withLeft.resize(leftEnd);
        }
      });
      return;
    case FromNode::Kind::Derived:
      for (Row& r : run(*f.derived, row, budget)) {
        row.insert(row.end(), std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
        fn(row);
        row.resize(at);
      }
      return;
  }
}

// NULL where the key says (by default PostgreSQL's order: NULL after every
// value ascending, before them descending).
int compareForSort(const Value& x, const Value& y, const SubSortKey& key) {
  if (x.isNull() || y.isNull()) {
    if (x.isNull() == y.isNull()) return 0;
    return x.isNull() == key.nullsFirst ? -1 : 1;
  }
  const int c = x.compare(y);
  return key.descending ? -c : c;
}

Row finishAggregates(const CompiledQuery& q, const std::vector<std::vector<Value>>& seen,
                     const std::vector<int64_t>& counts) {
  Row out;
  for (size_t i = 0; i < q.aggregates.size(); ++i) {
    const SubAggregate& a = q.aggregates[i];
    const std::vector<Value>& values = seen[i];
    if (a.function == "count") {
      out.push_back(Value::bigint(counts[i]));
    } else if (a.function == "collect_list") {
      out.push_back(Value::array(ValueList(values.begin(), values.end())));
    } else if (a.function == "string_agg") {
      if (values.empty()) {
        out.emplace_back();
        continue;
      }
      std::string text;
      for (size_t k = 0; k < values.size(); ++k) {
        if (k > 0) text += a.separator;
        text += values[k].asString();
      }
      out.push_back(Value::string(std::move(text)));
    } else {  // min, max
      Value best;
      for (const Value& v : values) {
        if (best.isNull() || (a.function == "min" ? v.compare(best) < 0 : v.compare(best) > 0)) {
          best = v;
        }
      }
      out.push_back(std::move(best));
    }
  }
  return out;
}

// The subquery's result rows for the row so far (`row`, given back as it was).
std::vector<Row> run(const CompiledQuery& q, Row& row, Budget& budget) {
  const size_t base = row.size();
  std::vector<std::pair<std::vector<Value>, Row>> out;
  std::vector<std::vector<Value>> seen(q.aggregates.size());
  std::vector<int64_t> counts(q.aggregates.size(), 0);
  auto take = [&](Row& r) {
    if (q.where && !isTrue(q.where->eval(r))) return;
    if (q.aggregated) {
      for (size_t i = 0; i < q.aggregates.size(); ++i) {
        const SubAggregate& a = q.aggregates[i];
        if (!a.arg) {
          ++counts[i];
          continue;
        }
        Value v = a.arg->eval(r);
        if (v.isNull()) continue;
        ++counts[i];
        if (a.function != "count") seen[i].push_back(std::move(v));
      }
      return;
    }
    Row items;
    items.reserve(q.items.size());
    for (const ExprPtr& e : q.items) items.push_back(e->eval(r));
    std::vector<Value> keys;
    for (const SubSortKey& k : q.order) {
      keys.push_back(k.expr ? k.expr->eval(r) : items[static_cast<size_t>(k.item)]);
    }
    out.emplace_back(std::move(keys), std::move(items));
  };
  if (q.from) {
    visit(*q.from, row, budget, take);
  } else {
    take(row);
  }
  row.resize(base);
  if (q.aggregated) return {finishAggregates(q, seen, counts)};
  if (!q.order.empty()) {
    std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
      for (size_t k = 0; k < q.order.size(); ++k) {
        const int c = compareForSort(a.first[k], b.first[k], q.order[k]);
        if (c != 0) return c < 0;
      }
      return false;
    });
  }
  const size_t begin =
      std::min(out.size(), static_cast<size_t>(std::max<int64_t>(q.offset.value_or(0), 0)));
  size_t end = out.size();
  if (q.limit) end = std::min(end, begin + static_cast<size_t>(std::max<int64_t>(*q.limit, 0)));
  std::vector<Row> rows;
  rows.reserve(end - begin);
  for (size_t i = begin; i < end; ++i) rows.push_back(std::move(out[i].second));
  return rows;
}

// A subquery's value in an expression. At the top (`outer` set) it reads the
// enclosing query's row through the expressions of the columns it names and
// starts its own row from them; nested in another subquery it continues that
// subquery's row.
class RowSubqueryExpr final : public Expr {
 public:
  RowSubqueryExpr(DataTypePtr type, std::shared_ptr<const CompiledQuery> query, bool top,
                  std::vector<ExprPtr> outer, std::vector<size_t> outerAt, size_t outerWidth,
                  std::string text)
      : Expr(std::move(type)),
        query_(std::move(query)),
        top_(top),
        outer_(std::move(outer)),
        outerAt_(std::move(outerAt)),
        outerWidth_(outerWidth),
        text_(std::move(text)) {}

  Value eval(const Row& row) const override {
    Budget fresh;
    const BudgetScope scope(fresh);
    Row own;
    if (top_) {
      own.resize(outerWidth_);
      for (size_t i = 0; i < outer_.size(); ++i) own[outerAt_[i]] = outer_[i]->eval(row);
    } else {
      own = row;
    }
    std::vector<Row> rows = run(*query_, own, scope.budget());
    if (rows.empty()) return Value();
    if (rows.size() > 1) {
      throw SqlError(sqlstate::kCardinalityViolation,
                     "more than one row returned by a subquery used as an expression")
          .withHint("add a condition or LIMIT 1 so that the subquery returns one row");
    }
    return std::move(rows[0][0]);
  }
  std::string toString() const override { return text_; }
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    for (const ExprPtr& e : outer_) fn(*e);
  }
  ExprPtr withChildren(std::vector<ExprPtr> children) const override {
    return std::make_shared<RowSubqueryExpr>(type(), query_, top_, std::move(children), outerAt_,
                                             outerWidth_, text_);
  }

 private:
  std::shared_ptr<const CompiledQuery> query_;
  bool top_;
  std::vector<ExprPtr> outer_;   // the enclosing query's columns the subquery names
  std::vector<size_t> outerAt_;  // where each goes in the subquery's row
  size_t outerWidth_;
  std::string text_;
};

// ------------------------------------------------------------------ binding

// The names one query can see: its own FROM items' columns, each an
// expression on the row at its position, then the enclosing queries'.
struct Level {
  Scope scope;
  const Level* parent = nullptr;
  size_t width = 0;  // the row's length once this query's FROM items are in it
};

class SubqueryCompiler {
 public:
  SubqueryCompiler(const PlanContext& ctx, const UserFunctions& functions, size_t outerColumns)
      : ctx_(ctx), functions_(functions), used_(outerColumns, false) {}

  const std::vector<bool>& outerUsed() const { return used_; }

  std::shared_ptr<const CompiledQuery> compile(const ast::Query& q, const Level* parent,
                                               size_t pos) {
    if (++depth_ > 16) {
      throw SqlError(sqlstate::kProgramLimitExceeded, "subqueries are nested too deeply", pos);
    }
    if (q.terms.size() != 1) {
      refuse("UNION in a subquery of the select list", q.pos);
    }
    const ast::Select& s = q.terms[0];
    if (s.distinct || !s.distinctOn.empty()) {
      refuse("DISTINCT in a subquery of the select list", s.pos);
    }
    if (!s.groupBy.empty() || s.having) {
      refuse("GROUP BY or HAVING in a subquery of the select list", s.pos);
    }
    auto out = std::make_shared<CompiledQuery>();
    Level level;
    level.parent = parent;
    level.width = parent ? parent->width : 0;
    if (s.from) out->from = bindFrom(*s.from, level);
    if (s.where) out->where = bindAt(*s.where, level, ExprContext::Where);
    bindItems(s, level, *out);
    bindOrder(q, level, *out);
    out->limit = q.limit;
    out->offset = q.offset;
    --depth_;
    return out;
  }

  // A subquery nested in another one's expressions.
  ExprPtr nested(const ast::Expr& e, const Level& level) {
    if (!e.subquery) throw InternalError("a subquery expression without its query");
    std::shared_ptr<const CompiledQuery> q = compile(*e.subquery, &level, e.pos);
    return std::make_shared<RowSubqueryExpr>(scalarType(*q, e), q, false, std::vector<ExprPtr>{},
                                             std::vector<size_t>{}, 0, "(subquery)");
  }

  DataTypePtr scalarType(const CompiledQuery& q, const ast::Expr& e) const {
    if (q.types.size() != 1) {
      throw SqlError(sqlstate::kSyntaxError, "subquery must return only one column", e.pos);
    }
    return q.types[0];
  }

 private:
  [[noreturn]] static void refuse(const std::string& what, size_t pos) {
    throw SqlError(sqlstate::kFeatureNotSupported, what + " is not supported yet", pos)
        .withHint("join the subquery's result in FROM: FROM a JOIN (SELECT ...) AS s ON ...");
  }

  // Whether `scope` has the column `col` names (as ExprBinder resolves it).
  static std::vector<size_t> namedIn(const Scope& scope, const ast::Expr& col) {
    const auto& parts = col.parts;
    std::vector<size_t> found;
    // pg_catalog.pg_attribute.attnum: a relation's column with its schema
    // first, as ExprBinder reads it (binder.cpp).
    const bool schemaFirst = parts.size() >= 3 && (iequals(parts[0], "pg_catalog") ||
                                                   iequals(parts[0], "information_schema") ||
                                                   iequals(parts[0], "public"));
    if (schemaFirst && !scope.hasQualifier(parts[0]) && scope.hasQualifier(parts[1])) {
      for (size_t i = 0; i < scope.columns.size(); ++i) {
        const ScopeColumn& c = scope.columns[i];
        if (iequals(c.qualifier, parts[1]) && iequals(c.name, parts[2])) found.push_back(i);
      }
      if (!found.empty()) return found;
    }
    if (parts.size() >= 2 && scope.hasQualifier(parts[0])) {
      for (size_t i = 0; i < scope.columns.size(); ++i) {
        const ScopeColumn& c = scope.columns[i];
        if (iequals(c.qualifier, parts[0]) && iequals(c.name, parts[1])) found.push_back(i);
      }
      if (!found.empty()) return found;
    }
    for (size_t i = 0; i < scope.columns.size(); ++i) {
      if (iequals(scope.columns[i].name, parts[0])) found.push_back(i);
    }
    return found;
  }

  ExprPtr bindAt(const ast::Expr& e, const Level& level, ExprContext context) {
    BindHook hook = [this, &level](const ast::Expr& x) -> ExprPtr {
      if (x.kind == ast::ExprKind::Column && !x.parts.empty()) {
        for (const Level* l = &level; l; l = l->parent) {
          std::vector<size_t> found = namedIn(l->scope, x);
          if (found.empty()) continue;
          if (!l->parent) {
            for (size_t i : found) used_[i] = true;
          }
          return ExprBinder(l->scope, ExprContext::General, functions_).bind(x);
        }
        return nullptr;  // the binder says it is not there
      }
      if (x.kind == ast::ExprKind::Subquery) return nested(x, level);
      return nullptr;
    };
    return ExprBinder(level.scope, context, functions_, hook).bind(e);
  }

  void addColumn(Level& level, const std::string& qualifier, const std::string& name,
                 DataTypePtr type, bool hidden) {
    ExprPtr ref = makeColumnRef(static_cast<int>(level.width), type,
                                qualifier.empty() ? name : qualifier + "." + name);
    level.scope.columns.push_back(ScopeColumn{qualifier, name, std::move(type), hidden, ref});
    ++level.width;
  }

  std::unique_ptr<FromNode> bindFrom(const ast::TableRef& ref, Level& level) {
    auto node = std::make_unique<FromNode>();
    const size_t before = level.width;
    switch (ref.kind) {
      case ast::TableRef::Kind::Join: {
        if (ref.joinType == ast::JoinType::Right || ref.joinType == ast::JoinType::Full) {
          refuse("RIGHT or FULL JOIN in a subquery of the select list", ref.pos);
        }
        node->kind = FromNode::Kind::Join;
        node->left = bindFrom(*ref.left, level);
        node->right = bindFrom(*ref.right, level);
        node->leftJoin = ref.joinType == ast::JoinType::Left;
        if (ref.on) node->on = bindAt(*ref.on, level, ExprContext::JoinOn);
        break;
      }
      case ast::TableRef::Kind::Subquery: {
        if (!ref.subquery) throw InternalError("subquery reference without a query");
        node->kind = FromNode::Kind::Derived;
        node->derived = compile(*ref.subquery, &level, ref.pos);
        for (size_t i = 0; i < node->derived->types.size(); ++i) {
          addColumn(level, ref.alias, node->derived->names[i], node->derived->types[i], false);
        }
        break;
      }
      case ast::TableRef::Kind::Transform:
        refuse("TRANSFORM in a subquery of the select list", ref.pos);
      case ast::TableRef::Kind::Named:
        if (ref.on) {
          bindFunction(ref, level, *node);
        } else {
          bindNamed(ref, level, *node);
        }
        break;
    }
    node->width = level.width - before;
    return node;
  }

  void bindNamed(const ast::TableRef& ref, Level& level, FromNode& node) {
    if (ref.offsetRange) refuse("FOR OFFSETS BETWEEN in a subquery of the select list", ref.pos);
    std::shared_ptr<const BoundedRelation> relation = ctx_.boundedRelation(ref.name);
    if (!relation) {
      if (ctx_.catalog && ctx_.catalog->findSource(ref.name)) {
        throw SqlError(sqlstate::kFeatureNotSupported,
                       fmt::format("a subquery in the select list reads tables, views and the "
                                   "catalog, not the source \"{}\"",
                                   ref.name),
                       ref.pos, "join the source in FROM instead");
      }
      throw SqlError(sqlstate::kUndefinedTable,
                     fmt::format("relation \"{}\" does not exist", ref.name), ref.pos);
    }
    auto rows = std::make_shared<std::vector<Row>>();
    std::unique_ptr<RowSource> source = relation->open();
    Row r;
    while (source->next(r)) rows->push_back(r);
    node.kind = FromNode::Kind::Rows;
    node.rows = std::move(rows);
    // FROM pg_catalog.pg_attrdef is qualified as pg_attrdef, as in the
    // enclosing query (QueryBinder::bindNamed).
    const std::string qualifier =
        ref.alias.empty() ? ref.name.substr(ref.name.rfind('.') + 1) : ref.alias;
    for (const Column& c : relation->schema().columns) {
      addColumn(level, qualifier, c.name, c.type, c.hidden);
    }
  }

  void bindFunction(const ast::TableRef& ref, Level& level, FromNode& node) {
    node.kind = FromNode::Kind::Function;
    node.function = ref.name;
    for (const auto& a : ref.on->args) {
      node.args.push_back(bindAt(*a, level, ExprContext::General));
    }
    DataTypePtr type;
    if (ref.name == "unnest") {
      if (node.args.size() != 1 || node.args[0]->type()->id != TypeId::Array) {
        throw SqlError(sqlstate::kUndefinedFunction, "unnest() takes one array", ref.pos);
      }
      type = node.args[0]->type()->element;
    } else if (ref.name == "generate_series") {
      bool wide = false;
      for (const ExprPtr& a : node.args) {
        if (!a->type()->isIntegral() && a->type()->id != TypeId::Null) {
          throw SqlError(sqlstate::kUndefinedFunction,
                         fmt::format("generate_series() takes integers, not {}",
                                     a->type()->toString()),
                         ref.pos);
        }
        wide = wide || a->type()->id == TypeId::BigInt;
      }
      if (node.args.size() != 2 && node.args.size() != 3) {
        throw SqlError(sqlstate::kUndefinedFunction,
                       "generate_series() takes a start, a stop and an optional step", ref.pos);
      }
      type = DataType::of(wide ? TypeId::BigInt : TypeId::Int);
    } else if (ref.name == "pg_options_to_table") {
      // PostgreSQL's options ('name=value' texts) as (option_name, option_value).
      if (node.args.size() != 1 || node.args[0]->type()->id != TypeId::Array) {
        throw SqlError(sqlstate::kUndefinedFunction, "pg_options_to_table() takes one array",
                       ref.pos);
      }
      const std::string qualifier = ref.alias.empty() ? ref.name : ref.alias;
      addColumn(level, qualifier, "option_name", DataType::of(TypeId::String), false);
      addColumn(level, qualifier, "option_value", DataType::of(TypeId::String), false);
      return;
    } else {
      throw SqlError(sqlstate::kUndefinedFunction,
                     fmt::format("function {}() in FROM does not exist", ref.name), ref.pos,
                     "FROM reads the set-returning functions unnest, generate_series and "
                     "pg_options_to_table");
    }
    if (!type) type = DataType::of(TypeId::String);
    // As in PostgreSQL, the alias names both the relation and its one column.
    const std::string name = ref.alias.empty() ? ref.name : ref.alias;
    addColumn(level, name, name, type, false);
  }

  static bool isSubqueryAggregate(const std::string& name) {
    return name == "count" || name == "collect_list" || name == "array_agg" ||
           name == "string_agg" || name == "min" || name == "max";
  }

  void bindItems(const ast::Select& s, const Level& level, CompiledQuery& out) {
    bool anyAggregate = false;
    for (const ast::SelectItem& item : s.items) {
      anyAggregate = anyAggregate || (item.expr->kind != ast::ExprKind::Star &&
                                      containsAggregate(*item.expr));
    }
    out.aggregated = anyAggregate;
    for (const ast::SelectItem& item : s.items) {
      const ast::Expr& e = *item.expr;
      if (e.kind == ast::ExprKind::Star) {
        if (anyAggregate) refuse("* beside an aggregate", e.pos);
        std::vector<OutputColumn> columns;
        expandStar(level.scope, e, columns);
        for (OutputColumn& c : columns) {
          out.types.push_back(c.expr->type());
          out.names.push_back(c.name);
          out.items.push_back(std::move(c.expr));
        }
        continue;
      }
      if (anyAggregate) {
        const std::string fname = toLower(e.name);
        if (e.kind != ast::ExprKind::Call || !isSubqueryAggregate(fname) || e.distinct ||
            e.filter || e.over) {
          refuse("this aggregate in a subquery of the select list (it takes count, "
                 "collect_list, array_agg, string_agg, min and max)",
                 e.pos);
        }
        SubAggregate a;
        a.function = fname == "array_agg" ? "collect_list" : fname;
        DataTypePtr type;
        if (e.star) {
          if (a.function != "count") refuse(fname + "(*)", e.pos);
          type = DataType::of(TypeId::BigInt);
        } else {
          const size_t want = a.function == "string_agg" ? 2 : 1;
          if (e.args.size() != want) {
            throw SqlError(sqlstate::kUndefinedFunction,
                           fmt::format("{}() takes {} argument{}", fname, want,
                                       want > 1 ? "s" : ""),
                           e.pos);
          }
          a.arg = bindAt(*e.args[0], level, ExprContext::AggregateArg);
          if (a.function == "count") {
            type = DataType::of(TypeId::BigInt);
          } else if (a.function == "collect_list") {
            type = DataType::arrayOf(a.arg->type());
          } else if (a.function == "string_agg") {
            if (a.arg->type()->id != TypeId::String) {
              throw SqlError(sqlstate::kDatatypeMismatch, "string_agg() joins STRING values",
                             e.pos);
            }
            ExprPtr separator = bindAt(*e.args[1], level, ExprContext::General);
            if (!separator->isConstant() || separator->type()->id != TypeId::String) {
              throw SqlError(sqlstate::kFeatureNotSupported,
                             "the separator of string_agg() must be a constant STRING", e.pos);
            }
            Value v = separator->eval(Row{});
            if (!v.isNull()) a.separator = v.asString();
            type = DataType::of(TypeId::String);
          } else {
            type = a.arg->type();
          }
        }
        out.types.push_back(type);
        out.names.push_back(item.alias.empty() ? fname : item.alias);
        out.aggregates.push_back(std::move(a));
        continue;
      }
      ExprPtr bound = bindAt(e, level, ExprContext::SelectList);
      out.types.push_back(bound->type());
      out.names.push_back(outputName(item, *bound));
      out.items.push_back(std::move(bound));
    }
  }

  void bindOrder(const ast::Query& q, const Level& level, CompiledQuery& out) {
    if (out.aggregated) return;  // one row
    for (const ast::OrderItem& item : q.orderBy) {
      SubSortKey key;
      key.descending = item.descending;
      key.nullsFirst = item.nullsFirst.value_or(item.descending);
      const ast::Expr& e = *item.expr;
      if (e.kind == ast::ExprKind::Literal && e.literal.kind == ast::LiteralKind::Integer) {
        int64_t n = 0;
        try {
          n = std::stoll(e.literal.text);
        } catch (const std::exception&) {
          n = 0;
        }
        if (n < 1 || n > static_cast<int64_t>(out.items.size())) {
          throw SqlError(sqlstate::kInvalidColumnReference,
                         fmt::format("ORDER BY position {} is not in select list", e.literal.text),
                         e.pos);
        }
        key.item = static_cast<int>(n - 1);
      } else {
        key.expr = bindAt(e, level, ExprContext::General);
      }
      out.order.push_back(std::move(key));
    }
  }

  const PlanContext& ctx_;
  UserFunctions functions_;
  std::vector<bool> used_;
  int depth_ = 0;
};

}  // namespace

ExprPtr bindRowSubquery(const ast::Expr& e, const Scope& outer, const PlanContext& ctx,
                        const UserFunctions& functions) {
  if (!ctx.boundedRelation) throw InternalError("a row subquery outside a bounded query");
  if (!e.subquery) throw InternalError("a subquery expression without its query");
  // The enclosing query's columns, at the start of the subquery's row.
  Level outerLevel;
  for (size_t i = 0; i < outer.columns.size(); ++i) {
    ScopeColumn c = outer.columns[i];
    c.expr = makeColumnRef(static_cast<int>(i), c.type,
                           c.qualifier.empty() ? c.name : c.qualifier + "." + c.name);
    outerLevel.scope.columns.push_back(std::move(c));
  }
  outerLevel.width = outer.columns.size();
  SubqueryCompiler compiler(ctx, functions, outer.columns.size());
  std::shared_ptr<const CompiledQuery> q = compiler.compile(*e.subquery, &outerLevel, e.pos);
  const DataTypePtr type = compiler.scalarType(*q, e);
  std::vector<ExprPtr> reads;
  std::vector<size_t> at;
  for (size_t i = 0; i < outer.columns.size(); ++i) {
    if (!compiler.outerUsed()[i]) continue;
    reads.push_back(outer.columns[i].expr);
    at.push_back(i);
  }
  return std::make_shared<RowSubqueryExpr>(type, std::move(q), true, std::move(reads),
                                           std::move(at), outer.columns.size(), "(subquery)");
}

}  // namespace rtsql::planner_detail
