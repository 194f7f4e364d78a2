// SELECT (select_statement.h).
#include "server/select_statement.h"

#include <filesystem>

#include "common/expr.h"
#include "common/map_order.h"
#include "common/schema.h"
#include "connectors/kafka/tap.h"
#include "planner/json_tuple_items.h"
#include "planner/user_function.h"
#include "server/live_query.h"
#include "server/live_query_quota.h"
#include "server/pg_values.h"
#include "server/privileges.h"
#include "server/views/view_forward.h"
#include "server/views/view_reads.h"

namespace rtsql {

namespace {

// Relays a read's answer to the client's writer, noting whether any of it
// (columns, rows, the end) went out: a read that failed before then may be
// answered another way.
class RelayedWriter final : public ResultWriter {
 public:
  explicit RelayedWriter(ResultWriter& out) : out_(out) {}
  void columns(const std::vector<ResultColumn>& cols) override {
    answered_ = true;
    out_.columns(cols);
  }
  void row(const std::vector<std::optional<std::string>>& values) override {
    answered_ = true;
    out_.row(values);
  }
  void complete(const std::string& tag) override {
    answered_ = true;
    out_.complete(tag);
  }
  void error(const SqlError& err) override {
    answered_ = true;
    out_.error(err);
  }
  void notice(const std::string& message) override { out_.notice(message); }
  void warning(const std::string& sqlstate, const std::string& message) override {
    out_.warning(sqlstate, message);
  }
  void parameterStatus(const std::string& name, const std::string& value) override {
    out_.parameterStatus(name, value);
  }
  bool cancelled() const override { return out_.cancelled(); }
  bool cancelledFromAnyThread() const override { return out_.cancelledFromAnyThread(); }
  bool answered() const { return answered_; }

 private:
  ResultWriter& out_;
  bool answered_ = false;
};

}  // namespace

void QueryStatements::select(EngineSession& s, const ast::SelectStatement& stmt,
                             ResultWriter& out) {
  const ast::Query& q = *stmt.query;
  // A SELECT without FROM is evaluated at once, as PostgreSQL does (drivers and
  // tools send `SELECT 1` to check a connection).
  if (isConstantQuery(q)) {
    const ast::Select& sel = q.terms[0];
    Schema empty;
    std::vector<ResultColumn> cols;
    std::vector<std::optional<std::string>> row;
    for (const auto& item : sel.items) {
      checkSelectListLength(cols.size() + 1, item.expr->pos);
      std::vector<planner_detail::OutputColumn> tuple = planner_detail::jsonTupleColumns(
          item, [&](const ast::Expr& a) { return bindExpression(a, empty, &ctx_.catalogOf(s)); });
      for (const auto& c : tuple) {
        cols.push_back({c.name, pgTypeOf(*c.expr->type())});
        row.push_back(pgTextOf(c.expr->eval(Row{})));
      }
      if (!tuple.empty()) continue;
      ExprPtr e = bindExpression(*item.expr, empty, &ctx_.catalogOf(s));  // SELECT f(1)
      // One row has no duplicates, but Spark refuses DISTINCT over a map all
      // the same, as a query with FROM does (QueryBinder::bindDedup).
      if (sel.distinct) refuseMapValues(*e->type(), "DISTINCT", item.expr->pos, kDistinctMapHint);
      // Typed as a live query's columns are, so drivers get ints, floats and
      // booleans rather than text.
      cols.push_back({constantColumnName(item), pgTypeOf(*e->type())});
      row.push_back(pgTextOf(e->eval(Row{})));
    }
    if (sel.where) {
      Value w = bindExpression(*sel.where, empty, &ctx_.catalogOf(s))->eval(Row{});
      if (w.isNull() || !w.asBool()) {
        ctx_.sendRows(out, cols, {}, "SELECT 0");
        return;
      }
    }
    ctx_.sendRows(out, cols, {row}, "SELECT 1");
    return;
  }
  // A query over one view another node holds, and nothing else, is sent
  // there (server/views/view_forward.h), unless it came from another node
  // already. One that reads more, or calls a function whose value is this
  // session's (now(), pg_backend_pid()), runs here as a bounded query, which
  // reads each view held elsewhere from its holder (server/views/view_remote.h).
  // Either reads the standby copy kept here instead where the session says
  // so, or where the holder cannot answer (ViewReads::readOf, standbyAfter).
  bool readFromHolder = false;
  bool holderFailed = false;
  if (Catalog::FlowPtr view = ViewReads::soleViewOf(q, ctx_.catalogOf(s));
      view && !s.shadow && s.forwardedBy.empty() &&
      ctx_.views->readOf(view->name, s.settings, stmt.pos, &out) != ViewRead::Standby) {
    if (std::optional<ViewReads::Forward> to = ctx_.views->forwardTo(view->name)) {
      readFromHolder = !sendsWhole(q, ctx_.catalogOf(s));
      if (!readFromHolder) {
        const ForwardedRead read{to->route, to->holder, view->name, s.user,     s.database,
                                 s.settings, stmt.text,  stmt.pos};
        RelayedWriter relayed(out);
        try {
          s.readViews({{view->name, forwardViewRead(read, relayed)}});
          return;
        } catch (const SqlError& e) {
          if (relayed.answered() || !ctx_.views->standbyAfter(e, view->name, s.settings)) throw;
          out.notice(e.what());
          holderFailed = true;
        }
      }
    }
  }
  // A materialized view's lookups by key and scans in key order are answered
  // from its snapshot directly (server/views/view_reads.h); any other query
  // over it is a bounded query reading the same snapshot.
  if (Catalog::FlowPtr view = readFromHolder ? nullptr : ViewReads::viewOf(q, ctx_.catalogOf(s));
      view && ctx_.views->serves(q, *view)) {
    if (s.shadow && !s.blockShadow) {
      out.columns(ctx_.views->columns(q, *view));
      out.complete("SELECT 0");
      return;
    }
    const ViewRead mode = holderFailed ? ViewRead::Standby
                                       : ctx_.views->readOf(view->name, s.settings, stmt.pos);
    s.readViews({{view->name, ctx_.views->select(q, *view, out, mode)}});
    return;
  }
  // A query over finite relations only runs to their end (server/bounded_query.h).
  ViewEpochs epochs;
  const BoundedLookup lookup = ctx_.boundedLookup(s, &out, &epochs, &stmt, holderFailed);
  if (isBoundedQuery(q, lookup)) {
    PhysicalPlan plan = ctx_.planBounded(
        s, q, catalogQueryContext(q, lookup, boundedPlanContext(ctx_.planContext(s), lookup)));
    if (s.shadow && !s.blockShadow) {
      out.columns(boundedQueryColumns(plan));
      out.complete("SELECT 0");
      return;
    }
    std::optional<LiveQueryQuota::Hold> hold;
    if (!ctx_.privileges->isSuperuser(s.user))
      hold.emplace(ctx_.liveQuota->acquire(s.user, plan.slots()));
    runBoundedQuery(std::move(plan), q, ctx_.boundedRun(s, ctx_.catalogOf(s), lookup), out);
    if (!epochs.empty()) s.readViews(std::move(epochs));
    return;
  }
  // A query on a stream runs as a temporary flow whose rows stream to the
  // client, with the shuffle.partitions that fit the free slots where the
  // session chose none (EngineContext::planLive).
  PhysicalPlan plan = ctx_.planLive(s, q);
  if (s.shadow && !s.blockShadow) {
    // Dry run: planned, its columns sent, nothing read.
    out.columns(liveQueryColumns(plan));
    out.complete("SELECT 0");
    return;
  }
  // Superusers are not bound by the per-user quota (server/live_query_quota.h).
  std::optional<LiveQueryQuota::Hold> hold;
  if (!ctx_.privileges->isSuperuser(s.user))
    hold.emplace(ctx_.liveQuota->acquire(s.user, plan.slots()));
  runLiveQuery(std::move(plan), q.limit, ctx_.connectors, *ctx_.liveTaps, ctx_.slots,
               (std::filesystem::path(ctx_.options.dataDir) / "live").string(), out);
}

std::vector<ResultColumn> QueryStatements::columns(EngineSession& s, const ast::Query& q) {
  if (isConstantQuery(q)) {
    std::vector<ResultColumn> cols;
    Schema empty;
    for (const auto& item : q.terms[0].items) {
      checkSelectListLength(cols.size() + 1, item.expr->pos);
      std::vector<planner_detail::OutputColumn> tuple = planner_detail::jsonTupleColumns(
          item, [&](const ast::Expr& a) { return bindExpression(a, empty, &ctx_.catalogOf(s)); });
      for (const auto& c : tuple) cols.push_back({c.name, pgTypeOf(*c.expr->type())});
      if (!tuple.empty()) continue;
      ExprPtr e = bindExpression(*item.expr, empty, &ctx_.catalogOf(s));
      cols.push_back({constantColumnName(item), pgTypeOf(*e->type())});
    }
    return cols;
  }
  if (Catalog::FlowPtr view = ViewReads::viewOf(q, ctx_.catalogOf(s));
      view && ctx_.views->serves(q, *view))
    return ctx_.views->columns(q, *view);
  const BoundedLookup lookup = ctx_.boundedLookup(s, nullptr, nullptr);
  if (isBoundedQuery(q, lookup)) {
    return boundedQueryColumns(planBoundedQuery(
        q, catalogQueryContext(q, lookup, boundedPlanContext(ctx_.planContext(s), lookup))));
  }
  return liveQueryColumns(planQuery(q, ctx_.planContext(s)));
}

bool QueryStatements::isConstantQuery(const ast::Query& q) {
  return q.terms.size() == 1 && !q.terms[0].from && q.terms[0].groupBy.empty();
}

std::string QueryStatements::constantColumnName(const ast::SelectItem& item) {
  if (!item.alias.empty()) return item.alias;
  return item.expr->kind == ast::ExprKind::Call ? item.expr->name : std::string("?column?");
}

}  // namespace rtsql
