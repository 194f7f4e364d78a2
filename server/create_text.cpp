// See create_text.h.
#include "server/create_text.h"

#include <fmt/format.h>

#include <cctype>

#include "common/error.h"
#include "common/schema.h"
#include "parser/parser.h"

namespace rtsql {

namespace {

// The grammar's reserved words (grammar/RtSql.g4, `reserved`): a name spelled
// like one must be quoted.
bool isReservedWord(const std::string& lower) {
  for (const char* w :
       {"all", "and", "as", "between", "by", "case", "cast", "cross", "distinct", "else", "emit",
        "end", "exists", "false", "for", "from", "full", "group", "having", "in", "inner", "into",
        "is", "join", "left", "like", "limit", "not", "null", "on", "or", "order", "outer",
        "right", "select", "then", "true", "union", "when", "where", "with"}) {
    if (lower == w) return true;
  }
  return false;
}

std::string typeText(const ast::TypeName& t) {
  if (t.name == "ARRAY" && t.params.size() == 1) {
    return fmt::format("ARRAY<{}>", typeText(t.params[0]));
  }
  if (t.name == "MAP" && t.params.size() == 2)
    return fmt::format("MAP<{}, {}>", typeText(t.params[0]), typeText(t.params[1]));
  if (t.name == "STRUCT") {
    std::string out = "STRUCT<";
    for (size_t i = 0; i < t.fields.size(); ++i) {
      if (i > 0) out += ", ";
      out += sqlName(t.fields[i].first) + " " + typeText(t.fields[i].second);
    }
    return out + ">";
  }
  std::string out = t.name;
  if (!t.modifiers.empty()) {
    out += "(";
    for (size_t i = 0; i < t.modifiers.size(); ++i) {
      if (i > 0) out += ", ";
      out += std::to_string(t.modifiers[i]);
    }
    out += ")";
  }
  return out;
}

std::string columnText(const ast::ColumnDef& c) {
  return sqlName(c.name) + " " + typeText(c.type) + (c.notNull ? " NOT NULL" : "");
}

// The text of an expression of `stmt`, as written.
std::string exprText(const ast::Statement& stmt, const ast::Expr& e) {
  if (e.pos < stmt.pos || e.endPos < e.pos || e.endPos - stmt.pos > stmt.text.size()) {
    throw InternalError("expression outside its statement");
  }
  return stmt.text.substr(e.pos - stmt.pos, e.endPos - e.pos);
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i > 0 ? ", " : "") + parts[i];
  return out;
}

std::string withSuffix(const OptionList& options) {
  std::string w = withClause(options);
  return w.empty() ? w : " " + w;
}

}  // namespace

std::string sqlName(const std::string& name) {
  bool plain =
      !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  bool lower = true, upper = true;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && c != '_') plain = false;
    if (std::isupper(u)) lower = false;
    if (std::islower(u)) upper = false;
  }
  if (plain && (lower || upper) && !isReservedWord(toLower(name))) return name;
  std::string out = "\"";
  for (char c : name) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

std::string sqlString(const std::string& text) {
  // A string literal reads backslash escapes (parser/string_literals.h): a
  // backslash is written twice, as a quote is.
  std::string out = "'";
  for (char c : text) {
    out += c;
    if (c == '\'' || c == '\\') out += c;
  }
  return out + "'";
}

std::string withClause(const OptionList& options) {
  if (options.empty()) return "";
  std::string out = "WITH (";
  for (size_t i = 0; i < options.size(); ++i) {
    if (i > 0) out += ", ";
    out += sqlString(options[i].first) + " = " + sqlString(options[i].second);
  }
  return out + ")";
}

OptionList optionList(const std::vector<ast::Option>& options) {
  OptionList out;
  for (const auto& o : options) out.emplace_back(o.key, o.value);
  return out;
}

std::string createSourceText(const ast::CreateSource& stmt, const OptionList& options,
                             const std::optional<std::string>& watermark) {
  std::string out = "CREATE SOURCE " + sqlName(stmt.name);
  std::vector<std::string> elements;
  for (const auto& c : stmt.columns) elements.push_back(columnText(c));
  if (stmt.watermark) {
    elements.push_back(fmt::format("WATERMARK FOR {} AS {}", sqlName(stmt.watermark->column),
                                   watermark ? *watermark : exprText(stmt, *stmt.watermark->expr)));
  }
  if (stmt.hasColumnList || !elements.empty()) out += " (" + joined(elements) + ")";
  return out + withSuffix(options);
}

std::string createSinkText(const ast::CreateSink& stmt, const OptionList& options) {
  return "CREATE SINK " + sqlName(stmt.name) + withSuffix(options);
}

std::string createTableText(const ast::CreateTable& stmt, const OptionList& options) {
  std::string out = "CREATE TABLE " + sqlName(stmt.name);
  std::vector<std::string> elements;
  for (const auto& c : stmt.columns) elements.push_back(columnText(c));
  if (!elements.empty()) out += " (" + joined(elements) + ")";
  return out + withSuffix(options);
}

std::string createFlowText(const ast::CreateFlow& stmt,
                           const std::optional<std::string>& checkpointInterval,
                           const OptionList& options) {
  // A materialized view is a flow whose sink is its own table: its statement
  // names no sink.
  std::string out = stmt.materializedView
                        ? "CREATE MATERIALIZED VIEW " + sqlName(stmt.name)
                        : "CREATE FLOW " + sqlName(stmt.name) + " INTO " + sqlName(stmt.sink);
  if (stmt.triggerRealtime) out += " TRIGGER REALTIME";
  if (checkpointInterval) out += " CHECKPOINT INTERVAL " + sqlString(*checkpointInterval);
  return out + withSuffix(options) + " AS " + stmt.queryText;
}

ast::StatementPtr parseDefinition(const std::string& sql, ast::StatementKind kind) {
  std::vector<ast::StatementPtr> stmts = parseStatements(sql);
  if (stmts.size() != 1 || stmts.front()->kind != kind) {
    throw InternalError("a catalog definition is not the statement it should be");
  }
  return std::move(stmts.front());
}

}  // namespace rtsql
