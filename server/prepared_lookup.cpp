// Prepared lookups by key of a materialized view (QueryHandler::prepare): a
// prepared statement `SELECT ... FROM v WHERE <each key column> = $n` is
// parsed and recognised once, at its first Describe or Execute, and kept as
// a PreparedLookup (server/views/view_reads.h); each Execute then only turns
// its parameters' literals into key values and reads the view's snapshot,
// with neither the parser (which runs one text at a time, process-wide) nor
// the statement lock on its way.
//
// A prepared statement stands for its text, as in PostgreSQL: when the view
// it reads was dropped, or replaced by another definition or plan, the next
// Execute prepares the text again. A view still there that returns the same
// columns goes on being read; one that returns other columns answers 0A000
// "cached plan must not change result type" (PostgreSQL's answer, so a
// client never decodes rows by a description that no longer holds); a view
// that is gone leaves the text to run, which answers 42P01 as a new
// statement would. A dry run or a transaction block runs the text too.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "common/error.h"
#include "common/interrupt.h"
#include "parser/parser.h"
#include "planner/planner.h"
#include "server/engine.h"
#include "server/handler_error.h"
#include "server/statement_timeout.h"
#include "server/views/view_reads.h"

namespace rtsql {

namespace {

// The expression of a parameter's literal as the extended protocol writes
// it (server/pgwire/extended.h, parameterLiteral): NULL, TRUE, FALSE, a
// quoted string, an integer or a plain decimal (negative ones in
// parentheses), TIMESTAMP '...' or DATE '...'. Null for any other form,
// which the statement's text then takes.
ast::ExprPtr literalExpr(std::string_view s) {
  auto e = std::make_unique<ast::Expr>();
  e->kind = ast::ExprKind::Literal;
  ast::Literal& lit = e->literal;
  auto quotedText = [](std::string_view q, std::string& out) {
    if (q.size() < 2 || q.front() != '\'' || q.back() != '\'') return false;
    for (size_t i = 1; i + 1 < q.size(); ++i) {
      if (q[i] == '\'') {
        if (i + 2 >= q.size() || q[i + 1] != '\'') return false;
        ++i;
      }
      out.push_back(q[i]);
    }
    return true;
  };
  if (s == "NULL") return e;
  if (s == "TRUE" || s == "FALSE") {
    lit.kind = ast::LiteralKind::Boolean;
    lit.boolean = s == "TRUE";
    return e;
  }
  if (!s.empty() && s.front() == '\'') {
    lit.kind = ast::LiteralKind::String;
    return quotedText(s, lit.text) ? std::move(e) : nullptr;
  }
  for (auto [prefix, kind] : {std::pair{std::string_view("TIMESTAMP "), ast::LiteralKind::Timestamp},
                              std::pair{std::string_view("DATE "), ast::LiteralKind::Date}}) {
    if (s.substr(0, prefix.size()) == prefix) {
      lit.kind = kind;
      return quotedText(s.substr(prefix.size()), lit.text) ? std::move(e) : nullptr;
    }
  }
  const bool negative = s.size() > 3 && s.front() == '(' && s[1] == '-' && s.back() == ')';
  std::string_view digits = negative ? s.substr(2, s.size() - 3) : s;
  size_t dots = 0;
  for (char c : digits) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return nullptr;
    }
  }
  if (digits.empty() || digits == "." || dots > 1) return nullptr;
  lit.kind = dots == 0 ? ast::LiteralKind::Integer : ast::LiteralKind::Decimal;
  lit.text = std::string(digits);
  if (!negative) return e;
  auto minus = std::make_unique<ast::Expr>();
  minus->kind = ast::ExprKind::Unary;
  minus->op.push_back('-');  // (assigning "-" trips a false -Wrestrict of g++ 12)
  minus->args.push_back(std::move(e));
  return minus;
}

bool sameResult(const std::vector<ResultColumn>& a, const std::vector<ResultColumn>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].typeOid != b[i].typeOid) return false;
  }
  return true;
}

}  // namespace

class PreparedViewLookup final : public PreparedQuery {
 public:
  PreparedViewLookup(EngineContext& ctx, std::string text, std::vector<ParameterAt> parameters,
                     PreparedLookup lookup)
      : ctx_(ctx),
        text_(std::move(text)),
        parameters_(std::move(parameters)),
        lookup_(std::move(lookup)),
        columns_(lookup_.columns) {}

  const std::vector<ResultColumn>& columns() const override { return columns_; }

  bool execute(Session& session, const std::vector<std::string>& literals,
               ResultWriter& out) override {
    auto& s = static_cast<EngineSession&>(session);
    if (s.shadow || s.block.active()) return false;
    const OptionEntry* timeout = s.settings.find("statement_timeout");
    std::optional<DeadlineWriter> writer;
    try {
      writer.emplace(out, timeout ? parseStatementTimeoutMs(timeout->value, SqlError::npos) : 0);
      // Twice at most: a view changed once more while it was prepared again
      // leaves the text to run.
      for (int attempt = 0; attempt < 2; ++attempt) {
        if (ctx_.catalog.findFlow(lookup_.view) != lookup_.definition && !prepareAgain(s))
          return false;
        std::optional<std::vector<Value>> key = keyValues(literals);
        if (!key) return false;
        std::optional<uint64_t> epoch;
        // The standby copy kept here, where the session reads it
        // (server/views/view_reads.h).
        const ViewRead mode = ctx_.views->readOf(lookup_.view, s.settings, lookup_.pos, &*writer);
        try {
          if (ctx_.views->lookup(lookup_, *key, *writer, epoch, mode)) {
            s.readViews({{lookup_.view, epoch}});
            return true;
          }
        } catch (const SqlError& e) {
          // A view another node holds (refused before anything is sent): the
          // text runs, and is sent there (server/views/view_forward.h). Not
          // a read of the standby copy, whose answer this is.
          if (e.sqlstate() == sqlstate::kObjectNotInPrerequisiteState && s.forwardedBy.empty() &&
              mode != ViewRead::Standby && ctx_.views->forwardTo(lookup_.view))
            return false;
          throw;
        }
        // The same definition with another plan (a restart of a replaced view).
        if (!prepareAgain(s)) return false;
      }
      return false;
    } catch (const Interrupted&) {
      out.error(writer && (writer->expired() || writer->deadlinePassed())
                    ? DeadlineWriter::timeoutError()
                    : handlerError(std::current_exception()));
    } catch (...) {
      out.error(handlerError(std::current_exception()));
    }
    return true;
  }

  // A lookup of the last committed epoch of a view that runs here, whose
  // snapshot is open, answers at once; anything else (the latest state, a
  // view replaced, restoring, failed or held elsewhere, a key value that
  // does not fit) is execute()'s.
  bool executeNow(Session& session, const std::vector<std::string>& literals,
                  ResultWriter& out) override {
    auto& s = static_cast<EngineSession&>(session);
    if (s.shadow || s.block.active() || viewReadOf(s.settings) != ViewRead::Committed) return false;
    if (ctx_.catalog.findFlow(lookup_.view) != lookup_.definition) return false;
    std::optional<std::vector<Value>> key;
    try {
      key = keyValues(literals);
    } catch (const SqlError&) {
      return false;
    }
    if (!key) return false;
    std::optional<uint64_t> epoch;
    try {
      if (!ctx_.views->lookupNow(lookup_, *key, out, epoch)) return false;
    } catch (...) {
      out.error(handlerError(std::current_exception()));
      return true;
    }
    s.readViews({{lookup_.view, epoch}});
    return true;
  }

 private:
  // The key values the parameters' literals give, typed as the key columns;
  // nullopt for a literal of a form the text must take. Throws SqlError
  // for a value that does not fit its column, naming the parameter.
  std::optional<std::vector<Value>> keyValues(const std::vector<std::string>& literals) const {
    std::vector<Value> key;
    key.reserve(lookup_.key.size());
    for (size_t k = 0; k < lookup_.key.size(); ++k) {
      if (!lookup_.parameter[k]) {
        key.push_back(lookup_.constant[k]);
        continue;
      }
      const size_t n = *lookup_.parameter[k];
      if (n >= literals.size()) return std::nullopt;
      ast::ExprPtr e = literalExpr(literals[n]);
      if (!e) return std::nullopt;
      try {
        key.push_back(evalConstant(
            *e, lookup_.schema.columns[static_cast<size_t>(lookup_.key[k])].type));
      } catch (SqlError& err) {
        err.setPosition(SqlError::npos);
        if (err.detail().empty()) err.withDetail(fmt::format("In parameter ${}.", n + 1));
        throw;
      }
    }
    return key;
  }

  // The view changed since the statement was prepared: its text prepared
  // again. True when it is still a lookup returning the same columns (now
  // in lookup_); false when the text is to run (the view is gone, or the
  // query is no longer a lookup by key of it). Throws 0A000 when the
  // columns it returns changed.
  bool prepareAgain(EngineSession& s) {
    std::vector<ast::StatementPtr> stmts = parseStatements(text_);
    if (stmts.size() != 1 || stmts.front()->kind != ast::StatementKind::Select) return false;
    const ast::Query& q = *static_cast<const ast::SelectStatement&>(*stmts.front()).query;
    Catalog::FlowPtr view = ViewReads::viewOf(q, ctx_.catalog);
    if (!view) return false;
    std::optional<PreparedLookup> again = ctx_.views->prepareLookup(q, *view, parameters_);
    std::optional<std::vector<ResultColumn>> now;
    if (again) {
      now = again->columns;
    } else {
      now = ctx_.dispatch->describe(s, text_);
    }
    if (now && !sameResult(*now, columns_)) {
      throw SqlError(sqlstate::kFeatureNotSupported, "cached plan must not change result type",
                     q.pos,
                     fmt::format("materialized view \"{}\" was replaced and returns other columns; "
                                 "prepare the statement again",
                                 view->name));
    }
    if (!again) return false;
    again->definition = view;
    lookup_ = std::move(*again);
    return true;
  }

  EngineContext& ctx_;
  const std::string text_;
  const std::vector<ParameterAt> parameters_;
  PreparedLookup lookup_;
  const std::vector<ResultColumn> columns_;  // as first prepared: what the client was told
};

std::shared_ptr<PreparedQuery> Engine::prepare(Session& session, const std::string& text,
                                               const std::vector<ParameterAt>& parameters) {
  auto& s = static_cast<EngineSession&>(session);
  if (s.shadow || s.block.active()) return nullptr;
  try {
    // Without a view there is nothing to prepare, and the text is not
    // parsed for nothing.
    const std::vector<Catalog::FlowPtr> flows = ctx_.catalog.flows();
    if (std::none_of(flows.begin(), flows.end(),
                     [](const Catalog::FlowPtr& f) { return f->materializedView; }))
      return nullptr;
    std::vector<ast::StatementPtr> stmts = parseStatements(text);
    if (stmts.size() != 1 || stmts.front()->kind != ast::StatementKind::Select) return nullptr;
    const ast::Query& q = *static_cast<const ast::SelectStatement&>(*stmts.front()).query;
    Catalog::FlowPtr view = ViewReads::viewOf(q, ctx_.catalog);
    if (!view) return nullptr;
    std::optional<PreparedLookup> lookup = ctx_.views->prepareLookup(q, *view, parameters);
    if (!lookup) return nullptr;
    lookup->definition = view;
    return std::make_shared<PreparedViewLookup>(ctx_, text, parameters, std::move(*lookup));
  } catch (...) {
    return nullptr;  // the text, run, reports what is wrong with it
  }
}

}  // namespace rtsql
