// parseStatements(): UTF-8 text -> tokens -> ANTLR parse tree -> AST.
//
// Three checks run before the ANTLR parser sees the tokens, because they are
// clearer (or only safe) as a flat scan: unterminated quotes and comments, which
// the lexer would otherwise split into confusing single-character tokens; and
// nesting depth, because the generated parser recurses once per nesting level
// and a hostile `((((...` must not exhaust the stack.
//
// The first syntax error ends the parse: the error listener throws a SqlError,
// so ANTLR never gets to "recover" and report a cascade of follow-up errors.
#include "parser/parser.h"

#include <atomic>
#include <algorithm>
#include <mutex>

#include "RtSqlLexer.h"
#include "RtSqlParser.h"
#include "antlr4-runtime.h"
#include "common/error.h"
#include "parser/ast_builder.h"

namespace rtsql {

namespace {

using grammar::RtSqlLexer;
using grammar::RtSqlParser;

// Parentheses, brackets, CASEs and runs of prefix operators deeper than this are
// refused before parsing.
constexpr int kMaxNesting = 200;
// The expected-token list in a syntax error names at most this many tokens.
constexpr size_t kMaxExpected = 10;

// The text as code points, plus where each code point starts in the UTF-8.
struct DecodedText {
  std::u32string codePoints;
  std::vector<size_t> byteOffset;  // one entry per code point, plus the end
};

DecodedText decodeUtf8(std::string_view text) {
  DecodedText out;
  out.codePoints.reserve(text.size());
  out.byteOffset.reserve(text.size() + 1);
  size_t i = 0;
  while (i < text.size()) {
    const auto b0 = static_cast<unsigned char>(text[i]);
    size_t len = 0;
    char32_t cp = 0;
    char32_t min = 0;
    if (b0 < 0x80) {
      len = 1;
      cp = b0;
    } else if ((b0 & 0xE0) == 0xC0) {
      len = 2;
      cp = b0 & 0x1F;
      min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
      len = 3;
      cp = b0 & 0x0F;
      min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
      len = 4;
      cp = b0 & 0x07;
      min = 0x10000;
    }
    bool ok = len != 0 && i + len <= text.size();
    for (size_t k = 1; ok && k < len; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if ((b & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (ok && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
    if (!ok) {
      throw SqlError(sqlstate::kCharacterNotInRepertoire,
                     fmt::format("invalid byte sequence for encoding \"UTF8\": 0x{:02x}", b0), i);
    }
    out.codePoints.push_back(cp);
    out.byteOffset.push_back(i);
    i += len;
  }
  out.byteOffset.push_back(text.size());
  return out;
}

// An ANTLR char stream over code points we decoded ourselves (the runtime's own
// decoder throws on bad UTF-8 with no position).
class CodePointStream : public antlr4::ANTLRInputStream {
 public:
  explicit CodePointStream(std::u32string data) {
    _data = std::move(data);
    p = 0;
  }
};

// The shared state of the error reporting: positions and token spelling.
class ErrorReporter {
 public:
  ErrorReporter(std::string_view text, const std::vector<size_t>& byteOffset)
      : text_(text), byteOffset_(byteOffset) {}

  size_t byteAt(size_t codePoint) const {
    return codePoint < byteOffset_.size() ? byteOffset_[codePoint] : text_.size();
  }
  size_t byteStart(const antlr4::Token* t) const {
    if (t->getType() == antlr4::Token::EOF) return text_.size();
    size_t i = t->getStartIndex();
    return i < byteOffset_.size() ? byteOffset_[i] : text_.size();
  }
  size_t byteEnd(const antlr4::Token* t) const {
    size_t i = t->getStopIndex() + 1;
    return i < byteOffset_.size() ? byteOffset_[i] : text_.size();
  }

  // Up to 40 bytes of the text at [begin, end), cut at a character boundary.
  std::string excerpt(size_t begin, size_t end) const {
    constexpr size_t kMax = 40;
    if (end > text_.size()) end = text_.size();
    if (end < begin) end = begin;
    if (end - begin <= kMax) return std::string(text_.substr(begin, end - begin));
    size_t cut = begin + kMax - 3;
    while (cut > begin && (static_cast<unsigned char>(text_[cut]) & 0xC0) == 0x80) --cut;
    return std::string(text_.substr(begin, cut - begin)) + "...";
  }

  std::string where(size_t pos) const {
    auto [line, column] = lineAndColumn(text_, pos);
    return fmt::format("(line {}, column {})", line, column);
  }

  [[noreturn]] void fail(const char* state, std::string what, size_t pos,
                         const std::string& expected = {}) const {
    std::string msg = fmt::format("{} {}", what, where(pos));
    if (!expected.empty()) msg += ": " + expected;
    throw SqlError(state, std::move(msg), pos);
  }

  std::string_view text() const { return text_; }

 private:
  std::string_view text_;
  const std::vector<size_t>& byteOffset_;
};

// True when the token at `index` comes right after the keyword PASSWORD: it is
// then (or was meant to be) a password, which no error message may echo.
bool followsPassword(antlr4::BufferedTokenStream& tokens, size_t index) {
  for (size_t i = index; i-- > 0;) {
    antlr4::Token* t = tokens.get(i);
    if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL) continue;
    return t->getType() == RtSqlParser::PASSWORD;
  }
  return false;
}

// The VALUES of a FROM VALUES before the token at `index` (Spark's inline
// table, FROM VALUES (1, 'a'), (2, 'b') AS t(x, y), which rtsql does not
// read), or nullptr.
antlr4::Token* fromValuesBefore(antlr4::BufferedTokenStream& tokens, size_t index) {
  int previous = -1;
  for (size_t i = 0; i < index; ++i) {
    antlr4::Token* t = tokens.get(i);
    if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL) continue;
    if (previous == RtSqlParser::FROM && t->getType() == RtSqlParser::VALUES) return t;
    previous = static_cast<int>(t->getType());
  }
  return nullptr;
}

// Throws on the first error the lexer reports. With the catch-all ERROR_CHAR
// token in the grammar the lexer has no reason to fail; this is a safety net.
class LexerErrorListener : public antlr4::BaseErrorListener {
 public:
  explicit LexerErrorListener(const ErrorReporter& r) : r_(r) {}
  void syntaxError(antlr4::Recognizer* recognizer, antlr4::Token*, size_t, size_t,
                   const std::string&, std::exception_ptr) override {
    auto* lexer = dynamic_cast<antlr4::Lexer*>(recognizer);
    const size_t pos = lexer != nullptr ? r_.byteAt(lexer->tokenStartCharIndex) : r_.text().size();
    if (pos >= r_.text().size()) r_.fail(sqlstate::kSyntaxError, "syntax error at end of input", pos);
    r_.fail(sqlstate::kSyntaxError,
            fmt::format("syntax error at or near \"{}\"", r_.excerpt(pos, pos + 1)), pos);
  }

 private:
  const ErrorReporter& r_;
};

// Remembers where the parser was when it consumed the last token. When the next
// token is wrong, the error state alone often knows only the end of the
// statement (`... WHERE a = 1 GRUOP`: the optional clauses were skipped before
// the error), so the expected list adds what could have followed that last
// token in its full rule context: GROUP, HAVING, AND, ...
class FollowTracker : public antlr4::tree::ParseTreeListener {
 public:
  explicit FollowTracker(antlr4::Parser& parser) : parser_(parser) {}

  void visitTerminal(antlr4::tree::TerminalNode* node) override {
    lastToken_ = node->getSymbol()->getTokenIndex();
    state_ = parser_.getState();
    ctx_ = parser_.getContext();
    valid_ = true;
  }
  void visitErrorNode(antlr4::tree::ErrorNode*) override {}
  void enterEveryRule(antlr4::ParserRuleContext*) override {}
  void exitEveryRule(antlr4::ParserRuleContext*) override {}

  // The tokens that could follow the last consumed token, when `offending`
  // comes right after it; empty otherwise.
  antlr4::misc::IntervalSet followOf(antlr4::Token* offending) const {
    antlr4::misc::IntervalSet out;
    if (!valid_ || offending == nullptr) return out;
    auto* stream = dynamic_cast<antlr4::BufferedTokenStream*>(parser_.getTokenStream());
    if (stream == nullptr || offending->getTokenIndex() <= lastToken_) return out;
    for (size_t i = lastToken_ + 1; i < offending->getTokenIndex(); ++i) {
      if (stream->get(i)->getChannel() == antlr4::Token::DEFAULT_CHANNEL) return out;
    }
    const antlr4::atn::ATN& atn = parser_.getATN();
    if (state_ >= atn.states.size()) return out;
    antlr4::atn::ATNState* s = atn.states[state_];
    for (size_t i = 0; i < s->transitions.size(); ++i) {
      antlr4::atn::Transition* t = s->transitions[i];
      if (t->isEpsilon()) continue;
      out.addAll(atn.getExpectedTokens(t->target->stateNumber, ctx_));
    }
    return out;
  }

 private:
  antlr4::Parser& parser_;
  size_t lastToken_ = 0;
  size_t state_ = 0;
  antlr4::ParserRuleContext* ctx_ = nullptr;
  bool valid_ = false;
};

// Throws on the first error the parser reports, naming the offending token and
// what would have been accepted there.
class ParserErrorListener : public antlr4::BaseErrorListener {
 public:
  ParserErrorListener(const ErrorReporter& r, const FollowTracker& follow)
      : r_(r), follow_(follow) {}

  void syntaxError(antlr4::Recognizer* recognizer, antlr4::Token* offending, size_t, size_t,
                   const std::string&, std::exception_ptr e) override {
    auto* parser = dynamic_cast<antlr4::Parser*>(recognizer);
    std::string expected;
    if (parser != nullptr) {
      antlr4::misc::IntervalSet set = expectedTokens(*parser, e);
      try {
        set.addAll(follow_.followOf(offending));
      } catch (const std::exception&) {
        // The follow set only makes the message better; without it the error
        // state's own set is still right.
      }
      expected = describeExpected(*parser, set);
    }
    if (offending == nullptr || offending->getType() == antlr4::Token::EOF) {
      r_.fail(sqlstate::kSyntaxError, "syntax error at end of input", r_.text().size(), expected);
    }
    size_t pos = r_.byteStart(offending);
    auto* stream = parser != nullptr
                       ? dynamic_cast<antlr4::BufferedTokenStream*>(parser->getTokenStream())
                       : nullptr;
    if (stream != nullptr && followsPassword(*stream, offending->getTokenIndex())) {
      // No position: clients print the statement's line beside one.
      throw SqlError(sqlstate::kSyntaxError,
                     fmt::format("syntax error in the password after PASSWORD {}", r_.where(pos)),
                     SqlError::npos, "A password is a string literal in single quotes.");
    }
    if (stream != nullptr) {
      if (antlr4::Token* values = fromValuesBefore(*stream, offending->getTokenIndex()))
        parser::refuseInlineTable(r_.byteStart(values));
    }
    r_.fail(sqlstate::kSyntaxError,
            fmt::format("syntax error at or near \"{}\"", r_.excerpt(pos, r_.byteEnd(offending))),
            pos, expected);
  }

 private:
  static antlr4::misc::IntervalSet expectedTokens(antlr4::Parser& parser, std::exception_ptr e) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (antlr4::RecognitionException& re) {
        return re.getExpectedTokens();
      } catch (...) {
      }
    }
    return parser.getExpectedTokens();
  }

  // "expected one of FROM, WHERE, identifier, ..." with keywords spelled as
  // keywords and the many non-reserved keywords folded into "identifier".
  static std::string describeExpected(antlr4::Parser& parser,
                                      const antlr4::misc::IntervalSet& set) {
    const antlr4::atn::ATN& atn = parser.getATN();
    const antlr4::misc::IntervalSet& nonReserved =
        atn.nextTokens(atn.ruleToStartState[RtSqlParser::RuleNonReserved]);
    const antlr4::dfa::Vocabulary& vocab = parser.getVocabulary();
    const bool identifier = set.contains(static_cast<size_t>(RtSqlParser::IDENTIFIER));

    std::vector<std::string> keywords;
    std::vector<std::string> classes;
    std::vector<std::string> punctuation;
    bool end = false;
    for (ssize_t t : set.toList()) {
      auto type = static_cast<size_t>(t);
      if (type == antlr4::Token::EOF) {
        end = true;
        continue;
      }
      switch (type) {
        case RtSqlParser::IDENTIFIER: classes.push_back("identifier"); continue;
        case RtSqlParser::QUOTED_IDENTIFIER:
        case RtSqlParser::BACKQUOTED_IDENTIFIER:
        case RtSqlParser::HINT:
        case RtSqlParser::ERROR_CHAR:
        case RtSqlParser::BLOCK_COMMENT:
        case RtSqlParser::LINE_COMMENT:
        case RtSqlParser::WS: continue;
        case RtSqlParser::STRING: classes.push_back("string literal"); continue;
        case RtSqlParser::INTEGER_VALUE: classes.push_back("integer"); continue;
        case RtSqlParser::DECIMAL_VALUE: classes.push_back("number"); continue;
        default: break;
      }
      if (type > vocab.getMaxTokenType()) continue;  // EPSILON and the like
      if (identifier && nonReserved.contains(type)) continue;
      std::string literal = vocab.getLiteralName(type);
      if (!literal.empty()) {
        punctuation.push_back(literal);
        continue;
      }
      std::string name = vocab.getSymbolicName(type);
      if (!name.empty() && name.back() == '_') name.pop_back();  // NULL_ -> NULL
      if (!name.empty()) keywords.push_back(name);
    }
    // "identifier" leads when it is possible at all: it is the likeliest intent.
    std::vector<std::string> all;
    if (identifier) {
      all.push_back("identifier");
      classes.erase(std::find(classes.begin(), classes.end(), "identifier"));
    }
    for (auto* group : {&keywords, &classes, &punctuation}) {
      all.insert(all.end(), group->begin(), group->end());
    }
    if (end) all.push_back("end of input");
    if (all.empty()) return {};
    std::string out = all.size() == 1 ? "expected " : "expected one of ";
    for (size_t i = 0; i < all.size() && i < kMaxExpected; ++i) {
      if (i > 0) out += ", ";
      out += all[i];
    }
    if (all.size() > kMaxExpected) out += ", ...";
    return out;
  }

  const ErrorReporter& r_;
  const FollowTracker& follow_;
};

// The flat scan over all tokens described at the top of the file.
void checkTokens(antlr4::BufferedTokenStream& tokens, const ErrorReporter& r) {
  int nesting = 0;
  int caseNesting = 0;
  int prefixRun = 0;
  const std::vector<antlr4::Token*>& all = tokens.getTokens();
  for (size_t i = 0; i < all.size(); ++i) {
    antlr4::Token* t = all[i];
    if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL) continue;
    const size_t type = t->getType();
    const size_t pos = r.byteStart(t);
    if (type == RtSqlParser::ERROR_CHAR) {
      // A quote the lexer could not pair: the string or name runs to the end.
      const char c = r.text()[pos];
      if (c == '\'' && followsPassword(tokens, i)) {
        throw SqlError(sqlstate::kSyntaxError,
                       fmt::format("unterminated quoted string after PASSWORD {}", r.where(pos)));
      }
      if (c == '\'') {
        r.fail(sqlstate::kSyntaxError,
               fmt::format("unterminated quoted string at or near \"{}\"",
                           r.excerpt(pos, r.text().size())),
               pos);
      }
      if (c == '"' || c == '`') {
        r.fail(sqlstate::kSyntaxError,
               fmt::format("unterminated quoted identifier at or near \"{}\"",
                           r.excerpt(pos, r.text().size())),
               pos);
      }
      if (c == '$' && r.text().substr(pos, 2) == "$$") {
        r.fail(sqlstate::kSyntaxError,
               fmt::format("unterminated dollar-quoted string at or near \"{}\"",
                           r.excerpt(pos, r.text().size())),
               pos);
      }
    }
    if (type == RtSqlParser::SLASH && i + 1 < all.size() &&
        all[i + 1]->getType() == RtSqlParser::STAR &&
        all[i + 1]->getStartIndex() == t->getStopIndex() + 1) {
      // "/*" that did not become a comment has no "*/".
      r.fail(sqlstate::kSyntaxError, "unterminated /* comment", pos);
    }
    switch (type) {
      case RtSqlParser::LPAREN:
      case RtSqlParser::LBRACKET: ++nesting; break;
      case RtSqlParser::RPAREN:
      case RtSqlParser::RBRACKET:
        if (nesting > 0) --nesting;
        break;
      case RtSqlParser::CASE: ++caseNesting; break;
      case RtSqlParser::END:
        if (caseNesting > 0) --caseNesting;
        break;
      default: break;
    }
    if (type == RtSqlParser::MINUS || type == RtSqlParser::PLUS || type == RtSqlParser::NOT) {
      ++prefixRun;
    } else {
      prefixRun = 0;
    }
    if (nesting + caseNesting + prefixRun > kMaxNesting) {
      throw SqlError(sqlstate::kStatementTooComplex, "statement too complex: nested too deeply",
                     pos, fmt::format("at most {} levels of nesting are allowed", kMaxNesting));
    }
  }
}

// The generated parser shares its prediction caches between instances; one
// parse at a time keeps those caches consistent whatever the runtime's own
// locking does. Statements are short, so this costs nothing in practice.
std::mutex& parseMutex() {
  static std::mutex m;
  return m;
}

}  // namespace

namespace {
std::atomic<uint64_t> parsedTexts{0};
}  // namespace

uint64_t parsedTextCount() { return parsedTexts.load(std::memory_order_relaxed); }

std::vector<ast::StatementPtr> parseStatements(std::string_view text) {
  parsedTexts.fetch_add(1, std::memory_order_relaxed);
  DecodedText decoded = decodeUtf8(text);
  ErrorReporter reporter(text, decoded.byteOffset);

  std::lock_guard<std::mutex> lock(parseMutex());
  try {
    CodePointStream input(std::move(decoded.codePoints));
    RtSqlLexer lexer(&input);
    LexerErrorListener lexerErrors(reporter);
    lexer.removeErrorListeners();
    lexer.addErrorListener(&lexerErrors);

    antlr4::CommonTokenStream tokens(&lexer);
    tokens.fill();
    checkTokens(tokens, reporter);

    RtSqlParser parser(&tokens);
    FollowTracker follow(parser);
    parser.addParseListener(&follow);
    ParserErrorListener parserErrors(reporter, follow);
    parser.removeErrorListeners();
    parser.addErrorListener(&parserErrors);
    RtSqlParser::ScriptContext* tree = parser.script();

    parser::AstBuilder builder(text, decoded.byteOffset, tokens);
    return builder.script(tree);
  } catch (const SqlError&) {
    throw;
  } catch (const InternalError&) {
    throw;
  } catch (const std::exception& e) {
    // Anything else out of the runtime is still the input's fault as far as the
    // user can tell; report it as a syntax error rather than crash.
    throw SqlError(sqlstate::kSyntaxError, fmt::format("syntax error: {}", e.what()));
  }
}

}  // namespace rtsql
