// The parse tree -> AST walk. The grammar already decided the shape of every
// statement; what happens here is unquoting, normalising spellings (== is =,
// function and type names get one case), filling positions, and the few checks
// the grammar cannot express (one WATERMARK, `*` only where it means something).
#include "parser/ast_builder.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "common/error.h"
#include "common/schema.h"
#include "parser/comma_joins.h"

namespace rtsql::parser {

void refuseInlineTable(size_t pos) {
  throw SqlError(sqlstate::kFeatureNotSupported,
                 "Spark's inline table FROM VALUES (...) is not supported", pos,
                 "write its rows as a query: FROM (SELECT 1 AS x, 'a' AS y UNION ALL SELECT 2, "
                 "'b') AS t");
}

namespace {

using P = grammar::RtSqlParser;

// Channel the lexer puts `/*+ ... */` hints on (see RtSql.g4).
constexpr size_t kHintChannel = 2;

// ASCII case mapping, shared with the rest of rtsql.
std::string upper(std::string_view s) { return toUpper(s); }
std::string lower(std::string_view s) { return toLower(s); }

// 'it''s' -> it's (also "a""b" and `a``b` for identifiers).
std::string unquote(std::string_view quoted) {
  std::string out;
  if (quoted.size() < 2) return out;
  const char q = quoted.front();
  out.reserve(quoted.size() - 2);
  for (size_t i = 1; i + 1 < quoted.size(); ++i) {
    out.push_back(quoted[i]);
    if (quoted[i] == q && i + 2 < quoted.size() && quoted[i + 1] == q) ++i;
  }
  return out;
}

// Appends code point `cp` (at most U+10FFFF, no surrogate) in UTF-8.
void appendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// The value of a hex digit, -1 for any other character.
int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(c | 0x20);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// A '...' string's text as Spark reads it (spark.sql.parser.escapedStringLiterals
// off, its default): \n \t \r \b \0 \Z (U+001A), \uXXXX, \UXXXXXXXX and
// \ooo (octal, first digit 0 or 1) stand for their character, \% and \_ stay
// as written (LIKE's escapes), any other character after a backslash for
// itself (\' \" \\ and '\d' is d). '' is a quote, as in PostgreSQL. A
// session that keeps backslashes as written has them doubled before parsing
// (parser/string_literals.h).
std::string sparkString(std::string_view quoted) {
  std::string out;
  if (quoted.size() < 2) return out;
  std::string_view body = quoted.substr(1, quoted.size() - 2);
  if (body.find_first_of("\\'") == std::string_view::npos) return std::string(body);
  out.reserve(body.size());
  auto hexRun = [&](size_t at, size_t n) -> std::optional<uint32_t> {
    if (at + n > body.size()) return std::nullopt;
    uint32_t v = 0;
    for (size_t k = at; k < at + n; ++k) {
      const int d = hexDigit(body[k]);
      if (d < 0) return std::nullopt;
      v = v * 16 + static_cast<uint32_t>(d);
    }
    return v;
  };
  auto octal = [](char c) { return c >= '0' && c <= '7'; };
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c == '\'') {  // '' inside the string
      out.push_back('\'');
      ++i;
      continue;
    }
    if (c != '\\' || i + 1 >= body.size()) {
      out.push_back(c);
      continue;
    }
    char e = body[i + 1];
    if (e == 'u' || e == 'U') {
      const size_t n = e == 'u' ? 4 : 8;
      if (auto cp = hexRun(i + 2, n); cp && *cp <= 0x10FFFF) {
        i += 1 + n;
        // Java's strings are UTF-16: two \u escapes of a surrogate pair are
        // one character; a lone surrogate is none, written U+FFFD.
        if (*cp >= 0xD800 && *cp <= 0xDBFF && body.substr(i + 1, 2) == "\\u") {
          if (auto low = hexRun(i + 3, 4); low && *low >= 0xDC00 && *low <= 0xDFFF) {
            cp = 0x10000 + ((*cp - 0xD800) << 10) + (*low - 0xDC00);
            i += 6;
          }
        }
        appendUtf8(out, *cp >= 0xD800 && *cp <= 0xDFFF ? 0xFFFD : *cp);
        continue;
      }
    }
    if ((e == '0' || e == '1') && i + 3 < body.size() && octal(body[i + 2]) && octal(body[i + 3])) {
      appendUtf8(out, static_cast<uint32_t>((e - '0') * 64 + (body[i + 2] - '0') * 8 +
                                            (body[i + 3] - '0')));
      i += 3;
      continue;
    }
    ++i;
    switch (e) {
      case '0': out.push_back('\0'); break;
      case 'b': out.push_back('\b'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'Z': out.push_back('\x1a'); break;
      case '%': out += "\\%"; break;
      case '_': out += "\\_"; break;
      default: out.push_back(e); break;
    }
  }
  return out;
}

// An E'...' string's text: the backslash escapes of PostgreSQL (\n \t \b \f
// \r, \ooo octal, \xhh hex, \uXXXX, \UXXXXXXXX, any other character as
// itself) and '' for a quote.
std::string unescapeString(std::string_view quoted, size_t pos) {
  std::string out;
  std::string_view body = quoted.substr(2, quoted.size() - 3);  // E' ... '
  auto bad = [&] {
    return SqlError(sqlstate::kInvalidTextRepresentation, "invalid Unicode escape value", pos,
                    "\\u takes 4 hex digits and \\U 8");
  };
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c == '\'') {  // '' inside the string
      out.push_back('\'');
      ++i;
      continue;
    }
    if (c != '\\' || i + 1 >= body.size()) {
      out.push_back(c);
      continue;
    }
    char e = body[++i];
    switch (e) {
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'r': out.push_back('\r'); break;
      case 'x': {
        int v = 0, n = 0;
        while (n < 2 && i + 1 < body.size() && hexDigit(body[i + 1]) >= 0) v = v * 16 + hexDigit(body[++i]), ++n;
        if (n == 0) out.push_back('x');
        else out.push_back(static_cast<char>(v));
        break;
      }
      case 'u':
      case 'U': {
        const int want = e == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (int n = 0; n < want; ++n) {
          if (i + 1 >= body.size() || hexDigit(body[i + 1]) < 0) throw bad();
          cp = cp * 16 + static_cast<uint32_t>(hexDigit(body[++i]));
        }
        if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) throw bad();
        appendUtf8(out, cp);
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int v = e - '0';
          for (int n = 1; n < 3 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++n)
            v = v * 8 + (body[++i] - '0');
          out.push_back(static_cast<char>(v & 0xFF));
        } else {
          out.push_back(e);
        }
    }
  }
  return out;
}

// NULL, unquoted and in any case, is an array element's null.
bool iequalsNull(std::string_view s) { return iequals(s, "null"); }

// Interval units are stored singular and upper case: SECONDS -> SECOND.
std::string intervalUnit(P::IntervalUnitContext* ctx) {
  std::string u = upper(ctx->getText());
  if (u.size() > 1 && u.back() == 'S') u.pop_back();
  return u;
}

// The select item or call argument is nothing but `*` or `t.*`: the only places
// a star means something.
P::PrimaryContext* bareStar(P::ExprContext* e) {
  auto* pred = dynamic_cast<P::PredicatedContext*>(e->booleanExpr());
  if (pred == nullptr || pred->predicate() != nullptr) return nullptr;
  auto* pv = dynamic_cast<P::PrimaryValueContext*>(pred->valueExpr());
  if (pv == nullptr) return nullptr;
  P::PrimaryContext* p = pv->primary();
  if (dynamic_cast<P::StarPrimaryContext*>(p) || dynamic_cast<P::QualifiedStarPrimaryContext*>(p)) {
    return p;
  }
  return nullptr;
}

}  // namespace

// Counts recursion through expressions; see kMaxExprDepth.
class DepthGuard {
 public:
  DepthGuard(AstBuilder& b, size_t pos) : b_(b) {
    if (++b_.depth_ > kMaxExprDepth) {
      throw SqlError(sqlstate::kStatementTooComplex,
                     "statement too complex: expression nested too deeply", pos,
                     "split the expression or the statement into smaller parts");
    }
  }
  ~DepthGuard() { --b_.depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  AstBuilder& b_;
};

// ---------------------------------------------------------------- text

size_t AstBuilder::startOf(antlr4::Token* t) const {
  size_t i = t->getStartIndex();
  if (i >= byteOffset_.size()) return text_.size();
  return byteOffset_[i];
}

size_t AstBuilder::endOf(antlr4::Token* t) const {
  size_t i = t->getStopIndex() + 1;
  if (t->getType() == antlr4::Token::EOF || i >= byteOffset_.size()) return text_.size();
  return byteOffset_[i];
}

std::string_view AstBuilder::tokenText(antlr4::Token* t) const {
  size_t b = startOf(t);
  size_t e = endOf(t);
  if (e < b) e = b;
  return text_.substr(b, e - b);
}

std::string AstBuilder::sourceText(antlr4::ParserRuleContext* ctx) const {
  size_t b = startOf(ctx);
  size_t e = endOf(ctx);
  if (e < b) e = b;
  return std::string(text_.substr(b, e - b));
}

// ---------------------------------------------------------------- names

std::string AstBuilder::unquoteIdentifier(antlr4::Token* t) {
  std::string_view raw = tokenText(t);
  std::string name = unquote(raw);
  if (name.empty()) {
    throw SqlError(sqlstate::kSyntaxError, "zero-length delimited identifier", startOf(t));
  }
  return name;
}

std::string AstBuilder::identifier(P::IdentifierContext* ctx) {
  if (ctx->IDENTIFIER() != nullptr) return std::string(tokenText(ctx->IDENTIFIER()->getSymbol()));
  if (ctx->QUOTED_IDENTIFIER() != nullptr) {
    return unquoteIdentifier(ctx->QUOTED_IDENTIFIER()->getSymbol());
  }
  if (ctx->BACKQUOTED_IDENTIFIER() != nullptr) {
    return unquoteIdentifier(ctx->BACKQUOTED_IDENTIFIER()->getSymbol());
  }
  return sourceText(ctx);  // a non-reserved keyword, as written
}

std::string AstBuilder::anyWord(antlr4::ParserRuleContext* ctx) {
  P::IdentifierContext* id = nullptr;
  if (auto* w = dynamic_cast<P::AnyWordContext*>(ctx)) id = w->identifier();
  if (auto* f = dynamic_cast<P::FieldNameContext*>(ctx)) id = f->identifier();
  if (id != nullptr) return identifier(id);
  return sourceText(ctx);  // a reserved keyword, as written
}

std::string AstBuilder::dottedWord(P::DottedWordContext* ctx) {
  std::string out;
  for (auto* w : ctx->anyWord()) {
    if (!out.empty()) out.push_back('.');
    out += anyWord(w);
  }
  return out;
}

// ---------------------------------------------------------------- script

std::vector<ast::StatementPtr> AstBuilder::script(P::ScriptContext* ctx) {
  std::vector<ast::StatementPtr> out;
  for (auto* s : ctx->statement()) out.push_back(statement(s));
  return out;
}

ast::StatementPtr AstBuilder::statement(P::StatementContext* ctx) {
  ast::StatementPtr s;
  if (auto* c = ctx->createSource()) s = createSource(c);
  else if (auto* c = ctx->createTable()) s = createTable(c);
  else if (auto* c = ctx->createSink()) s = createSink(c);
  else if (auto* c = ctx->createFlow()) s = createFlow(c);
  else if (auto* c = ctx->createMaterializedView()) s = createMaterializedView(c);
  else if (auto* c = ctx->createFunction())
    s = createFunction(c);
  else if (auto* c = ctx->createProcessor())
    s = createProcessor(c);
  else if (auto* c = ctx->insertStatement()) s = insert(c);
  else if (auto* c = ctx->dropStatement()) s = drop(c);
  else if (auto* c = ctx->dropMaterializedView()) s = dropMaterializedView(c);
  else if (auto* c = ctx->flowCommand()) s = flowCommand(c);
  else if (auto* c = ctx->showStatement()) s = show(c);
  else if (auto* c = ctx->describeStatement()) s = describe(c);
  else if (auto* c = ctx->explainStatement()) s = explain(c);
  else if (auto* c = ctx->setStatement()) s = set(c);
  else if (auto* c = ctx->setTimeZoneStatement()) s = setTimeZone(c);
  else if (auto* c = ctx->userStatement()) s = user(c);
  else if (auto* c = ctx->alterStatement()) s = alter(c);
  else if (auto* c = ctx->savepointStatement()) s = savepoint(c);
  else if (auto* c = ctx->blockStatement()) s = blockStatement(c);
  else if (auto* c = ctx->query()) s = selectStatement(c);
  else throw InternalError("parser: unknown statement shape");
  s->pos = startOf(ctx);
  // A user statement's text holds a password: it is not kept (see ast.h).
  if (s->kind != ast::StatementKind::User) s->text = sourceText(ctx);
  return s;
}

// ---------------------------------------------------------------- DDL

std::vector<ast::Option> AstBuilder::withOptions(P::WithOptionsContext* ctx) {
  std::vector<ast::Option> out;
  if (ctx == nullptr) return out;
  for (auto* o : ctx->option()) {
    ast::Option opt;
    auto* key = o->optionKey();
    opt.key = key->STRING() != nullptr ? sparkString(tokenText(key->STRING()->getSymbol()))
                                       : dottedWord(key->dottedWord());
    opt.keyPos = startOf(key);
    opt.value = optionValue(o->optionValue());
    opt.valuePos = startOf(o->optionValue());
    out.push_back(std::move(opt));
  }
  return out;
}

std::string AstBuilder::optionValue(P::OptionValueContext* ctx) {
  if (ctx->STRING() != nullptr) return sparkString(tokenText(ctx->STRING()->getSymbol()));
  if (ctx->TRUE_() != nullptr) return "true";
  if (ctx->FALSE_() != nullptr) return "false";
  if (ctx->dottedWord() != nullptr) return dottedWord(ctx->dottedWord());
  antlr4::tree::TerminalNode* num =
      ctx->INTEGER_VALUE() != nullptr ? ctx->INTEGER_VALUE() : ctx->DECIMAL_VALUE();
  std::string out = ctx->MINUS() != nullptr ? "-" : "";
  out += tokenText(num->getSymbol());
  return out;
}

ast::TypeName AstBuilder::dataType(P::DataTypeContext* ctx) {
  ast::TypeName t;
  t.pos = startOf(ctx);
  if (auto* a = dynamic_cast<P::ArrayTypeContext*>(ctx)) {
    t.name = "ARRAY";
    t.params.push_back(dataType(a->dataType()));
  } else if (auto* m = dynamic_cast<P::MapTypeContext*>(ctx)) {
    t.name = "MAP";
    for (auto* p : m->dataType()) t.params.push_back(dataType(p));
  } else if (auto* s = dynamic_cast<P::StructTypeContext*>(ctx)) {
    t.name = "STRUCT";
    for (auto* f : s->structField()) t.fields.emplace_back(anyWord(f->fieldName()), dataType(f->dataType()));
  } else if (auto* pa = dynamic_cast<P::PgArrayTypeContext*>(ctx)) {
    t.name = "ARRAY";
    t.params.push_back(dataType(pa->dataType()));
  } else if (auto* q = dynamic_cast<P::QualifiedTypeContext*>(ctx)) {
    checkPgCatalogSchema(q->schema);
    t.name = upper(identifier(q->identifier(1)));
    t.modifiers = typeModifiers(q->INTEGER_VALUE());
  } else if (auto* zoned = dynamic_cast<P::TimestampZoneTypeContext*>(ctx)) {
    // WITHOUT TIME ZONE is TIMESTAMP_NTZ; WITH [LOCAL] TIME ZONE is TIMESTAMP.
    auto word = [&](P::IdentifierContext* id, const char* want) {
      if (id != nullptr && upper(identifier(id)) != want)
        throw SqlError(sqlstate::kSyntaxError,
                       fmt::format("syntax error at or near \"{}\"", identifier(id)), startOf(id))
            .withHint("write TIMESTAMP WITH TIME ZONE or TIMESTAMP WITHOUT TIME ZONE");
    };
    word(zoned->without, "WITHOUT");
    word(zoned->local, "LOCAL");
    word(zoned->timeWord, "TIME");
    word(zoned->zoneWord, "ZONE");
    if (zoned->without != nullptr && zoned->local != nullptr) word(zoned->local, "");
    t.name = zoned->without != nullptr ? "TIMESTAMP_NTZ" : "TIMESTAMP";
  } else if (auto* iv = dynamic_cast<P::IntervalTypeContext*>(ctx)) {
    // INTERVAL YEAR TO MONTH, INTERVAL DAY: the binder tells the kinds apart.
    t.name = "INTERVAL " + intervalUnit(iv->from);
    if (iv->to != nullptr) t.name += " TO " + intervalUnit(iv->to);
  } else if (auto* simple = dynamic_cast<P::SimpleTypeContext*>(ctx)) {
    t.name = upper(identifier(simple->identifier()));
    t.modifiers = typeModifiers(simple->INTEGER_VALUE());
  }
  return t;
}

std::vector<int64_t> AstBuilder::typeModifiers(
    const std::vector<antlr4::tree::TerminalNode*>& numbers) {
  std::vector<int64_t> out;
  for (auto* n : numbers) {
    int64_t v = 0;
    std::string_view digits = tokenText(n->getSymbol());
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || ptr != digits.data() + digits.size()) {
      throw SqlError(sqlstate::kNumericOutOfRange, "type modifier is out of range",
                     startOf(n->getSymbol()));
    }
    out.push_back(v);
  }
  return out;
}

ast::ColumnDef AstBuilder::columnDef(P::ColumnDefContext* ctx) {
  ast::ColumnDef c;
  c.name = identifier(ctx->identifier());
  c.pos = startOf(ctx);
  c.type = dataType(ctx->dataType());
  c.notNull = ctx->NOT() != nullptr;
  return c;
}

ast::StatementPtr AstBuilder::createSource(P::CreateSourceContext* ctx) {
  auto s = std::make_unique<ast::CreateSource>();
  s->name = identifier(ctx->name);
  s->namePos = startOf(ctx->name);
  s->ifNotExists = ctx->EXISTS() != nullptr;
  s->hasColumnList = ctx->LPAREN() != nullptr;
  for (auto* e : ctx->sourceElement()) {
    if (auto* w = e->watermarkDef()) {
      if (s->watermark) {
        throw SqlError(sqlstate::kSyntaxError, "a source can declare only one WATERMARK",
                       startOf(w));
      }
      ast::Watermark wm;
      wm.column = identifier(w->column);
      wm.pos = startOf(w);
      wm.expr = expr(w->expr());
      s->watermark = std::move(wm);
    } else {
      s->columns.push_back(columnDef(e->columnDef()));
    }
  }
  s->options = withOptions(ctx->withOptions());
  return s;
}

ast::StatementPtr AstBuilder::createTable(P::CreateTableContext* ctx) {
  auto s = std::make_unique<ast::CreateTable>();
  s->name = identifier(ctx->name);
  s->namePos = startOf(ctx->name);
  s->ifNotExists = ctx->EXISTS() != nullptr;
  for (auto* c : ctx->columnDef()) s->columns.push_back(columnDef(c));
  s->options = withOptions(ctx->withOptions());
  return s;
}

ast::StatementPtr AstBuilder::createSink(P::CreateSinkContext* ctx) {
  auto s = std::make_unique<ast::CreateSink>();
  s->name = identifier(ctx->name);
  s->namePos = startOf(ctx->name);
  s->ifNotExists = ctx->EXISTS() != nullptr;
  s->options = withOptions(ctx->withOptions());
  return s;
}

// RESET STATE of CREATE OR REPLACE FLOW or MATERIALIZED VIEW, and OR REPLACE
// against IF NOT EXISTS.
void AstBuilder::replaceClauses(P::ResetStateClauseContext* reset, ast::CreateFlow& s,
                                const char* resetWithoutReplace) {
  if (reset != nullptr) {
    s.resetState = true;
    s.resetPos = startOf(reset);
    if (!s.orReplace) throw SqlError(sqlstate::kSyntaxError, resetWithoutReplace, s.resetPos);
    for (auto* id : reset->INTEGER_VALUE()) {
      try {
        s.resetOperators.push_back(std::stoi(id->getText()));
      } catch (const std::exception&) {
        throw SqlError(sqlstate::kSyntaxError, "operator id out of range", startOf(id->getSymbol()));
      }
    }
  }
  if (s.orReplace && s.ifNotExists) {
    throw SqlError(sqlstate::kSyntaxError, "OR REPLACE and IF NOT EXISTS cannot go together",
                   s.namePos);
  }
}

ast::StatementPtr AstBuilder::createFlow(P::CreateFlowContext* ctx) {
  auto s = std::make_unique<ast::CreateFlow>();
  s->pos = startOf(ctx);
  s->text = sourceText(ctx);
  s->name = identifier(ctx->name);
  s->namePos = startOf(ctx->name);
  s->sink = identifier(ctx->sink);
  s->sinkPos = startOf(ctx->sink);
  s->ifNotExists = ctx->EXISTS() != nullptr;
  bool trigger = false;
  bool options = false;
  for (auto* clause : ctx->flowClause()) {
    auto twice = [&](const char* what) {
      throw SqlError(sqlstate::kSyntaxError, fmt::format("{} is given twice", what),
                     startOf(clause));
    };
    if (dynamic_cast<P::TriggerClauseContext*>(clause) != nullptr) {
      if (trigger) twice("TRIGGER");
      trigger = true;
      s->triggerRealtime = true;
    } else if (auto* cp = dynamic_cast<P::CheckpointClauseContext*>(clause)) {
      if (s->checkpointInterval) twice("CHECKPOINT INTERVAL");
      s->checkpointInterval = sparkString(tokenText(cp->interval));
      s->checkpointIntervalPos = startOf(cp->interval);
    } else if (auto* o = dynamic_cast<P::FlowOptionsClauseContext*>(clause)) {
      if (options) twice("WITH (...)");
      options = true;
      s->options = withOptions(o->withOptions());
    }
  }
  s->orReplace = ctx->REPLACE() != nullptr;
  replaceClauses(ctx->resetStateClause(), *s, "RESET STATE is for CREATE OR REPLACE FLOW");
  if (auto* from = ctx->fromSavepointClause()) {
    s->fromSavepoint = identifier(from->savepoint);
    s->fromSavepointPos = startOf(from->savepoint);
    if (!s->orReplace) {
      throw SqlError(sqlstate::kSyntaxError, "FROM SAVEPOINT is for CREATE OR REPLACE FLOW",
                     startOf(from));
    }
    if (s->resetState) {
      throw SqlError(sqlstate::kSyntaxError,
                     "RESET STATE and FROM SAVEPOINT cannot go together: the savepoint gives the "
                     "state",
                     s->resetPos);
    }
  }
  s->query = query(ctx->query());
  s->queryText = sourceText(ctx->query());
  s->queryPos = startOf(ctx->query());
  return s;
}

ast::StatementPtr AstBuilder::savepoint(P::SavepointStatementContext* ctx) {
  auto s = std::make_unique<ast::SavepointStatement>();
  P::IdentifierContext* flow = nullptr;
  P::IdentifierContext* name = nullptr;
  if (auto* c = dynamic_cast<P::StopWithSavepointContext*>(ctx)) {
    s->action = ast::SavepointAction::Stop;
    flow = c->flow;
    name = c->savepoint;
  } else if (auto* c = dynamic_cast<P::StartFromSavepointContext*>(ctx)) {
    s->action = ast::SavepointAction::Start;
    flow = c->flow;
    name = c->savepoint;
  } else if (auto* c = dynamic_cast<P::ShowSavepointsContext*>(ctx)) {
    s->action = ast::SavepointAction::Show;
    flow = c->flow;
  } else if (auto* c = dynamic_cast<P::DropSavepointContext*>(ctx)) {
    s->action = ast::SavepointAction::Drop;
    flow = c->flow;
    name = c->savepoint;
  }
  if (flow != nullptr) {
    s->flow = identifier(flow);
    s->flowPos = startOf(flow);
  }
  if (name != nullptr) {
    s->savepoint = identifier(name);
    s->savepointPos = startOf(name);
  }
  return s;
}

ast::StatementPtr AstBuilder::createMaterializedView(P::CreateMaterializedViewContext* ctx) {
  auto s = std::make_unique<ast::CreateFlow>();
  s->materializedView = true;
  s->pos = startOf(ctx);
  s->text = sourceText(ctx);
  s->name = identifier(ctx->name);
  s->namePos = startOf(ctx->name);
  s->sink = s->name;
  s->sinkPos = s->namePos;
  s->ifNotExists = ctx->EXISTS() != nullptr;
  bool options = false;
  for (auto* clause : ctx->flowClause()) {
    if (dynamic_cast<P::TriggerClauseContext*>(clause) != nullptr) {
      throw SqlError(sqlstate::kSyntaxError, "a materialized view takes no TRIGGER clause",
                     startOf(clause));
    } else if (auto* cp = dynamic_cast<P::CheckpointClauseContext*>(clause)) {
      if (s->checkpointInterval) {
        throw SqlError(sqlstate::kSyntaxError, "CHECKPOINT INTERVAL is given twice",
                       startOf(clause));
      }
      s->checkpointInterval = sparkString(tokenText(cp->interval));
      s->checkpointIntervalPos = startOf(cp->interval);
    } else if (auto* o = dynamic_cast<P::FlowOptionsClauseContext*>(clause)) {
      if (options) {
        throw SqlError(sqlstate::kSyntaxError, "WITH (...) is given twice", startOf(clause));
      }
      options = true;
      s->options = withOptions(o->withOptions());
    }
  }
  s->orReplace = ctx->REPLACE() != nullptr;
  replaceClauses(ctx->resetStateClause(), *s,
                 "RESET STATE is for CREATE OR REPLACE MATERIALIZED VIEW");
  s->query = query(ctx->query());
  s->queryText = sourceText(ctx->query());
  s->queryPos = startOf(ctx->query());
  return s;
}

ast::StatementPtr AstBuilder::createFunction(P::CreateFunctionContext* ctx) {
  auto s = std::make_unique<ast::CreateFunction>();
  s->name = identifier(ctx->name);
  s->namePos = startOf(ctx->name);
  s->orReplace = ctx->REPLACE() != nullptr;
  s->ifNotExists = ctx->EXISTS() != nullptr;
  if (s->orReplace && s->ifNotExists) {
    throw SqlError(sqlstate::kSyntaxError, "OR REPLACE and IF NOT EXISTS cannot be combined",
                   startOf(ctx->IF()->getSymbol()),
                   "OR REPLACE replaces an existing function; IF NOT EXISTS keeps it");
  }
  for (auto* p : ctx->functionParam()) {
    ast::FunctionParam param;
    param.name = identifier(p->identifier());
    param.pos = startOf(p);
    param.type = dataType(p->dataType());
    s->params.push_back(std::move(param));
  }
  s->returns = dataType(ctx->returnType);
  if (ctx->language) {
    s->language = toLower(identifier(ctx->language));
    s->languagePos = startOf(ctx->language);
  }
  if (ctx->VECTORIZED()) {
    s->vectorized = true;
    s->vectorizedPos = startOf(ctx->VECTORIZED()->getSymbol());
  }
  if (ctx->code) {
    const std::string_view quoted = tokenText(ctx->code);
    s->dollarQuoted = true;
    s->bodyText = std::string(quoted.substr(2, quoted.size() - 4));
    s->codePos = startOf(ctx->code) + 2;
  } else {
    s->body = expr(ctx->body);
    s->bodyText = sourceText(ctx->body);
  }
  return s;
}

ast::StatementPtr AstBuilder::createProcessor(P::CreateProcessorContext* ctx) {
  auto s = std::make_unique<ast::CreateProcessor>();
  s->name = identifier(ctx->name);
  s->namePos = startOf(ctx->name);
  s->orReplace = ctx->REPLACE() != nullptr;
  s->ifNotExists = ctx->EXISTS() != nullptr;
  if (s->orReplace && s->ifNotExists) {
    throw SqlError(sqlstate::kSyntaxError, "OR REPLACE and IF NOT EXISTS cannot be combined",
                   startOf(ctx->IF()->getSymbol()),
                   "OR REPLACE replaces an existing processor; IF NOT EXISTS keeps it");
  }
  for (auto* c : ctx->columnDef()) s->returns.push_back(columnDef(c));
  s->language = toLower(identifier(ctx->language));
  s->languagePos = startOf(ctx->language);
  const std::string_view quoted = tokenText(ctx->code);
  s->code = std::string(quoted.substr(2, quoted.size() - 4));
  s->codePos = startOf(ctx->code) + 2;
  return s;
}

// ---------------------------------------------------------------- other statements

ast::StatementPtr AstBuilder::insert(P::InsertStatementContext* ctx) {
  auto s = std::make_unique<ast::Insert>();
  s->table = identifier(ctx->table);
  s->tablePos = startOf(ctx->table);
  for (auto* id : ctx->identifier()) {
    if (id != ctx->table) s->columns.push_back(identifier(id));
  }
  for (auto* row : ctx->valuesRow()) {
    std::vector<ast::ExprPtr> values;
    for (auto* e : row->expr()) values.push_back(expr(e));
    s->rows.push_back(std::move(values));
  }
  if (ctx->query() != nullptr) s->query = query(ctx->query());
  return s;
}

namespace {
ast::ObjectKind objectKind(P::ObjectKindContext* ctx) {
  if (ctx->SINK() != nullptr) return ast::ObjectKind::Sink;
  if (ctx->TABLE() != nullptr) return ast::ObjectKind::Table;
  if (ctx->FLOW() != nullptr) return ast::ObjectKind::Flow;
  if (ctx->FUNCTION() != nullptr) return ast::ObjectKind::Function;
  if (ctx->PROCESSOR() != nullptr) return ast::ObjectKind::Processor;
  return ast::ObjectKind::Source;
}
}  // namespace

ast::StatementPtr AstBuilder::drop(P::DropStatementContext* ctx) {
  auto s = std::make_unique<ast::Drop>();
  s->object = objectKind(ctx->objectKind());
  s->name = identifier(ctx->identifier());
  s->namePos = startOf(ctx->identifier());
  s->ifExists = ctx->EXISTS() != nullptr;
  return s;
}

ast::StatementPtr AstBuilder::dropMaterializedView(P::DropMaterializedViewContext* ctx) {
  auto s = std::make_unique<ast::Drop>();
  s->object = ast::ObjectKind::Flow;
  s->materializedView = true;
  s->name = identifier(ctx->identifier());
  s->namePos = startOf(ctx->identifier());
  s->ifExists = ctx->EXISTS() != nullptr;
  return s;
}

ast::StatementPtr AstBuilder::flowCommand(P::FlowCommandContext* ctx) {
  auto s = std::make_unique<ast::FlowCommand>(ctx->STOP() != nullptr ? ast::StatementKind::StopFlow
                                                                     : ast::StatementKind::StartFlow);
  s->name = identifier(ctx->identifier());
  s->namePos = startOf(ctx->identifier());
  s->resetState = ctx->RESET() != nullptr;
  return s;
}

ast::StatementPtr AstBuilder::show(P::ShowStatementContext* ctx) {
  if (dynamic_cast<P::ShowUsersContext*>(ctx)) {
    auto u = std::make_unique<ast::UserStatement>();
    u->action = ast::UserAction::Show;
    return u;
  }
  if (auto* c = dynamic_cast<P::ShowCreateContext*>(ctx)) {
    auto sc = std::make_unique<ast::ShowCreate>();
    sc->object = objectKind(c->objectKind());
    sc->name = identifier(c->identifier());
    sc->namePos = startOf(c->identifier());
    return sc;
  }
  if (auto* c = dynamic_cast<P::ShowCreateViewContext*>(ctx)) {
    auto sc = std::make_unique<ast::ShowCreate>();
    sc->object = ast::ObjectKind::Flow;
    sc->materializedView = true;
    sc->name = identifier(c->identifier());
    sc->namePos = startOf(c->identifier());
    return sc;
  }
  auto s = std::make_unique<ast::Show>();
  if (dynamic_cast<P::ShowSourcesContext*>(ctx)) {
    s->what = ast::ShowKind::Sources;
  } else if (dynamic_cast<P::ShowSinksContext*>(ctx)) {
    s->what = ast::ShowKind::Sinks;
  } else if (dynamic_cast<P::ShowTablesContext*>(ctx)) {
    s->what = ast::ShowKind::Tables;
  } else if (dynamic_cast<P::ShowFlowsContext*>(ctx)) {
    s->what = ast::ShowKind::Flows;
  } else if (dynamic_cast<P::ShowFunctionsContext*>(ctx)) {
    s->what = ast::ShowKind::Functions;
  } else if (dynamic_cast<P::ShowUserFunctionsContext*>(ctx)) {
    s->what = ast::ShowKind::UserFunctions;
  } else if (dynamic_cast<P::ShowProcessorsContext*>(ctx)) {
    s->what = ast::ShowKind::Processors;
  } else if (dynamic_cast<P::ShowMaterializedViewsContext*>(ctx)) {
    s->what = ast::ShowKind::MaterializedViews;
  } else if (auto* p = dynamic_cast<P::ShowProgressContext*>(ctx)) {
    s->what = ast::ShowKind::Progress;
    s->name = identifier(p->identifier());
    s->namePos = startOf(p->identifier());
  } else if (auto* v = dynamic_cast<P::ShowVariableContext*>(ctx)) {
    s->what = ast::ShowKind::Variable;
    if (v->STRING() != nullptr) {
      s->name = sparkString(tokenText(v->STRING()->getSymbol()));
      s->namePos = startOf(v->STRING()->getSymbol());
    } else {
      s->name = dottedWord(v->dottedWord());
      s->namePos = startOf(v->dottedWord());
    }
  } else if (auto* w = dynamic_cast<P::ShowWordsContext*>(ctx)) {
    // SHOW TRANSACTION ISOLATION LEVEL is the setting transaction_isolation,
    // as in PostgreSQL; other phrases name no setting.
    s->what = ast::ShowKind::Variable;
    std::string phrase;
    for (auto* word : w->anyWord()) phrase += (phrase.empty() ? "" : " ") + lower(anyWord(word));
    s->name = phrase == "transaction isolation level" ? "transaction_isolation"
              : phrase == "time zone"                 ? "timezone"
                                                      : phrase;
    s->namePos = startOf(w->anyWord(0));
  }
  return s;
}

ast::StatementPtr AstBuilder::user(P::UserStatementContext* ctx) {
  auto s = std::make_unique<ast::UserStatement>();
  P::IdentifierContext* name = nullptr;
  antlr4::Token* password = nullptr;
  if (auto* c = dynamic_cast<P::CreateUserContext*>(ctx)) {
    s->action = ast::UserAction::Create;
    s->ifNotExists = c->EXISTS() != nullptr;
    name = c->name;
    password = c->password;
  } else if (auto* a = dynamic_cast<P::AlterUserContext*>(ctx)) {
    s->action = ast::UserAction::Alter;
    name = a->name;
    password = a->password;
  } else if (auto* d = dynamic_cast<P::DropUserContext*>(ctx)) {
    s->action = ast::UserAction::Drop;
    s->ifExists = d->EXISTS() != nullptr;
    name = d->name;
  } else {
    throw InternalError("parser: unknown user statement shape");
  }
  s->name = identifier(name);
  s->namePos = startOf(name);
  if (password != nullptr) {
    s->password = sparkString(tokenText(password));
    s->passwordPos = startOf(password);
  }
  return s;
}

ast::StatementPtr AstBuilder::alter(P::AlterStatementContext* ctx) {
  auto s = std::make_unique<ast::Alter>();
  auto key = [&](P::OptionKeyContext* k) {
    return k->STRING() != nullptr ? sparkString(tokenText(k->STRING()->getSymbol()))
                                  : dottedWord(k->dottedWord());
  };
  // SET (key = value, ...) and RESET (key, ...) read alike for every kind.
  auto setOptions = [&](const std::vector<P::OptionContext*>& options) {
    for (auto* o : options) {
      ast::Option opt;
      opt.key = key(o->optionKey());
      opt.keyPos = startOf(o->optionKey());
      opt.value = optionValue(o->optionValue());
      opt.valuePos = startOf(o->optionValue());
      s->options.push_back(std::move(opt));
    }
  };
  auto resetOptions = [&](const std::vector<P::OptionKeyContext*>& keys) {
    s->reset = true;
    for (auto* k : keys) {
      ast::Option opt;
      opt.key = key(k);
      opt.keyPos = startOf(k);
      opt.valuePos = opt.keyPos;
      s->options.push_back(std::move(opt));
    }
  };
  P::ObjectKindContext* kind = nullptr;
  P::IdentifierContext* name = nullptr;
  if (auto* set = dynamic_cast<P::AlterSetContext*>(ctx)) {
    kind = set->objectKind();
    name = set->name;
    setOptions(set->option());
  } else if (auto* reset = dynamic_cast<P::AlterResetContext*>(ctx)) {
    kind = reset->objectKind();
    name = reset->name;
    resetOptions(reset->optionKey());
  } else if (auto* viewSet = dynamic_cast<P::AlterViewSetContext*>(ctx)) {
    name = viewSet->name;
    s->materializedView = true;
    setOptions(viewSet->option());
  } else if (auto* viewReset = dynamic_cast<P::AlterViewResetContext*>(ctx)) {
    name = viewReset->name;
    s->materializedView = true;
    resetOptions(viewReset->optionKey());
  } else {
    throw InternalError("parser: unknown ALTER shape");
  }
  if (s->materializedView) {
    s->object = ast::ObjectKind::Flow;
    s->objectPos = startOf(ctx);
    s->name = identifier(name);
    s->namePos = startOf(name);
    return s;
  }
  s->object = objectKind(kind);
  s->objectPos = startOf(kind);
  s->name = identifier(name);
  s->namePos = startOf(name);
  return s;
}

ast::StatementPtr AstBuilder::describe(P::DescribeStatementContext* ctx) {
  auto s = std::make_unique<ast::Describe>();
  s->function = ctx->objectKind() != nullptr && ctx->objectKind()->FUNCTION() != nullptr;
  s->name = identifier(ctx->identifier());
  s->namePos = startOf(ctx->identifier());
  return s;
}

ast::StatementPtr AstBuilder::explain(P::ExplainStatementContext* ctx) {
  auto s = std::make_unique<ast::Explain>();
  if (ctx->flowName != nullptr) {
    s->flowName = identifier(ctx->flowName);
    s->flowNamePos = startOf(ctx->flowName);
  } else if (ctx->viewName != nullptr) {
    s->flowName = identifier(ctx->viewName);
    s->flowNamePos = startOf(ctx->viewName);
    s->materializedView = true;
  } else if (auto* f = ctx->createFlow()) {
    s->inner = createFlow(f);
  } else if (auto* v = ctx->createMaterializedView()) {
    s->inner = createMaterializedView(v);
  } else {
    s->inner = selectStatement(ctx->query());
    s->inner->pos = startOf(ctx->query());
    s->inner->text = sourceText(ctx->query());
  }
  return s;
}

ast::StatementPtr AstBuilder::set(P::SetStatementContext* ctx) {
  auto s = std::make_unique<ast::Set>();
  if (ctx->scope != nullptr) {
    // PostgreSQL's SET LOCAL and SET SESSION; any other word is a typo.
    const std::string scope = toUpper(std::string(ctx->scope->getText()));
    if (scope != "LOCAL" && scope != "SESSION") {
      throw SqlError(sqlstate::kSyntaxError,
                     fmt::format("syntax error at or near \"{}\"", ctx->scope->getText()),
                     startOf(ctx->scope), "SET [LOCAL | SESSION] name = value");
    }
    s->local = scope == "LOCAL";
  }
  if (ctx->key != nullptr) {
    s->key = sparkString(tokenText(ctx->key));
    s->keyPos = startOf(ctx->key);
  } else {
    s->key = dottedWord(ctx->dottedWord());
    s->keyPos = startOf(ctx->dottedWord());
  }
  s->value = optionValue(ctx->optionValue());
  // Spark's name of the session time zone is PostgreSQL's timezone.
  if (iequals(s->key, "spark.sql.session.timeZone")) s->key = "timezone";
  return s;
}

ast::StatementPtr AstBuilder::setTimeZone(P::SetTimeZoneStatementContext* ctx) {
  for (auto* word : {ctx->scope, ctx->timeWord, ctx->zoneWord}) {
    if (word == nullptr) continue;
    const std::string w = toUpper(std::string(word->getText()));
    const bool ok = word == ctx->scope ? (w == "LOCAL" || w == "SESSION")
                                       : w == (word == ctx->timeWord ? "TIME" : "ZONE");
    if (!ok)
      throw SqlError(sqlstate::kSyntaxError,
                     fmt::format("syntax error at or near \"{}\"", word->getText()), startOf(word),
                     "SET TIME ZONE 'Europe/Paris' | LOCAL | DEFAULT");
  }
  auto s = std::make_unique<ast::Set>();
  s->local = ctx->scope != nullptr && toUpper(std::string(ctx->scope->getText())) == "LOCAL";
  s->key = "timezone";
  s->keyPos = startOf(ctx->timeWord);
  s->value = optionValue(ctx->optionValue());
  // LOCAL and DEFAULT are the server's zone, UTC.
  if (ctx->optionValue()->STRING() == nullptr &&
      (iequals(s->value, "LOCAL") || iequals(s->value, "DEFAULT")))
    s->value = "UTC";
  return s;
}

ast::StatementPtr AstBuilder::blockStatement(P::BlockStatementContext* ctx) {
  auto s = std::make_unique<ast::BlockStatement>();
  auto keyword = [&](antlr4::Token* t) {
    ast::BlockWord w;
    w.text = toUpper(std::string(tokenText(t)));
    w.pos = startOf(t);
    return w;
  };
  if (auto* d = dynamic_cast<P::DeclareCursorContext*>(ctx)) {
    s->query = query(d->query());
    s->queryText = sourceText(d->query());
    s->queryPos = startOf(d->query());
  }
  // Every word before the query, in order: keywords, names and numbers.
  for (antlr4::tree::ParseTree* child : ctx->children) {
    if (auto* t = dynamic_cast<antlr4::tree::TerminalNode*>(child)) {
      if (t->getSymbol()->getType() != P::FOR) s->words.push_back(keyword(t->getSymbol()));
      continue;
    }
    ast::BlockWord word;
    P::IdentifierContext* id = dynamic_cast<P::IdentifierContext*>(child);
    auto* w = dynamic_cast<P::BlockWordContext*>(child);
    if (w != nullptr) id = w->identifier();
    if (id != nullptr) {
      word.pos = startOf(id);
      word.quoted = id->QUOTED_IDENTIFIER() != nullptr || id->BACKQUOTED_IDENTIFIER() != nullptr;
      word.text = identifier(id);
    } else if (w != nullptr) {
      word.pos = startOf(w);
      word.number = w->INTEGER_VALUE() != nullptr;
      word.text = sourceText(w);
      if (word.number) std::erase(word.text, ' ');
    } else {
      continue;  // the query
    }
    s->words.push_back(std::move(word));
  }
  return s;
}

ast::StatementPtr AstBuilder::selectStatement(P::QueryContext* ctx) {
  auto s = std::make_unique<ast::SelectStatement>();
  s->query = query(ctx);
  return s;
}

// ---------------------------------------------------------------- queries

std::unique_ptr<ast::Query> AstBuilder::query(P::QueryContext* ctx) {
  DepthGuard guard(*this, startOf(ctx));
  auto q = std::make_unique<ast::Query>();
  q->pos = startOf(ctx);
  auto unions = ctx->UNION();
  auto terms = ctx->queryTerm();
  // Where each written term's SELECTs start (a parenthesised one may bring several).
  std::vector<size_t> termStart;
  for (auto* t : terms) {
    termStart.push_back(q->terms.size());
    queryTerm(t, *q);
  }
  // UNION without ALL: the terms up to it (UNION is left-associative) as
  // SELECT DISTINCT * FROM (their UNION ALL), then the terms after it.
  std::optional<size_t> lastDistinct;
  for (size_t u = 0; u < unions.size(); ++u) {
    antlr4::Token* next = tokens_.get(unions[u]->getSymbol()->getTokenIndex() + 1);
    if (next->getType() != P::ALL) lastDistinct = u;
  }
  if (lastDistinct) {
    const size_t end = *lastDistinct + 2 < termStart.size() ? termStart[*lastDistinct + 2]
                                                            : q->terms.size();
    auto merged = std::make_unique<ast::Query>();
    merged->pos = q->pos;
    for (size_t i = 0; i < end; ++i) merged->terms.push_back(std::move(q->terms[i]));
    ast::Select distinct;
    distinct.pos = q->pos;
    distinct.distinct = true;
    ast::SelectItem all;
    all.expr = std::make_unique<ast::Expr>();
    all.expr->kind = ast::ExprKind::Star;
    all.expr->pos = q->pos;
    distinct.items.push_back(std::move(all));
    distinct.from = std::make_unique<ast::TableRef>();
    distinct.from->kind = ast::TableRef::Kind::Subquery;
    distinct.from->pos = q->pos;
    distinct.from->alias = "_union";
    distinct.from->subquery = std::move(merged);
    std::vector<ast::Select> rest;
    rest.push_back(std::move(distinct));
    for (size_t i = end; i < q->terms.size(); ++i) rest.push_back(std::move(q->terms[i]));
    q->terms = std::move(rest);
  }
  for (auto* o : ctx->orderItem()) {
    ast::OrderItem item;
    item.expr = expr(o->expr());
    item.descending = o->DESC() != nullptr;
    item.nullsFirst = nullsFirstOf(o);
    q->orderBy.push_back(std::move(item));
  }
  if (ctx->limit != nullptr) {
    std::string_view digits = tokenText(ctx->limit);
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || ptr != digits.data() + digits.size()) {
      throw SqlError(sqlstate::kNumericOutOfRange, "LIMIT value is out of range",
                     startOf(ctx->limit));
    }
    q->limit = v;
  }
  if (ctx->offset != nullptr) {
    std::string_view digits = tokenText(ctx->offset);
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || ptr != digits.data() + digits.size()) {
      throw SqlError(sqlstate::kNumericOutOfRange, "OFFSET value is out of range",
                     startOf(ctx->offset));
    }
    q->offset = v;
    q->offsetPos = startOf(ctx->offset);
  }
  return q;
}

void AstBuilder::queryTerm(P::QueryTermContext* ctx, ast::Query& into) {
  if (auto* core = ctx->selectCore()) {
    into.terms.push_back(selectCore(core));
    return;
  }
  // A parenthesised query: its terms join the outer union. Its own ORDER BY and
  // LIMIT only make sense when it is the whole query, `(SELECT ... LIMIT 5)`.
  auto* parent = dynamic_cast<P::QueryContext*>(ctx->parent);
  std::unique_ptr<ast::Query> inner = query(ctx->query());
  if (!inner->orderBy.empty() || inner->limit || inner->offset) {
    bool alone = parent != nullptr && parent->queryTerm().size() == 1 &&
                 parent->orderItem().empty() && parent->limit == nullptr &&
                 parent->offset == nullptr;
    if (!alone) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "ORDER BY or LIMIT inside one branch of UNION ALL is not supported",
                     startOf(ctx));
    }
    into.orderBy = std::move(inner->orderBy);
    into.limit = inner->limit;
    into.offset = inner->offset;
    into.offsetPos = inner->offsetPos;
  }
  for (auto& t : inner->terms) into.terms.push_back(std::move(t));
}

std::vector<ast::Hint> AstBuilder::hints(antlr4::Token* selectToken) {
  std::vector<ast::Hint> out;
  for (antlr4::Token* t : tokens_.getHiddenTokensToRight(selectToken->getTokenIndex(), kHintChannel)) {
    // The hint body is a comma-separated list of NAME or NAME(arg, ...), where
    // an arg is a word or a quoted name. It is small enough to read by hand.
    const std::string_view body = tokenText(t);
    const size_t base = startOf(t);
    size_t i = 3;                      // past "/*+"
    const size_t end = body.size() - 2;  // before "*/"
    auto bad = [&](size_t at) {
      std::string near(body.substr(at, std::min<size_t>(20, end - std::min(at, end))));
      throw SqlError(sqlstate::kSyntaxError,
                     near.empty() ? std::string("syntax error in hint")
                                  : fmt::format("syntax error in hint at or near \"{}\"", near),
                     base + at);
    };
    auto skipSpace = [&] {
      while (i < end && std::isspace(static_cast<unsigned char>(body[i]))) ++i;
    };
    auto word = [&]() -> std::string {
      skipSpace();
      if (i < end && (body[i] == '"' || body[i] == '`')) {
        const char q = body[i];
        size_t j = i + 1;
        while (j < end && body[j] != q) ++j;
        if (j >= end) bad(i);
        std::string w(body.substr(i + 1, j - i - 1));
        i = j + 1;
        return w;
      }
      size_t j = i;
      while (j < end && (std::isalnum(static_cast<unsigned char>(body[j])) || body[j] == '_' ||
                         body[j] == '.' || static_cast<unsigned char>(body[j]) >= 0x80)) {
        ++j;
      }
      if (j == i) bad(i);
      std::string w(body.substr(i, j - i));
      i = j;
      return w;
    };
    skipSpace();
    while (i < end) {
      ast::Hint h;
      skipSpace();
      h.pos = base + i;
      h.name = upper(word());
      skipSpace();
      if (i < end && body[i] == '(') {
        ++i;
        skipSpace();
        if (i < end && body[i] == ')') {
          ++i;
        } else {
          for (;;) {
            h.args.push_back(word());
            skipSpace();
            if (i < end && body[i] == ',') {
              ++i;
              continue;
            }
            if (i < end && body[i] == ')') {
              ++i;
              break;
            }
            bad(i);
          }
        }
      }
      out.push_back(std::move(h));
      skipSpace();
      if (i < end && body[i] == ',') ++i;
      skipSpace();
    }
  }
  return out;
}

ast::Select AstBuilder::selectCore(P::SelectCoreContext* ctx) {
  ast::Select s;
  s.pos = startOf(ctx);
  WindowScope windows(*this, ctx->windowClause());
  s.hints = hints(ctx->SELECT()->getSymbol());
  if (auto* q = ctx->setQuantifier()) {
    if (q->DISTINCT() != nullptr) {
      if (q->ON() != nullptr) {
        for (auto* e : q->expr()) s.distinctOn.push_back(expr(e));
        s.withinWatermark = q->WITHIN() != nullptr;
      } else {
        s.distinct = true;
      }
    }
  }
  for (auto* item : ctx->selectItem()) {
    ast::SelectItem si;
    if (P::PrimaryContext* star = bareStar(item->expr())) {
      si.expr = newExpr(ast::ExprKind::Star, star);
      if (auto* qs = dynamic_cast<P::QualifiedStarPrimaryContext*>(star)) {
        si.expr->parts.push_back(identifier(qs->identifier()));
        for (auto* f : qs->fieldName()) si.expr->parts.push_back(anyWord(f));
      }
      if (item->anyWord() != nullptr || item->identifier() != nullptr) {
        throw SqlError(sqlstate::kSyntaxError, "a * select item cannot have an alias",
                       startOf(item));
      }
    } else {
      si.expr = expr(item->expr());
    }
    if (item->anyWord() != nullptr) si.alias = anyWord(item->anyWord());
    if (item->identifier() != nullptr) si.alias = identifier(item->identifier());
    si.text = sourceText(item->expr());
    s.items.push_back(std::move(si));
  }
  if (ctx->where != nullptr) s.where = expr(ctx->where);
  // FROM a, b WHERE cond is the inner join a JOIN b ON cond (comma_joins.h).
  std::vector<ast::TableRefPtr> relations;
  for (auto* r : ctx->relation()) relations.push_back(relation(r));
  if (!relations.empty()) {
    bool star = false;
    for (const ast::SelectItem& item : s.items)
      star = star || (item.expr->kind == ast::ExprKind::Star && item.expr->parts.empty());
    s.from = ast::joinCommaRelations(std::move(relations), s.where, star);
  }
  if (ctx->GROUP() != nullptr) {
    for (auto* e : ctx->expr()) {
      if (e != ctx->where && e != ctx->having) s.groupBy.push_back(expr(e));
    }
  }
  if (ctx->having != nullptr) s.having = expr(ctx->having);
  s.emitOnWindowClose = ctx->EMIT() != nullptr;
  return s;
}

ast::TableRefPtr AstBuilder::relation(P::RelationContext* ctx) {
  DepthGuard guard(*this, startOf(ctx));
  ast::TableRefPtr left = relationPrimary(ctx->relationPrimary());
  for (auto* part : ctx->joinPart()) {
    auto join = std::make_unique<ast::TableRef>();
    join->kind = ast::TableRef::Kind::Join;
    join->pos = startOf(part);
    if (part->CROSS() != nullptr) {
      join->joinType = ast::JoinType::Cross;
    } else {
      auto* jt = part->joinType();
      if (jt->LEFT() != nullptr) join->joinType = ast::JoinType::Left;
      else if (jt->RIGHT() != nullptr) join->joinType = ast::JoinType::Right;
      else if (jt->FULL() != nullptr) join->joinType = ast::JoinType::Full;
      else join->joinType = ast::JoinType::Inner;
    }
    join->left = std::move(left);
    join->right = relationPrimary(part->relationPrimary());
    if (part->expr() != nullptr) join->on = expr(part->expr());
    left = std::move(join);
  }
  return left;
}

ast::TableRefPtr AstBuilder::relationPrimary(P::RelationPrimaryContext* ctx) {
  auto aliasOf = [&](P::TableAliasContext* a) -> std::string {
    if (a == nullptr) return {};
    if (a->anyWord() != nullptr) return anyWord(a->anyWord());
    return identifier(a->identifier());
  };
  if (auto* n = dynamic_cast<P::NamedRelationContext*>(ctx)) {
    auto t = std::make_unique<ast::TableRef>();
    t->kind = ast::TableRef::Kind::Named;
    t->pos = startOf(ctx);
    t->name = identifier(n->identifier());
    t->alias = aliasOf(n->tableAlias());
    if (auto* range = n->offsetRange()) {
      t->offsetRange = true;
      t->fromOffsets = sparkString(tokenText(range->from));
      t->toOffsets = sparkString(tokenText(range->to));
      t->offsetRangePos = startOf(range);
      t->fromOffsetsPos = startOf(range->from);
      t->toOffsetsPos = startOf(range->to);
    }
    return t;
  }
  if (auto* q = dynamic_cast<P::QualifiedRelationContext*>(ctx)) {
    auto t = std::make_unique<ast::TableRef>();
    t->kind = ast::TableRef::Kind::Named;
    t->pos = startOf(ctx);
    // PostgreSQL's catalog keeps its schema in the name the planner resolves
    // (pg_catalog.pg_class, information_schema.tables); rtsql's own objects
    // are in public, which names them as they are.
    const std::string schema = lower(identifier(q->schema));
    t->name = anyWord(q->name);
    if (schema == "pg_catalog" || schema == "information_schema") {
      t->name = schema + "." + t->name;
    } else if (schema != "public") {
      throw SqlError(sqlstate::kUndefinedObject, fmt::format("schema \"{}\" does not exist", schema),
                     startOf(q->schema),
                     "rtsql's objects are in public; PostgreSQL's catalog in pg_catalog and "
                     "information_schema");
    }
    t->alias = aliasOf(q->tableAlias());
    return t;
  }
  if (auto* sq = dynamic_cast<P::SubqueryRelationContext*>(ctx)) {
    auto t = std::make_unique<ast::TableRef>();
    t->kind = ast::TableRef::Kind::Subquery;
    t->pos = startOf(ctx);
    t->subquery = query(sq->query());
    t->alias = aliasOf(sq->tableAlias());
    return t;
  }
  if (auto* tr = dynamic_cast<P::TransformRelationContext*>(ctx)) {
    auto t = std::make_unique<ast::TableRef>();
    t->kind = ast::TableRef::Kind::Transform;
    t->pos = startOf(ctx);
    t->left = relationPrimary(tr->input);
    for (auto* e : tr->expr()) t->partitionBy.push_back(expr(e));
    t->processor = identifier(tr->processor);
    t->processorPos = startOf(tr->processor);
    t->options = withOptions(tr->withOptions());
    t->alias = aliasOf(tr->tableAlias());
    return t;
  }
  if (auto* fr = dynamic_cast<P::FunctionRelationContext*>(ctx)) {
    auto t = std::make_unique<ast::TableRef>();
    t->kind = ast::TableRef::Kind::Named;
    t->pos = startOf(ctx);
    // pg_catalog.unnest is unnest: the functions are PostgreSQL's own.
    if (fr->fschema != nullptr) {
      const std::string schema = lower(identifier(fr->fschema));
      if (schema != "pg_catalog" && schema != "public") {
        throw SqlError(sqlstate::kUndefinedObject,
                       fmt::format("schema \"{}\" does not exist", schema), startOf(fr->fschema));
      }
    }
    auto call = newExpr(ast::ExprKind::Call, ctx);
    call->name = lower(identifier(fr->fname));
    if (fr->fschema == nullptr && call->name == "values") refuseInlineTable(startOf(ctx));
    for (auto* e : fr->expr()) call->args.push_back(expr(e));
    // A set-returning function in FROM is a named relation whose `on` holds
    // its call (`on` is a join's otherwise): the function's name is the
    // relation's, the alias names the relation and its one column.
    t->name = call->name;
    t->alias = aliasOf(fr->tableAlias());
    t->on = std::move(call);
    return t;
  }
  auto* nested = dynamic_cast<P::NestedRelationContext*>(ctx);
  return relation(nested->relation());
}

// ---------------------------------------------------------------- expressions

ast::ExprPtr AstBuilder::newExpr(ast::ExprKind kind, antlr4::ParserRuleContext* ctx) {
  auto e = std::make_unique<ast::Expr>();
  e->kind = kind;
  e->pos = startOf(ctx);
  e->endPos = endOf(ctx);
  return e;
}

ast::ExprPtr AstBuilder::expr(P::ExprContext* ctx) {
  if (auto* l = ctx->lambda()) return lambda(l);
  return booleanExpr(ctx->booleanExpr());
}

// A lambda is a call of `->`: the parameters' names in `parts`, the body its
// one argument. Walks over calls (expr_walker.h) then reach the body as they
// reach any argument; the binder takes it apart (planner/lambda_binder.cpp).
ast::ExprPtr AstBuilder::lambda(P::LambdaContext* ctx) {
  auto e = newExpr(ast::ExprKind::Call, ctx);
  e->name = "->";
  for (auto* p : ctx->params) e->parts.push_back(identifier(p));
  e->args.push_back(expr(ctx->body));
  return e;
}

ast::ExprPtr AstBuilder::orderedAggregate(ast::ExprPtr call, P::AggregateOrderContext* ctx) {
  const bool stringAgg = call->name == "string_agg" || call->name == "listagg";
  if (call->name != "array_agg" && call->name != "collect_list" && !stringAgg) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("ORDER BY inside {}() is not supported", call->name), startOf(ctx))
        .withHint("array_agg(x ORDER BY k) and string_agg(x, sep ORDER BY k) take one");
  }
  if (call->distinct || call->over) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("ORDER BY inside {}() with {} is not supported", call->name,
                               call->distinct ? "DISTINCT" : "OVER"),
                   startOf(ctx));
  }
  if (call->args.empty() || call->args.size() > (stringAgg ? 2u : 1u)) {
    return call;  // the binder says what is wrong with the arguments
  }
  // f(x ORDER BY k1, k2 DESC) is _ordered_array_agg(array_agg(struct(k1, k2,
  // x)), 'AD'): the rows collected with their keys, then sorted by them
  // (common/functions/nested.cpp); string_agg joins the sorted values.
  auto keyed = newExpr(ast::ExprKind::Call, ctx);
  keyed->name = "struct";
  std::string directions;
  for (auto* item : ctx->orderItem()) {
    // The sort's default is PostgreSQL's, NULL last ascending.
    const bool descending = item->DESC() != nullptr;
    if (const auto first = nullsFirstOf(item); first && *first != descending) {
      keyed->args.push_back(nullKey(item));
      directions += *first ? 'D' : 'A';
    }
    keyed->args.push_back(expr(item->expr()));
    directions += descending ? 'D' : 'A';
  }
  keyed->args.push_back(std::move(call->args[0]));
  ast::ExprPtr separator = call->args.size() == 2 ? std::move(call->args[1]) : nullptr;
  call->name = "array_agg";
  call->args.clear();
  call->args.push_back(std::move(keyed));
  auto sorted = newExpr(ast::ExprKind::Call, ctx);
  sorted->pos = call->pos;
  sorted->name = "_ordered_array_agg";
  sorted->args.push_back(std::move(call));
  auto dirs = newExpr(ast::ExprKind::Literal, ctx);
  dirs->literal.kind = ast::LiteralKind::String;
  dirs->literal.text = directions;
  sorted->args.push_back(std::move(dirs));
  if (!separator) return sorted;
  auto joined = newExpr(ast::ExprKind::Call, ctx);
  joined->pos = sorted->pos;
  joined->name = "array_join";
  joined->args.push_back(std::move(sorted));
  joined->args.push_back(std::move(separator));
  return joined;
}

std::optional<bool> AstBuilder::nullsFirstOf(P::OrderItemContext* item) {
  if (item->nullOrder == nullptr) return std::nullopt;
  return item->nullOrder->getType() == P::FIRST;
}

ast::ExprPtr AstBuilder::nullKey(P::OrderItemContext* item) {
  auto e = newExpr(ast::ExprKind::IsNull, item);
  e->args.push_back(expr(item->expr()));
  return e;
}

std::shared_ptr<ast::Over> AstBuilder::over(P::OverClauseContext* ctx) {
  auto o = std::make_shared<ast::Over>();
  o->pos = startOf(ctx);
  const WindowParts parts = windowParts(ctx->windowSpec());
  for (auto* p : parts.partition) o->partitionBy.push_back(expr(p));
  for (auto* item : parts.order) {
    ast::OrderItem oi;
    oi.expr = expr(item->expr());
    oi.descending = item->DESC() != nullptr;
    // A window's default is Spark's, NULL first ascending and last
    // descending; the other placement orders by `(k IS NULL)` first.
    if (const auto first = nullsFirstOf(item); first && *first == oi.descending) {
      ast::OrderItem isNull;
      isNull.expr = nullKey(item);
      isNull.descending = *first;
      o->orderBy.push_back(std::move(isNull));
    }
    o->orderBy.push_back(std::move(oi));
  }
  if (auto* frame = parts.frame) {
    o->hasFrame = true;
    o->framePos = startOf(frame);
    if (frame->unit != nullptr) {
      windowFrame(frame, *o);
      return o;
    }
    auto* start = frame->frameStart();
    if (start->INTEGER_VALUE() != nullptr) {
      std::string_view digits = tokenText(start->INTEGER_VALUE()->getSymbol());
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (ec != std::errc() || ptr != digits.data() + digits.size() || v > 1'000'000) {
        throw SqlError(
            sqlstate::kInvalidParameterValue, "ROWS ... PRECEDING takes at most 1000000 rows",
            startOf(start),
            "a window of more rows keeps them all in state; aggregate over time instead");
      }
      o->precedingRows = v;
      o->lower = ast::Over::Bound::Preceding;
      o->lowerOffset = v;
    } else if (start->CURRENT() != nullptr) {
      o->precedingRows = 0;
      o->lower = ast::Over::Bound::CurrentRow;
    }
  }
  return o;
}

// A frame other than the flows' `ROWS [BETWEEN] bound [AND CURRENT ROW]`:
// RANGE, or a bound after the current row. Bounded queries compute it; a flow
// refuses it when it binds (flowFrame is false).
void AstBuilder::windowFrame(P::WindowFrameContext* frame, ast::Over& o) {
  o.rangeFrame = frame->unit->getType() == P::RANGE;
  o.flowFrame = false;
  auto offset = [this](antlr4::tree::TerminalNode* n) {
    std::string_view digits = tokenText(n->getSymbol());
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || ptr != digits.data() + digits.size() || v > (int64_t{1} << 53)) {
      throw SqlError(sqlstate::kInvalidParameterValue, "a window frame's offset is too large",
                     startOf(n->getSymbol()));
    }
    return v;
  };
  if (auto* start = frame->frameStart()) {
    // RANGE bound: from the bound to the current row.
    o.upper = ast::Over::Bound::CurrentRow;
    if (start->INTEGER_VALUE() != nullptr) {
      o.lower = ast::Over::Bound::Preceding;
      o.lowerOffset = offset(start->INTEGER_VALUE());
    } else {
      o.lower = start->CURRENT() != nullptr ? ast::Over::Bound::CurrentRow
                                            : ast::Over::Bound::UnboundedPreceding;
    }
    return;
  }
  auto bound = [&](P::FrameBoundContext* b, ast::Over::Bound& kind, int64_t& n) {
    const bool following = b->FOLLOWING() != nullptr;
    if (b->CURRENT() != nullptr) {
      kind = ast::Over::Bound::CurrentRow;
    } else if (b->UNBOUNDED() != nullptr) {
      kind = following ? ast::Over::Bound::UnboundedFollowing
                       : ast::Over::Bound::UnboundedPreceding;
    } else {
      kind = following ? ast::Over::Bound::Following : ast::Over::Bound::Preceding;
      n = offset(b->INTEGER_VALUE());
    }
  };
  bound(frame->lower, o.lower, o.lowerOffset);
  bound(frame->upper, o.upper, o.upperOffset);
  if (o.lower == ast::Over::Bound::UnboundedFollowing) {
    throw SqlError(sqlstate::kSyntaxError, "a window frame cannot start at UNBOUNDED FOLLOWING",
                   startOf(frame->lower));
  }
  if (o.upper == ast::Over::Bound::UnboundedPreceding) {
    throw SqlError(sqlstate::kSyntaxError, "a window frame cannot end at UNBOUNDED PRECEDING",
                   startOf(frame->upper));
  }
  // As Spark: the lower bound may not come after the upper one.
  auto position = [](ast::Over::Bound k, int64_t n) -> int64_t {
    switch (k) {
      case ast::Over::Bound::Preceding: return -n;
      case ast::Over::Bound::Following: return n;
      case ast::Over::Bound::CurrentRow: return 0;
      default: return 0;
    }
  };
  const bool lowerFixed = o.lower != ast::Over::Bound::UnboundedPreceding;
  const bool upperFixed = o.upper != ast::Over::Bound::UnboundedFollowing;
  if (lowerFixed && upperFixed &&
      position(o.lower, o.lowerOffset) > position(o.upper, o.upperOffset)) {
    throw SqlError(sqlstate::kSyntaxError,
                   "a window frame's lower bound comes after its upper bound", startOf(frame))
        .withHint("write the earlier bound first: BETWEEN 2 PRECEDING AND 1 PRECEDING");
  }
}

ast::ExprPtr AstBuilder::booleanExpr(P::BooleanExprContext* ctx) {
  DepthGuard guard(*this, startOf(ctx));
  if (auto* n = dynamic_cast<P::NotExprContext*>(ctx)) {
    auto e = newExpr(ast::ExprKind::Unary, ctx);
    e->op = "NOT";
    e->args.push_back(booleanExpr(n->booleanExpr()));
    return e;
  }
  if (auto* a = dynamic_cast<P::AndExprContext*>(ctx)) {
    auto e = newExpr(ast::ExprKind::Binary, ctx);
    e->op = "AND";
    e->args.push_back(booleanExpr(a->booleanExpr(0)));
    e->args.push_back(booleanExpr(a->booleanExpr(1)));
    return e;
  }
  if (auto* o = dynamic_cast<P::OrExprContext*>(ctx)) {
    auto e = newExpr(ast::ExprKind::Binary, ctx);
    e->op = "OR";
    e->args.push_back(booleanExpr(o->booleanExpr(0)));
    e->args.push_back(booleanExpr(o->booleanExpr(1)));
    return e;
  }
  auto* p = dynamic_cast<P::PredicatedContext*>(ctx);
  ast::ExprPtr base = valueExpr(p->valueExpr());
  P::PredicateContext* pred = p->predicate();
  if (pred == nullptr) return base;
  ast::ExprPtr e;
  if (auto* b = dynamic_cast<P::BetweenPredicateContext*>(pred)) {
    e = newExpr(ast::ExprKind::Between, ctx);
    e->negated = b->NOT() != nullptr;
    e->args.push_back(std::move(base));
    e->args.push_back(valueExpr(b->lower));
    e->args.push_back(valueExpr(b->upper));
  } else if (auto* sq = dynamic_cast<P::InSubqueryPredicateContext*>(pred)) {
    e = newExpr(ast::ExprKind::InSubquery, ctx);
    e->negated = sq->NOT() != nullptr;
    e->args.push_back(std::move(base));
    e->subquery = query(sq->query());
  } else if (auto* in = dynamic_cast<P::InPredicateContext*>(pred)) {
    e = newExpr(ast::ExprKind::In, ctx);
    e->negated = in->NOT() != nullptr;
    e->args.push_back(std::move(base));
    for (auto* x : in->expr()) e->args.push_back(expr(x));
  } else if (auto* l = dynamic_cast<P::LikePredicateContext*>(pred)) {
    e = newExpr(ast::ExprKind::Like, ctx);
    e->negated = l->NOT() != nullptr;
    e->args.push_back(std::move(base));
    if (l->escape != nullptr) {
      // x LIKE p ESCAPE c is x LIKE like_escape(p, c): the pattern rewritten
      // to LIKE's own escape, the backslash, as PostgreSQL's like_escape does.
      auto pattern = newExpr(ast::ExprKind::Call, l->pattern);
      pattern->name = "like_escape";
      pattern->args.push_back(valueExpr(l->pattern));
      pattern->args.push_back(valueExpr(l->escape));
      e->args.push_back(std::move(pattern));
    } else {
      e->args.push_back(valueExpr(l->pattern));
    }
  } else if (auto* r = dynamic_cast<P::RlikePredicateContext*>(pred)) {
    // x RLIKE p is rlike(x, p), as in Spark; NOT RLIKE negates the call.
    e = newExpr(ast::ExprKind::Call, ctx);
    e->name = "rlike";
    e->args.push_back(std::move(base));
    e->args.push_back(valueExpr(r->pattern));
    if (r->NOT() != nullptr) {
      auto n = newExpr(ast::ExprKind::Unary, ctx);
      n->op = "NOT";
      n->args.push_back(std::move(e));
      e = std::move(n);
    }
  } else if (auto* d = dynamic_cast<P::NullPredicateContext*>(pred);
             d != nullptr && d->DISTINCT() != nullptr) {
    // a IS NOT DISTINCT FROM b is equal_null(a, b): true when both are NULL;
    // IS DISTINCT FROM negates it.
    e = newExpr(ast::ExprKind::Call, ctx);
    e->name = "equal_null";
    e->args.push_back(std::move(base));
    e->args.push_back(valueExpr(d->right));
    if (d->NOT() == nullptr) e = negate(std::move(e), ctx);
  } else {
    auto* n = dynamic_cast<P::NullPredicateContext*>(pred);
    e = newExpr(ast::ExprKind::IsNull, ctx);
    e->negated = n->NOT() != nullptr;
    e->args.push_back(std::move(base));
  }
  return e;
}

ast::ExprPtr AstBuilder::valueExpr(P::ValueExprContext* ctx) {
  DepthGuard guard(*this, startOf(ctx));
  if (auto* p = dynamic_cast<P::PrimaryValueContext*>(ctx)) return primary(p->primary());
  if (auto* u = dynamic_cast<P::UnaryValueContext*>(ctx)) {
    ast::ExprPtr operand = valueExpr(u->valueExpr());
    const bool minus = u->op->getType() == P::MINUS;
    // A minus sign directly on a number is part of the literal, so that
    // -9223372036854775808 is one BIGINT and VALUES (-1) needs no folding.
    if (minus && operand->kind == ast::ExprKind::Literal &&
        (operand->literal.kind == ast::LiteralKind::Integer ||
         operand->literal.kind == ast::LiteralKind::Decimal) &&
        !operand->literal.text.starts_with('-')) {
      operand->literal.text.insert(0, "-");
      operand->pos = startOf(ctx);
      operand->endPos = endOf(ctx);
      return operand;
    }
    auto e = newExpr(ast::ExprKind::Unary, ctx);
    e->op = minus ? "-" : std::string(tokenText(u->op));
    e->args.push_back(std::move(operand));
    return e;
  }
  if (auto* r = dynamic_cast<P::RegexValueContext*>(ctx)) {
    return pgOperator(std::string(tokenText(r->op)), valueExpr(r->valueExpr(0)),
                      valueExpr(r->valueExpr(1)), ctx);
  }
  if (auto* o = dynamic_cast<P::OperatorValueContext*>(ctx)) {
    if (o->schema != nullptr) checkPgCatalogSchema(o->schema);
    return pgOperator(sourceText(o->pgOperator()), valueExpr(o->valueExpr(0)),
                      valueExpr(o->valueExpr(1)), ctx);
  }
  if (auto* all = dynamic_cast<P::AllValueContext*>(ctx)) {
    auto call = newExpr(ast::ExprKind::Call, ctx);
    call->name = "all";
    call->args.push_back(expr(all->expr()));
    const size_t type = all->op->getType();
    std::string op = type == P::EQ2 ? "=" : type == P::NEQ2 ? "<>" : std::string(tokenText(all->op));
    return quantified(op, valueExpr(all->valueExpr()), std::move(call), ctx);
  }
  auto* b = dynamic_cast<P::BinaryValueContext*>(ctx);
  std::string op;
  switch (b->op->getType()) {
    case P::EQ2: op = "="; break;
    case P::NEQ2: op = "<>"; break;
    case P::NSEQ: {
      // a <=> b is Spark's null-safe equality, the function equal_null.
      auto call = newExpr(ast::ExprKind::Call, ctx);
      call->name = "equal_null";
      call->args.push_back(valueExpr(b->valueExpr(0)));
      call->args.push_back(valueExpr(b->valueExpr(1)));
      return call;
    }
    default: op = std::string(tokenText(b->op)); break;
  }
  return pgOperator(op, valueExpr(b->valueExpr(0)), valueExpr(b->valueExpr(1)), ctx);
}

ast::ExprPtr AstBuilder::negate(ast::ExprPtr e, antlr4::ParserRuleContext* ctx) {
  auto n = newExpr(ast::ExprKind::Unary, ctx);
  n->op = "NOT";
  n->args.push_back(std::move(e));
  return n;
}

void AstBuilder::checkPgCatalogSchema(P::IdentifierContext* schema) {
  std::string name = lower(identifier(schema));
  if (name != "pg_catalog" && name != "information_schema") {
    throw SqlError(sqlstate::kUndefinedObject, fmt::format("schema \"{}\" does not exist", name),
                   startOf(schema), "PostgreSQL's functions, types and operators are in pg_catalog");
  }
}

// A binary operator: the arithmetic and comparison ones as written, and
// PostgreSQL's on top: `~` (matches, anywhere, as RLIKE does), `~*` (the
// same ignoring case), `!~` and `!~*` (do not match), and a comparison with
// ANY (...) or ALL (...).
ast::ExprPtr AstBuilder::pgOperator(const std::string& op, ast::ExprPtr left, ast::ExprPtr right,
                                    antlr4::ParserRuleContext* ctx) {
  if (op == "~" || op == "!~" || op == "~*" || op == "!~*") {
    auto e = newExpr(ast::ExprKind::Call, ctx);
    e->name = "rlike";
    e->args.push_back(std::move(left));
    if (op.ends_with('*')) {
      // (?i) turns the whole pattern case-insensitive, as ~* is.
      auto flag = newExpr(ast::ExprKind::Literal, ctx);
      flag->literal.kind = ast::LiteralKind::String;
      flag->literal.text = "(?i)";
      flag->pos = right->pos;
      auto pattern = newExpr(ast::ExprKind::Call, ctx);
      pattern->pos = right->pos;
      pattern->name = "concat";
      pattern->args.push_back(std::move(flag));
      pattern->args.push_back(std::move(right));
      right = std::move(pattern);
    }
    e->args.push_back(std::move(right));
    return op.starts_with('!') ? negate(std::move(e), ctx) : std::move(e);
  }
  if (right->kind == ast::ExprKind::Call && right->args.size() == 1 && !right->star &&
      !right->distinct && !right->over && !right->filter &&
      (right->name == "any" || right->name == "some" || right->name == "all")) {
    return quantified(op, std::move(left), std::move(right), ctx);
  }
  auto e = newExpr(ast::ExprKind::Binary, ctx);
  e->op = op;
  e->args.push_back(std::move(left));
  e->args.push_back(std::move(right));
  return e;
}

// `x = ANY (array)` and `x <> ALL (array)`: over ARRAY[...] (or array(...)), or a PostgreSQL
// array literal ('{a,b}', as a driver sends a list parameter) they are
// x [NOT] IN (...), with IN's NULL rules, which are PostgreSQL's for these;
// over any other array, [NOT] array_contains(array, x).
ast::ExprPtr AstBuilder::quantified(const std::string& op, ast::ExprPtr left, ast::ExprPtr call,
                                    antlr4::ParserRuleContext* ctx) {
  const bool any = call->name != "all";
  if (!((any && op == "=") || (!any && op == "<>"))) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("{} {}(array) is not supported", op, upper(call->name)), call->pos,
                   "= ANY (array) and <> ALL (array) are");
  }
  ast::ExprPtr array = std::move(call->args[0]);
  std::vector<ast::ExprPtr> items;
  bool listed = false;
  if (array->kind == ast::ExprKind::Call && array->name == "array" && !array->star) {
    items = std::move(array->args);
    listed = true;
  } else if (array->kind == ast::ExprKind::Literal && array->literal.kind == ast::LiteralKind::String) {
    for (std::string& item : parsePgArrayText(array->literal.text, array->pos)) {
      auto lit = newExpr(ast::ExprKind::Literal, ctx);
      lit->pos = array->pos;
      lit->literal.kind = ast::LiteralKind::String;
      lit->literal.text = std::move(item);
      items.push_back(std::move(lit));
    }
    listed = true;
  }
  if (listed) {
    if (items.empty()) {
      // Nothing equals an element of an empty array; everything differs from all of them.
      auto lit = newExpr(ast::ExprKind::Literal, ctx);
      lit->literal.kind = ast::LiteralKind::Boolean;
      lit->literal.boolean = !any;
      return lit;
    }
    auto e = newExpr(ast::ExprKind::In, ctx);
    e->negated = !any;
    e->args.push_back(std::move(left));
    for (auto& item : items) e->args.push_back(std::move(item));
    return e;
  }
  auto e = newExpr(ast::ExprKind::Call, ctx);
  e->name = "array_contains";
  e->args.push_back(std::move(array));
  e->args.push_back(std::move(left));
  return any ? std::move(e) : negate(std::move(e), ctx);
}

// The elements of PostgreSQL's array text '{a,"b c",NULL}' as strings (a
// one-level array; NULL elements are left out, as neither IN nor NOT IN
// could be true with them anyway only through other elements).
std::vector<std::string> AstBuilder::parsePgArrayText(const std::string& text, size_t pos) {
  std::vector<std::string> out;
  auto bad = [&] {
    return SqlError(sqlstate::kInvalidTextRepresentation,
                    fmt::format("malformed array literal: \"{}\"", text.substr(0, 64)), pos,
                    "an array is written '{a,b}' or ARRAY['a', 'b']");
  };
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') throw bad();
  std::string_view body(text.data() + 1, text.size() - 2);
  size_t i = 0;
  while (i < body.size()) {
    std::string item;
    bool quoted = false;
    if (body[i] == '"') {
      quoted = true;
      ++i;
      while (i < body.size() && body[i] != '"') {
        if (body[i] == '\\' && i + 1 < body.size()) ++i;
        item += body[i++];
      }
      if (i >= body.size()) throw bad();
      ++i;
    } else {
      while (i < body.size() && body[i] != ',') {
        if (body[i] == '{' || body[i] == '"') throw bad();
        item += body[i++];
      }
    }
    if (quoted || !iequalsNull(item)) out.push_back(std::move(item));
    if (i < body.size()) {
      if (body[i] != ',') throw bad();
      ++i;
      if (i == body.size()) throw bad();
    }
  }
  return out;
}

// The SQL standard's keyword forms of TRIM, SUBSTRING, EXTRACT, OVERLAY and
// POSITION, as calls of the functions they stand for (Spark reads them alike):
// TRIM(LEADING 'x' FROM s) is ltrim('x', s), SUBSTRING(s FROM 2 FOR 3) is
// substring(s, 2, 3), EXTRACT(HOUR FROM t) is date_part('HOUR', t),
// OVERLAY(s PLACING r FROM 2) is overlay(s, r, 2), POSITION('o' IN s) is
// position('o', s). Null when `ctx` is none of these forms.
ast::ExprPtr AstBuilder::standardFormCall(P::PrimaryContext* ctx) {
  auto call = [&](const char* name) {
    auto e = newExpr(ast::ExprKind::Call, ctx);
    e->name = name;
    return e;
  };
  auto wrongName = [&](P::IdentifierContext* id, const char* form, const char* functions) {
    throw SqlError(sqlstate::kSyntaxError,
                   fmt::format("syntax error: {}(... {} ...) is a form of {} only", identifier(id), form,
                               functions),
                   startOf(id));
  };
  if (auto* t = dynamic_cast<P::TrimSidePrimaryContext*>(ctx)) {
    if (lower(identifier(t->identifier())) != "trim") wrongName(t->identifier(), "BOTH|LEADING|TRAILING", "TRIM");
    auto e = call(t->LEADING() != nullptr ? "ltrim" : t->TRAILING() != nullptr ? "rtrim" : "trim");
    if (t->chars != nullptr) e->args.push_back(valueExpr(t->chars));
    e->args.push_back(valueExpr(t->src));
    return e;
  }
  if (auto* f = dynamic_cast<P::FromForPrimaryContext*>(ctx)) {
    std::string name = lower(identifier(f->identifier()));
    if (name == "trim" && f->c == nullptr) {
      auto e = call("trim");
      e->args.push_back(valueExpr(f->a));
      e->args.push_back(valueExpr(f->b));
      return e;
    }
    if (name == "substring" || name == "substr") {
      auto e = call("substring");
      e->args.push_back(valueExpr(f->a));
      e->args.push_back(valueExpr(f->b));
      if (f->c != nullptr) e->args.push_back(valueExpr(f->c));
      return e;
    }
    if (name == "extract" && f->c == nullptr) {
      // The field is a word (HOUR, YEAR, DOW...), not a column.
      auto e = call("date_part");
      auto field = newExpr(ast::ExprKind::Literal, f->a);
      field->literal.kind = ast::LiteralKind::String;
      field->literal.text = sourceText(f->a);
      e->args.push_back(std::move(field));
      e->args.push_back(valueExpr(f->b));
      return e;
    }
    wrongName(f->identifier(), "FROM", "TRIM, SUBSTRING (with FOR) and EXTRACT");
  }
  if (auto* o = dynamic_cast<P::PlacingPrimaryContext*>(ctx)) {
    if (lower(identifier(o->identifier())) != "overlay") wrongName(o->identifier(), "PLACING", "OVERLAY");
    auto e = call("overlay");
    for (auto* a : {o->a, o->b, o->c, o->d})
      if (a != nullptr) e->args.push_back(valueExpr(a));
    return e;
  }
  if (auto* p = dynamic_cast<P::PositionInPrimaryContext*>(ctx)) {
    if (lower(identifier(p->identifier())) != "position") wrongName(p->identifier(), "IN", "POSITION");
    auto e = call("position");
    e->args.push_back(valueExpr(p->a));
    e->args.push_back(valueExpr(p->b));
    return e;
  }
  return nullptr;
}

ast::ExprPtr AstBuilder::primary(P::PrimaryContext* ctx) {
  DepthGuard guard(*this, startOf(ctx));
  if (auto* l = dynamic_cast<P::LiteralPrimaryContext*>(ctx)) return literal(l->literal());
  if (auto* c = dynamic_cast<P::ColumnPrimaryContext*>(ctx)) {
    auto* id = c->identifier();
    // CURRENT_TIMESTAMP and CURRENT_DATE are functions even without parentheses,
    // as in Spark and the SQL standard (unless quoted, then they are names).
    if (c->fieldName().empty() && id->IDENTIFIER() != nullptr) {
      std::string name = lower(identifier(id));
      // So are PostgreSQL's CURRENT_USER, SESSION_USER, CURRENT_ROLE,
      // CURRENT_SCHEMA and CURRENT_CATALOG.
      if (name == "current_timestamp" || name == "current_date" || name == "current_user" ||
          name == "session_user" || name == "current_role" || name == "current_schema" ||
          name == "current_catalog") {
        auto e = newExpr(ast::ExprKind::Call, ctx);
        e->name = std::move(name);
        return e;
      }
    }
    auto e = newExpr(ast::ExprKind::Column, ctx);
    e->parts.push_back(identifier(id));
    for (auto* f : c->fieldName()) e->parts.push_back(anyWord(f));
    return e;
  }
  if (auto* call = dynamic_cast<P::CallPrimaryContext*>(ctx)) {
    auto e = newExpr(ast::ExprKind::Call, ctx);
    auto* fn = call->functionName();
    if (auto* q = fn->qualifiedFunctionName()) {
      // pg_catalog.f() is f(); no other schema holds functions.
      checkPgCatalogSchema(q->schema);
      e->name = lower(anyWord(q->name));
    } else {
      e->name = lower(fn->identifier() != nullptr ? identifier(fn->identifier()) : sourceText(fn));
    }
    if (auto* args = call->functionArgs()) {
      if (args->STAR() != nullptr) {
        e->star = true;
      } else {
        if (auto* q = args->setQuantifier()) {
          if (q->ON() != nullptr) {
            throw SqlError(sqlstate::kSyntaxError,
                           "DISTINCT ON is only allowed right after SELECT", startOf(q));
          }
          e->distinct = q->DISTINCT() != nullptr;
        }
        for (auto* a : args->expr()) {
          if (P::PrimaryContext* star = bareStar(a)) {
            // struct(t.*) and the like: the binder expands the star.
            auto s = newExpr(ast::ExprKind::Star, star);
            if (auto* qs = dynamic_cast<P::QualifiedStarPrimaryContext*>(star)) {
              s->parts.push_back(identifier(qs->identifier()));
              for (auto* f : qs->fieldName()) s->parts.push_back(anyWord(f));
            }
            e->args.push_back(std::move(s));
          } else {
            e->args.push_back(expr(a));
          }
        }
      }
    }
    if (auto* f = call->filterClause()) {
      e->filter = expr(f->expr());
      e->filterPos = startOf(f);
    }
    if (auto* o = call->overClause()) e->over = over(o);
    if (auto* nulls = call->nullTreatment()) {
      if (!e->over) {
        throw SqlError(sqlstate::kFeatureNotSupported,
                       fmt::format("{} without OVER (...)", sourceText(nulls)), startOf(nulls))
            .withHint("first(x, true) and last(x, true) skip NULLs in an aggregate");
      }
      e->over->ignoreNulls = nulls->IGNORE() != nullptr;
      e->over->nullsPos = startOf(nulls);
    }
    // EXISTS ((SELECT ...)) parses as a call of exists() over a subquery: it
    // is the subquery test, as it was before exists() took arrays.
    // Any other one-argument EXISTS is the subquery test missing its query,
    // as before exists() took arrays.
    if (fn->EXISTS() != nullptr && e->args.size() == 1) {
      if (e->args[0]->kind != ast::ExprKind::Subquery || e->filter || e->over) {
        throw SqlError(sqlstate::kSyntaxError, "EXISTS needs a subquery: EXISTS (SELECT ...)",
                       e->args[0]->pos)
            .withHint("exists(array, x -> condition) takes an array and a lambda");
      }
      auto ex = newExpr(ast::ExprKind::Exists, ctx);
      ex->subquery = std::move(e->args[0]->subquery);
      return ex;
    }
    if (call->functionArgs() != nullptr) {
      if (auto* order = call->functionArgs()->aggregateOrder()) {
        return orderedAggregate(std::move(e), order);
      }
    }
    return e;
  }
  if (ast::ExprPtr e = standardFormCall(ctx)) return e;
  if (auto* p = dynamic_cast<P::ParenPrimaryContext*>(ctx)) return expr(p->expr());
  if (auto* sq = dynamic_cast<P::SubqueryPrimaryContext*>(ctx)) {
    auto e = newExpr(ast::ExprKind::Subquery, ctx);
    e->subquery = query(sq->query());
    return e;
  }
  if (auto* ex = dynamic_cast<P::ExistsPrimaryContext*>(ctx)) {
    auto e = newExpr(ast::ExprKind::Exists, ctx);
    e->subquery = query(ex->query());
    return e;
  }
  if (auto* cs = dynamic_cast<P::CasePrimaryContext*>(ctx)) {
    auto e = newExpr(ast::ExprKind::Case, ctx);
    if (cs->operand != nullptr) {
      e->hasOperand = true;
      e->args.push_back(expr(cs->operand));
    }
    for (auto* w : cs->whenClause()) e->whens.emplace_back(expr(w->condition), expr(w->result));
    if (cs->elseExpr != nullptr) e->elseExpr = expr(cs->elseExpr);
    return e;
  }
  if (auto* cast = dynamic_cast<P::CastPrimaryContext*>(ctx)) {
    auto e = newExpr(ast::ExprKind::Cast, ctx);
    e->args.push_back(expr(cast->expr()));
    e->castType = dataType(cast->dataType());
    return e;
  }
  if (auto* tc = dynamic_cast<P::TryCastPrimaryContext*>(ctx)) {
    if (lower(identifier(tc->identifier())) != "try_cast")
      throw SqlError(sqlstate::kSyntaxError,
                     fmt::format("syntax error: {}(x AS type) is a form of CAST and TRY_CAST only",
                                 identifier(tc->identifier())),
                     startOf(tc->identifier()));
    auto e = newExpr(ast::ExprKind::Cast, ctx);
    e->name = "try_cast";
    e->args.push_back(expr(tc->expr()));
    e->castType = dataType(tc->dataType());
    return e;
  }
  if (auto* pg = dynamic_cast<P::PgCastPrimaryContext*>(ctx)) {
    auto e = newExpr(ast::ExprKind::Cast, ctx);
    e->args.push_back(primary(pg->primary()));
    e->castType = dataType(pg->dataType());
    return e;
  }
  if (auto* a = dynamic_cast<P::ArrayConstructorPrimaryContext*>(ctx)) {
    // ARRAY[a, b] is array(a, b).
    auto e = newExpr(ast::ExprKind::Call, ctx);
    e->name = "array";
    for (auto* x : a->expr()) e->args.push_back(expr(x));
    return e;
  }
  if (auto* as = dynamic_cast<P::ArraySubqueryPrimaryContext*>(ctx)) {
    // ARRAY(SELECT x FROM ... ORDER BY ...) is the subquery's one column
    // collected in its order: (SELECT collect_list(v) FROM (SELECT x AS v
    // FROM ... ORDER BY ...)).
    std::unique_ptr<ast::Query> inner = query(as->query());
    if (inner->terms.size() != 1 || inner->terms[0].items.size() != 1 ||
        inner->terms[0].items[0].expr->kind == ast::ExprKind::Star) {
      throw SqlError(sqlstate::kSyntaxError, "subquery must return only one column",
                     startOf(as->query()));
    }
    inner->terms[0].items[0].alias = "v";
    auto from = std::make_unique<ast::TableRef>();
    from->kind = ast::TableRef::Kind::Subquery;
    from->pos = startOf(as->query());
    from->alias = "_array";
    from->subquery = std::move(inner);
    auto column = newExpr(ast::ExprKind::Column, ctx);
    column->parts = {"_array", "v"};
    auto collect = newExpr(ast::ExprKind::Call, ctx);
    collect->name = "collect_list";
    collect->args.push_back(std::move(column));
    ast::Select outer;
    outer.pos = startOf(ctx);
    outer.items.push_back(ast::SelectItem{std::move(collect), "", ""});
    outer.from = std::move(from);
    auto q = std::make_shared<ast::Query>();
    q->pos = startOf(ctx);
    q->terms.push_back(std::move(outer));
    auto e = newExpr(ast::ExprKind::Subquery, ctx);
    e->subquery = std::move(q);
    return e;
  }
  if (auto* c = dynamic_cast<P::CollatePrimaryContext*>(ctx)) {
    // rtsql compares text by its bytes, which is PostgreSQL's "C" collation;
    // the default one and "C" are accepted, others refused rather than ignored.
    auto* name = c->collationName();
    if (name->schema != nullptr) checkPgCatalogSchema(name->schema);
    std::string collation = anyWord(name->name);
    if (!iequals(collation, "default") && collation != "C" && collation != "POSIX" &&
        !iequals(collation, "ucs_basic")) {
      throw SqlError(sqlstate::kUndefinedObject,
                     fmt::format("collation \"{}\" is not supported", collation), startOf(name),
                     "rtsql compares text by its bytes: COLLATE \"C\" or the default");
    }
    return primary(c->primary());
  }
  if (auto* sub = dynamic_cast<P::SubscriptPrimaryContext*>(ctx)) {
    // ARRAY[x] with one element parses as the column ARRAY subscripted (ARRAY
    // is a non-reserved word): it is the array constructor all the same.
    if (auto* c = dynamic_cast<P::ColumnPrimaryContext*>(sub->primary());
        c && c->fieldName().empty() && c->identifier()->getStart()->getType() == P::ARRAY) {
      auto e = newExpr(ast::ExprKind::Call, ctx);
      e->name = "array";
      e->args.push_back(expr(sub->expr()));
      return e;
    }
    auto e = newExpr(ast::ExprKind::Subscript, ctx);
    e->args.push_back(primary(sub->primary()));
    e->args.push_back(expr(sub->expr()));
    return e;
  }
  if (auto* f = dynamic_cast<P::FieldPrimaryContext*>(ctx)) {
    auto e = newExpr(ast::ExprKind::Field, ctx);
    e->args.push_back(primary(f->primary()));
    e->name = anyWord(f->fieldName());
    return e;
  }
  // StarPrimary / QualifiedStarPrimary anywhere but a select item or a call
  // argument.
  throw SqlError(sqlstate::kSyntaxError,
                 "\"*\" is only allowed as a select item or a function argument", startOf(ctx));
}

ast::ExprPtr AstBuilder::literal(P::LiteralContext* ctx) {
  auto e = newExpr(ast::ExprKind::Literal, ctx);
  ast::Literal& lit = e->literal;
  if (dynamic_cast<P::NullLiteralContext*>(ctx)) {
    lit.kind = ast::LiteralKind::Null;
  } else if (dynamic_cast<P::TrueLiteralContext*>(ctx)) {
    lit.kind = ast::LiteralKind::Boolean;
    lit.boolean = true;
  } else if (dynamic_cast<P::FalseLiteralContext*>(ctx)) {
    lit.kind = ast::LiteralKind::Boolean;
    lit.boolean = false;
  } else if (dynamic_cast<P::IntegerLiteralContext*>(ctx)) {
    lit.kind = ast::LiteralKind::Integer;
    lit.text = sourceText(ctx);
  } else if (dynamic_cast<P::DecimalLiteralContext*>(ctx)) {
    lit.kind = ast::LiteralKind::Decimal;
    lit.text = sourceText(ctx);
  } else if (dynamic_cast<P::StringLiteralContext*>(ctx)) {
    lit.kind = ast::LiteralKind::String;
    lit.text = sparkString(sourceText(ctx));
  } else if (dynamic_cast<P::BinaryLiteralContext*>(ctx)) {
    // X'0A1B': hex digits between the quotes (the lexer admits no others); an
    // odd count reads as if a 0 led, as Spark reads it.
    lit.kind = ast::LiteralKind::Binary;
    std::string hex = sourceText(ctx).substr(2);
    hex.pop_back();
    if (hex.size() % 2 != 0) hex.insert(0, "0");
    auto digit = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
    for (size_t i = 0; i < hex.size(); i += 2)
      lit.text += static_cast<char>(digit(hex[i]) * 16 + digit(hex[i + 1]));
  } else if (auto* iv = dynamic_cast<P::IntervalLiteralContext*>(ctx)) {
    lit.kind = ast::LiteralKind::Interval;
    // A minus before the value negates it: INTERVAL -'1-2' YEAR TO MONTH is
    // the text "-1-2" (and -'-1-2' "--1-2", which the binder reads as 1-2).
    lit.text = iv->MINUS() != nullptr ? "-" : "";
    if (iv->STRING() != nullptr) {
      lit.text += sparkString(tokenText(iv->STRING()->getSymbol()));
    } else {
      auto* num = iv->INTEGER_VALUE() != nullptr ? iv->INTEGER_VALUE() : iv->DECIMAL_VALUE();
      lit.text += tokenText(num->getSymbol());
    }
    // The unit, or both of a range: YEAR TO MONTH, DAY TO SECOND.
    if (iv->from != nullptr) lit.unit = intervalUnit(iv->from);
    if (iv->to != nullptr) lit.unit += " TO " + intervalUnit(iv->to);
  } else if (auto* ts = dynamic_cast<P::TimestampLiteralContext*>(ctx)) {
    lit.kind = ast::LiteralKind::Timestamp;
    lit.text = sparkString(tokenText(ts->STRING()->getSymbol()));
  } else if (dynamic_cast<P::EscapeStringLiteralContext*>(ctx)) {
    lit.kind = ast::LiteralKind::String;
    lit.text = unescapeString(sourceText(ctx), startOf(ctx));
  } else if (auto* date = dynamic_cast<P::DateLiteralContext*>(ctx)) {
    lit.kind = ast::LiteralKind::Date;
    lit.text = sparkString(tokenText(date->STRING()->getSymbol()));
  } else if (auto* ntz = dynamic_cast<P::TimestampNtzLiteralContext*>(ctx)) {
    lit.kind = ast::LiteralKind::TimestampNtz;
    lit.text = sparkString(tokenText(ntz->STRING()->getSymbol()));
  } else if (auto* ltz = dynamic_cast<P::TimestampLtzLiteralContext*>(ctx)) {
    lit.kind = ast::LiteralKind::Timestamp;
    lit.text = sparkString(tokenText(ltz->STRING()->getSymbol()));
  }
  return e;
}

}  // namespace rtsql::parser
