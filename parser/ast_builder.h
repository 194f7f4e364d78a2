// Turns the ANTLR parse tree of a script into the plain AST of parser/ast.h.
// Internal to parser/: the rest of the project sees only parseStatements().
//
// Positions: ANTLR counts characters (code points), the AST counts bytes, so the
// builder gets a table from code point index to byte offset and reads every
// token's text straight from the original UTF-8.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "RtSqlParser.h"
#include "parser/ast.h"

namespace rtsql::parser {

// Spark's inline table, FROM VALUES (1, 'a'), (2, 'b') AS t(x, y), which rtsql
// does not read: 0A000 at `pos` with the query to write instead. Raised where
// it parses as a call in FROM (one row) and where it is a syntax error.
[[noreturn]] void refuseInlineTable(size_t pos);

// Expressions nested deeper than this (counting every operator, call and
// parenthesis on the way down) are rejected with 54001 before any recursion in
// the builder or in later layers can exhaust the stack.
inline constexpr int kMaxExprDepth = 1000;

class AstBuilder {
 public:
  // `byteOffset[i]` is the byte offset of code point i; it has one extra entry
  // for the end of the text.
  AstBuilder(std::string_view text, const std::vector<size_t>& byteOffset,
             antlr4::BufferedTokenStream& tokens)
      : text_(text), byteOffset_(byteOffset), tokens_(tokens) {}

  std::vector<ast::StatementPtr> script(grammar::RtSqlParser::ScriptContext* ctx);

 private:
  using P = grammar::RtSqlParser;

  // Byte positions and text.
  size_t startOf(antlr4::Token* t) const;
  size_t endOf(antlr4::Token* t) const;
  size_t startOf(antlr4::ParserRuleContext* ctx) const { return startOf(ctx->getStart()); }
  size_t endOf(antlr4::ParserRuleContext* ctx) const { return endOf(ctx->getStop()); }
  std::string_view tokenText(antlr4::Token* t) const;
  std::string sourceText(antlr4::ParserRuleContext* ctx) const;

  // Statements.
  ast::StatementPtr statement(P::StatementContext* ctx);
  ast::StatementPtr createSource(P::CreateSourceContext* ctx);
  ast::StatementPtr createTable(P::CreateTableContext* ctx);
  ast::StatementPtr createSink(P::CreateSinkContext* ctx);
  ast::StatementPtr createFlow(P::CreateFlowContext* ctx);
  ast::StatementPtr createMaterializedView(P::CreateMaterializedViewContext* ctx);
  void replaceClauses(P::ResetStateClauseContext* reset, ast::CreateFlow& s,
                      const char* resetWithoutReplace);
  ast::StatementPtr dropMaterializedView(P::DropMaterializedViewContext* ctx);
  ast::StatementPtr createFunction(P::CreateFunctionContext* ctx);
  ast::StatementPtr createProcessor(P::CreateProcessorContext* ctx);
  ast::StatementPtr insert(P::InsertStatementContext* ctx);
  ast::StatementPtr drop(P::DropStatementContext* ctx);
  ast::StatementPtr flowCommand(P::FlowCommandContext* ctx);
  ast::StatementPtr savepoint(P::SavepointStatementContext* ctx);
  ast::StatementPtr show(P::ShowStatementContext* ctx);
  ast::StatementPtr describe(P::DescribeStatementContext* ctx);
  ast::StatementPtr alter(P::AlterStatementContext* ctx);
  ast::StatementPtr explain(P::ExplainStatementContext* ctx);
  ast::StatementPtr set(P::SetStatementContext* ctx);
  ast::StatementPtr setTimeZone(P::SetTimeZoneStatementContext* ctx);
  ast::StatementPtr user(P::UserStatementContext* ctx);
  ast::StatementPtr blockStatement(P::BlockStatementContext* ctx);
  ast::StatementPtr selectStatement(P::QueryContext* ctx);

  std::vector<ast::Option> withOptions(P::WithOptionsContext* ctx);
  std::string optionValue(P::OptionValueContext* ctx);
  std::string dottedWord(P::DottedWordContext* ctx);
  ast::ColumnDef columnDef(P::ColumnDefContext* ctx);
  ast::TypeName dataType(P::DataTypeContext* ctx);

  // Queries.
  std::unique_ptr<ast::Query> query(P::QueryContext* ctx);
  void queryTerm(P::QueryTermContext* ctx, ast::Query& into);
  ast::Select selectCore(P::SelectCoreContext* ctx);
  std::vector<ast::Hint> hints(antlr4::Token* selectToken);
  ast::TableRefPtr relation(P::RelationContext* ctx);
  ast::TableRefPtr relationPrimary(P::RelationPrimaryContext* ctx);

  // Expressions.
  ast::ExprPtr expr(P::ExprContext* ctx);
  ast::ExprPtr lambda(P::LambdaContext* ctx);
  ast::ExprPtr booleanExpr(P::BooleanExprContext* ctx);
  ast::ExprPtr valueExpr(P::ValueExprContext* ctx);
  ast::ExprPtr primary(P::PrimaryContext* ctx);
  ast::ExprPtr literal(P::LiteralContext* ctx);
  ast::ExprPtr newExpr(ast::ExprKind kind, antlr4::ParserRuleContext* ctx);
  ast::ExprPtr standardFormCall(P::PrimaryContext* ctx);
  std::shared_ptr<ast::Over> over(P::OverClauseContext* ctx);
  // Named windows (parser/named_windows.cpp): a window's parts as written,
  // its WINDOW clause definitions and refinements resolved.
  struct WindowParts {
    std::vector<P::ExprContext*> partition;
    std::vector<P::OrderItemContext*> order;
    P::WindowFrameContext* frame = nullptr;
  };
  struct NamedWindow {
    P::WindowSpecContext* spec = nullptr;
    enum class State { Unresolved, Resolving, Resolved } state = State::Unresolved;
    WindowParts parts;
  };
  // Opens the scope of a SELECT's WINDOW clause (none: an empty scope) for
  // the guard's lifetime.
  class WindowScope {
   public:
    WindowScope(AstBuilder& b, P::WindowClauseContext* clause);
    ~WindowScope() { b_.windowScopes_.pop_back(); }
    WindowScope(const WindowScope&) = delete;
    WindowScope& operator=(const WindowScope&) = delete;

   private:
    AstBuilder& b_;
  };
  WindowParts windowParts(P::WindowSpecContext* spec);
  const WindowParts& namedWindow(P::IdentifierContext* name);
  void windowFrame(P::WindowFrameContext* frame, ast::Over& o);
  // NULLS FIRST (true) or NULLS LAST (false) as `item` writes it, if it does.
  static std::optional<bool> nullsFirstOf(P::OrderItemContext* item);
  // `(k IS NULL)`: the extra order key before k that puts k's NULLs where
  // NULLS FIRST or LAST asks when the order's default puts them elsewhere.
  ast::ExprPtr nullKey(P::OrderItemContext* item);
  // array_agg(x ORDER BY ...), string_agg(x, sep ORDER BY ...).
  ast::ExprPtr orderedAggregate(ast::ExprPtr call, P::AggregateOrderContext* ctx);
  // PostgreSQL's operators and spellings (see the .cpp).
  ast::ExprPtr negate(ast::ExprPtr e, antlr4::ParserRuleContext* ctx);
  ast::ExprPtr pgOperator(const std::string& op, ast::ExprPtr left, ast::ExprPtr right,
                          antlr4::ParserRuleContext* ctx);
  ast::ExprPtr quantified(const std::string& op, ast::ExprPtr left, ast::ExprPtr call,
                          antlr4::ParserRuleContext* ctx);
  static std::vector<std::string> parsePgArrayText(const std::string& text, size_t pos);
  void checkPgCatalogSchema(P::IdentifierContext* schema);
  std::vector<int64_t> typeModifiers(const std::vector<antlr4::tree::TerminalNode*>& numbers);

  // Names.
  std::string identifier(P::IdentifierContext* ctx);
  std::string anyWord(antlr4::ParserRuleContext* ctx);  // AnyWord or FieldName
  std::string unquoteIdentifier(antlr4::Token* t);

  std::string_view text_;
  const std::vector<size_t>& byteOffset_;
  antlr4::BufferedTokenStream& tokens_;
  int depth_ = 0;
  // The named windows of each SELECT being built, innermost last (by lower-case name).
  std::vector<std::map<std::string, NamedWindow>> windowScopes_;
  friend class DepthGuard;
};

}  // namespace rtsql::parser
