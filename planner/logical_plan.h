// Internal to the planner: the logical plan and the query binder that builds it.
//
// Binding turns the AST into a small tree of logical nodes: scans, operators
// and unions. An operator node is stateless (filter, project, broadcast join)
// or stateful (aggregate, dedup, stream-stream join), as its spec says; a
// stateful one needs its inputs shuffled by key.
// Expressions are bound once, against the rows of a node. A relation in FROM
// (or a bound subquery) is a node plus a scope that names its columns by
// expressions over that node's rows; a stateless subquery is therefore
// flattened into the enclosing query: its projection becomes the expressions
// the outer query names, and no Project node is planned for it. Projects are
// planned only where rows must take a fixed shape: before a shuffle, at the
// right side of a stream-stream join, at each term of a UNION ALL and at the
// end of the query.
//
// cutStages() (stages.cpp) then turns the tree into physical stages, cutting
// at every stateful node.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "planner/binder.h"
#include "planner/catalog.h"
#include "planner/physical_plan.h"
#include "planner/planner.h"

namespace rtsql::planner_detail {

class PreProjection;

enum class Mode { Flow, Query };

struct Node;
using NodePtr = std::shared_ptr<const Node>;

struct Node {
  enum class Kind { Scan, Operator, Union } kind = Kind::Scan;
  Catalog::SourcePtr source;     // Scan
  OperatorSpec op;               // Operator; op.output() == schema
  // Operator: 1, or 2 for a stream-stream join; Union: n.
  std::vector<NodePtr> inputs;
  // A stateful operator: per input, the shuffle keys over that input's rows.
  std::vector<std::vector<ExprPtr>> shuffleKeys;
  Schema schema;  // the rows this node produces
};

NodePtr scanNode(Catalog::SourcePtr source);
// A node running `op` over `inputs`. When op.stateful(), `shuffleKeys` has one
// list of keys per input, by which that input's rows are shuffled.
NodePtr operatorNode(std::vector<NodePtr> inputs, OperatorSpec op,
                     std::vector<std::vector<ExprPtr>> shuffleKeys = {});
NodePtr filterNode(NodePtr input, ExprPtr predicate);

struct OutputColumn {
  std::string name;
  ExprPtr expr;  // over the node's rows
  size_t pos = SqlError::npos;
};

// A Project node computing `outputs` over `input`.
NodePtr projectNode(NodePtr input, const std::vector<OutputColumn>& outputs);

// What a FROM item or a bound query gives the enclosing query.
struct Relation {
  NodePtr node;  // null for a static table
  Scope scope;   // names -> expressions over node rows
  // The source's watermark column as an expression over node rows; null when
  // the rows carry no event time with a watermark.
  ExprPtr eventTime;
  std::string sourceName;  // the (first) source read, for messages
  // The rows are an aggregation's updates (a changelog), which no other
  // stateful operator may consume.
  bool changelog = false;
  // An aggregation's group key columns (window included) over node rows: the
  // default Kafka key of the sink.
  std::vector<ExprPtr> keyRefs;
  // The scope is the node's columns in order (a scan, possibly filtered), so
  // the rows need no Project to take the scope's shape.
  bool identity = false;
  Catalog::TablePtr table;  // a static table in FROM (node is null)
  std::string name;         // alias or relation name
  size_t pos = SqlError::npos;
};

// What a ranking query over a GROUP BY (`ROW_NUMBER() OVER (PARTITION BY
// cat ORDER BY sum(x) DESC)` beside `GROUP BY cat, item`) asks of the
// aggregation under it (window_function_binder.cpp): the rank item is left
// out, and the window's expressions are bound over the aggregation's rows as
// the select items are.
struct RankedAggregate {
  size_t rankItem = 0;                  // the ROW_NUMBER() item of the SELECT
  std::vector<const ast::Expr*> extra;  // PARTITION BY, then ORDER BY expressions
  std::vector<ExprPtr> extraBound;      // out: `extra` over the aggregation's rows
  size_t outputsBefore = 0;             // out: outputs of the items before the rank
};

struct BoundQuery {
  NodePtr node;
  std::vector<OutputColumn> outputs;  // over node rows
  ExprPtr eventTime;
  std::string sourceName;
  bool changelog = false;
  std::vector<ExprPtr> keyRefs;
  // The outputs are exactly the node's columns (a UNION ALL), so the query's
  // end needs no Project of its own.
  bool shaped = false;
  // The last this many outputs are a bounded query's ORDER BY keys that it
  // does not select (bindOrderColumns): the plan's result columns, hidden.
  size_t hiddenOutputs = 0;
};

// The columns [first, end) a select item took in the list it was bound into;
// none (first == end) for an item left out.
struct ItemColumns {
  size_t first = 0;
  size_t end = 0;
};

class QueryBinder {
 public:
  QueryBinder(const PlanContext& ctx, Mode mode) : ctx_(ctx), mode_(mode) {}

  // `limitPos` is where the top-level LIMIT is written, if known.
  BoundQuery bindQuery(const ast::Query& q, bool top, size_t limitPos) const;

 private:
  [[noreturn]] void unsupported(const std::string& what, size_t pos,
                                const std::string& hint = {}) const;
  // The user functions the query's expressions may call: the catalog's.
  UserFunctions functions() const { return UserFunctions{ctx_.catalog}; }
  // `order`: the top query's ORDER BY, which a bounded query's keys that
  // are not selected are computed for (bindOrderColumns).
  BoundQuery bindSelect(const ast::Select& s, bool top,
                        const std::vector<ast::OrderItem>* order = nullptr) const;
  void bindOrderColumns(const std::vector<ast::OrderItem>& order, const Scope& scope,
                        BoundQuery& out) const;
  // A FROM name's FOR OFFSETS BETWEEN range: 0A000 outside a bounded query
  // or over a source that is not Kafka's, 22023 for other bounds.
  void checkOffsetRange(const ast::TableRef& ref) const;
  BoundQuery bindUnion(const ast::Query& q, bool top) const;
  // `calls`, when given, binds what it answers first (set-returning calls).
  std::vector<OutputColumn> bindItems(const ast::Select& s, const Scope& scope,
                                      const BindHook& calls = nullptr) const;
  // The select items of `s` bound over `scope` and appended to `out`, each
  // star expanded, the list's length checked as it grows; an item for which
  // `skip` is true (an OVER aggregate, the rank of a top-N) is left out. The
  // columns each item took.
  std::vector<ItemColumns> bindItemsInto(const ast::Select& s, const Scope& scope,
                                         std::vector<OutputColumn>& out,
                                         const std::function<bool(size_t)>& skip,
                                         const BindHook& calls = nullptr) const;
  BoundQuery bindDedup(const ast::Select& s, Relation rel) const;
  // aggregate_binder.cpp; `ranked` for the aggregation of a ranking query.
  BoundQuery bindAggregate(const ast::Select& s, Relation rel,
                           RankedAggregate* ranked = nullptr) const;
  void checkHints(const ast::Select& s) const;
  // window_function_binder.cpp: whether FROM of `s` is a subquery that ranks
  // its rows with a function OVER (...); that subquery bound as a top-N whose
  // limit the WHERE conjuncts of `s` on the rank give (`rest` receives the
  // others); the refusal of ROW_NUMBER() where no query filters its rank.
  bool ranksRows(const ast::Select& s) const;
  Relation bindTopN(const ast::Select& s, std::vector<const ast::Expr*>& rest) const;
  void checkWindowFunctions(const ast::Select& s) const;
  // over_aggregate_binder.cpp: whether a select item of `s` calls an
  // aggregate function OVER (...); `s` bound as an OverAggregate over `rel`.
  bool hasOverAggregate(const ast::Select& s) const;
  BoundQuery bindOverAggregate(const ast::Select& s, Relation rel) const;
  // analytic_window_binder.cpp: a bounded query's functions OVER (...), `s`
  // bound as an AnalyticWindow over `rel`.
  BoundQuery bindAnalyticWindow(const ast::Select& s, Relation rel) const;

  Relation bindFrom(const ast::TableRef& ref) const;
  Relation bindNamed(const ast::TableRef& ref) const;
  Relation bindTransform(const ast::TableRef& ref) const;
  Relation bindJoin(const ast::TableRef& ref) const;  // join_binder.cpp
  Relation bindBroadcastJoin(const ast::TableRef& ref, Relation left, Relation right) const;
  Relation bindStreamJoin(const ast::TableRef& ref, Relation left, Relation right) const;
  // subquery_binder.cpp: the subqueries among the WHERE conditions `where` of
  // a query over `rel`, joined to it; `where` is left with the conditions
  // still to check on the result (`rewritten` owns those it rewrote).
  Relation bindWhereSubqueries(Relation rel, std::vector<const ast::Expr*>& where,
                               std::vector<ast::ExprPtr>& rewritten) const;
  BoundQuery bindSubquery(const ast::Expr& e, const Scope& outer) const;
  Relation bindInSubquery(const ast::Expr& in, Relation rel, int n) const;
  Catalog::TablePtr staticSubqueryTable(const ast::Query& q) const;
  Relation bindStaticInSubquery(const ast::Expr& in, Relation rel, int n,
                                const Catalog::TablePtr& table) const;
  Relation bindScalarSubquery(const ast::Expr& e, Relation rel, const std::string& qualifier,
                              std::string& name) const;

  const PlanContext& ctx_;
  Mode mode_;
};

// Binds an aggregate call `fname`(arg) or count(*) of `e` over `scope`: its
// function, argument and result type (count and sum of integers BIGINT, sum of
// doubles and avg DOUBLE, min/max the argument's type), or the SQLSTATE error
// of a wrong call. DISTINCT and FILTER are the caller's (aggregate_binder.cpp).
void bindAggregateCall(const ast::Expr& e, const std::string& fname, const Scope& scope,
                       AggregateCall& call, const UserFunctions& functions);

// Whether `node`'s rows come from a session-window aggregation that emits
// updates: a session's row changes its window as the session grows or merges,
// so no key says which earlier row an update replaces, and no stateful
// operator may read them.
bool readsSessionUpdates(const NodePtr& node);

// Whether `node`'s rows come from a changelog source (changelogFormat(), a
// debezium-json source): they may delete and update rows, so an operator that
// takes only appended rows may not read them.
bool readsChangelogSource(const NodePtr& node);

// Shared helpers.
std::string outputName(const ast::SelectItem& item, const Expr& bound);
void expandStar(const Scope& scope, const ast::Expr& star, std::vector<OutputColumn>& out);
void checkUniqueNames(const std::vector<OutputColumn>& outputs);
Schema outputSchema(const std::vector<OutputColumn>& outputs);
// A scope with the same names whose expressions are unique column references:
// binding against it gives a text that identifies which columns an expression
// reads, so two spellings of one expression (`c.user_id`, `user_id`) compare equal.
Scope fingerprintScope(const Scope& scope);
// A scope whose columns print as `qualifier.name`, for EXPLAIN labels.
Scope displayScope(const Scope& scope);
// The Relation whose rows are exactly its scope's columns (plus the event time
// when the scope does not name it), adding a Project unless already so.
Relation materialize(const Relation& rel);
// Splits `a AND b AND c` into its conjuncts.
void splitConjuncts(const ast::Expr& e, std::vector<const ast::Expr*>& out);

// analytic_window_binder.cpp: whether a select item of `s` calls a function
// OVER (...); the 0A000 of an analytic function (lag, rank, ...) OVER (...)
// that `e` calls where only a bounded query computes it.
bool hasAnalyticCall(const ast::Select& s);
void refuseAnalyticInFlow(const ast::Expr& e);
// The analytic functions a flow's OverAggregate computes (first_value,
// last_value, lag): the aggregate calls of one such call `e` appended to
// `calls` and its argument columns to `argCols` (lag takes two: count(*) and
// first(x)), and the column of lag's default or -1; lag's offset; lag's
// value over its two aggregates.
bool isFlowAnalytic(const std::string& name);
int64_t flowLagOffset(const ast::Expr& e);
int bindFlowAnalytic(const ast::Expr& e, const Scope& scope, const UserFunctions& functions,
                     PreProjection& pre, std::vector<AggregateCall>& calls,
                     std::vector<int>& argCols);
ExprPtr flowLagValue(const ast::Expr& e, ExprPtr count, ExprPtr first, ExprPtr defaultValue);
// 42P10: an event-time operator over rows without a watermark.
[[noreturn]] void throwNeedsWatermark(const std::string& what, const std::string& source,
                                      size_t pos);

// "10 seconds", "1 minute", "0 seconds": durations as EXPLAIN prints them.
std::string formatDuration(int64_t micros);
// "1 row", "3 rows": a count with its unit, plural unless 1.
std::string plural(int64_t n, const char* unit);
// "a, b + 1": expressions as EXPLAIN prints a list of them.
std::string exprList(const std::vector<ExprPtr>& exprs);

// Cuts the logical tree (ending in the final Project) into stages, filling
// plan.scans and plan.stages.
void cutStages(const NodePtr& root, const PlanContext& ctx, PhysicalPlan& plan);

}  // namespace rtsql::planner_detail
