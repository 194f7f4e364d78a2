// Regular-expression functions (regexp_extract, regexp_extract_all,
// regexp_replace, regexp_count, regexp_substr, regexp_instr, split, rlike) on
// RE2, which matches in time linear in the input and uses no recursion per
// input character: no record and no pattern can exhaust the stack or keep a
// core busy without bound. RE2's syntax is Java's for the patterns people write
// in practice; what it lacks (backreferences, lookaround, possessive quantifiers,
// atomic groups) is reported as 2201B with a hint naming the construct.
//
// A literal pattern is compiled once at bind time; a pattern computed per
// record is compiled per record. A pattern that Java refuses too ('(') is an
// error (22023, Spark's INVALID_PARAMETER_VALUE.PATTERN) only when a row is
// evaluated with it, as in Spark: a NULL string gives NULL first. A literal
// pattern Java would run and RE2 cannot (a lookahead) is refused at bind time
// (2201B): it would fail every row. Replacement strings use Java's syntax ($1,
// ${name}, \$).
#include <re2/re2.h>

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <string_view>

#include "common/functions/internal.h"
#include "common/interrupt.h"

namespace rtsql::expr_internal {

namespace {

// RE2 stops compiling a pattern whose program would need more, and its DFA
// falls back to the (slower, still linear) NFA when its cache is full: no
// pattern and no input can make one evaluation use more memory than this.
constexpr int64_t kPatternMaxMem = 8 << 20;

constexpr const char* kUnsupportedHint =
    "regular expressions use RE2 syntax, which matches in linear time: backreferences, "
    "lookahead, lookbehind, atomic groups and possessive quantifiers are not available";

using RegexPtr = std::shared_ptr<const RE2>;

const RE2::Options& regexOptions() {
  static const RE2::Options options = [] {
    RE2::Options o;
    o.set_log_errors(false);
    o.set_max_mem(kPatternMaxMem);
    return o;
  }();
  return options;
}

// Java's pattern syntax in RE2's: a named group `(?<name>...)` is `(?P<name>...)`
// there. Everything else is passed as written; RE2 rejects what it lacks.
std::string toRe2Syntax(const std::string& pattern) {
  if (pattern.find("(?<") == std::string::npos) return pattern;
  std::string out;
  out.reserve(pattern.size() + 4);
  bool inClass = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      out += c;
      out += pattern[++i];
      continue;
    }
    if (inClass) {
      if (c == ']') inClass = false;
    } else if (c == '[') {
      inClass = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal member.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
      continue;
    } else if (pattern.compare(i, 3, "(?<") == 0 && i + 3 < pattern.size() &&
               std::isalpha(static_cast<unsigned char>(pattern[i + 3]))) {
      out += "(?P<";
      i += 2;
      continue;
    }
    out += c;
  }
  return out;
}

// What a construct RE2 rejects is, in words, when it is one of Java's that RE2
// lacks by design; empty otherwise.
std::string unsupportedConstruct(const std::string& arg) {
  if (arg.size() >= 2 && arg[0] == '\\' && arg[1] >= '1' && arg[1] <= '9') return "backreference " + arg;
  if (arg.rfind("\\k", 0) == 0) return "named backreference \\k<...>";
  if (arg.rfind("(?=", 0) == 0 || arg.rfind("(?!", 0) == 0) return "lookahead " + arg;
  if (arg.rfind("(?<", 0) == 0) return "lookbehind (?<= or (?<!";
  if (arg.rfind("(?>", 0) == 0) return "atomic group (?>";
  if (arg.size() >= 2 && arg.back() == '+' && std::string_view("*+?}").find(arg[arg.size() - 2]) != std::string_view::npos)
    return "possessive quantifier " + arg;
  if (arg == "\\Z") return "\\Z (use \\z or $)";
  if (arg == "\\G") return "\\G";
  return {};
}

// Whether RE2's refusal of a pattern is one of rtsql's own (a construct Java
// has and RE2 lacks, or a pattern too large), rather than a syntax error that
// Java reports too.
bool refusedByRe2Only(const RE2& re) {
  return re.error_code() == RE2::ErrorPatternTooLarge || !unsupportedConstruct(re.error_arg()).empty() ||
         re.error_arg().rfind("\\p", 0) == 0;
}

// Throws the error of a pattern RE2 did not compile: 2201B naming what RE2
// lacks, or 22023 (Spark's INVALID_PARAMETER_VALUE.PATTERN) for a pattern that
// is not a valid regular expression at all, naming what is wrong and where.
[[noreturn]] void throwPatternError(const std::string& fn, const std::string& pattern, const RE2& re,
                                    size_t pos) {
  const std::string& arg = re.error_arg();
  size_t at = arg.empty() ? std::string::npos : pattern.find(arg);
  std::string where = at == std::string::npos ? "" : fmt::format(" at character {}", at + 1);
  std::string construct = unsupportedConstruct(arg);
  if (!construct.empty()) {
    throw SqlError(sqlstate::kInvalidRegex,
                   fmt::format("invalid regular expression '{}' in {}: {}{} is not supported",
                               pattern, fn, construct, where),
                   pos, kUnsupportedHint);
  }
  if (re.error_code() == RE2::ErrorPatternTooLarge) {
    throw SqlError(sqlstate::kInvalidRegex,
                   fmt::format("invalid regular expression in {}: the pattern is too large "
                               "(its compiled form would need more than {} MB)",
                               fn, kPatternMaxMem >> 20),
                   pos, "use smaller repetition counts or split the pattern");
  }
  if (arg.rfind("\\p", 0) == 0) {
    throw SqlError(sqlstate::kInvalidRegex,
                   fmt::format("invalid regular expression '{}' in {}: {}{}", pattern, fn, re.error(), where),
                   pos, "POSIX classes are written [[:alpha:]], [[:punct:]]... in RE2 syntax");
  }
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("invalid regular expression '{}' in {}: {}{}", pattern, fn, re.error(), where),
                 pos);
}

// A literal pattern compiled once, now. One RE2 cannot run is refused here
// (2201B); one that is not a regular expression is kept, not ok(), and its
// error is raised when a row is evaluated with it (RecordPattern), as Spark
// raises it then.
RegexPtr compileConstant(const std::string& fn, const ExprPtr& e, size_t pos) {
  auto c = constantValue(e);
  if (!c || c->isNull()) return nullptr;
  auto re = std::make_shared<const RE2>(toRe2Syntax(c->asString()), regexOptions());
  if (!re->ok() && refusedByRe2Only(*re)) throwPatternError(fn, c->asString(), *re, pos);
  return re;
}

// The arguments every regular-expression function starts with, checked: the
// subject (args[0]) and the pattern (args[1]) are strings; a function with a
// third integer argument gets `third` when the call leaves it out. Returns the
// pattern compiled once, now, when it is a constant (a bad one is 2201B here),
// else null: the pattern is then compiled per record (RecordPattern).
RegexPtr regexArguments(const std::string& name, std::vector<ExprPtr>& args, size_t pos,
                        std::optional<int32_t> third = std::nullopt) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  if (third) {
    if (args.size() == 2)
      args.push_back(makeLiteral(Value::integer(*third), DataType::of(TypeId::Int)));
    argBigInt(name, args, 2, pos);
  }
  return compileConstant(name, args[1], pos);
}

// The compiled pattern one evaluation matches with: the bind-time one, or a
// fresh compile of this record's pattern. A pattern that does not compile is
// this row's error (throwPatternError).
class RecordPattern {
 public:
  RecordPattern(const RegexPtr& fixed, const Value& pattern, const std::string& fn, size_t pos) {
    if (fixed) {
      if (!fixed->ok()) throwPatternError(fn, pattern.asString(), *fixed, pos);
      re_ = fixed.get();
      return;
    }
    local_.emplace(toRe2Syntax(pattern.asString()), regexOptions());
    if (!local_->ok()) throwPatternError(fn, pattern.asString(), *local_, pos);
    re_ = &*local_;
  }
  RecordPattern(const RecordPattern&) = delete;
  RecordPattern& operator=(const RecordPattern&) = delete;

  const RE2& operator*() const { return *re_; }
  const RE2* operator->() const { return re_; }

 private:
  std::optional<RE2> local_;
  const RE2* re_ = nullptr;
};

// Room for the submatches of one match: on the stack for the patterns people
// write, so matching a record allocates nothing.
class Groups {
 public:
  explicit Groups(int n) : n_(n) {
    if (n > static_cast<int>(inline_.size())) heap_.resize(static_cast<size_t>(n));
  }
  re2::StringPiece* data() { return heap_.empty() ? inline_.data() : heap_.data(); }
  int size() const { return n_; }

 private:
  int n_;
  std::array<re2::StringPiece, 10> inline_{};
  std::vector<re2::StringPiece> heap_;
};

size_t offsetIn(std::string_view text, const re2::StringPiece& piece) {
  return static_cast<size_t>(piece.data() - text.data());
}

size_t utf8Step(std::string_view text, size_t i) {
  auto c = static_cast<unsigned char>(text[i]);
  size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
  return std::min(n, text.size() - i);
}

// Calls f(groups) for each successive match as Java's Matcher.find() finds
// them: a match may be empty, and after an empty match the search goes on one
// character further. groups[0] is the whole match. Each search is linear in
// the text, but a pattern that must look far ahead for each of many matches
// costs their product: every few matches the thread's interrupt check runs.
template <typename F>
void forEachMatch(const RE2& re, std::string_view text, Groups& groups, F&& f) {
  constexpr unsigned kMatchesPerCheck = 32;
  unsigned matches = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    if (++matches % kMatchesPerCheck == 0) throwIfInterrupted();
    if (!re.Match(text, pos, text.size(), RE2::UNANCHORED, groups.data(), groups.size())) return;
    const size_t start = offsetIn(text, groups.data()[0]);
    const size_t end = start + groups.data()[0].size();
    if (!f(groups.data())) return;
    if (end > start) {
      pos = end;
    } else {
      if (end >= text.size()) return;
      pos = end + utf8Step(text, end);
    }
  }
}

// A replacement string in Java's syntax, parsed once: `$n` and `${name}` insert
// a group (the longest run of digits that names an existing group, as Java
// reads it), `\x` is a literal x.
struct Replacement {
  struct Piece {
    std::string literal;
    int group = -1;  // >= 0: insert this group instead
  };
  std::vector<Piece> pieces;
  int maxGroup = 0;
};

// Returns false (and the reason) when the replacement is not valid for `re`.
bool parseReplacement(const std::string& r, const RE2& re, Replacement& out, std::string* why) {
  const int groups = re.NumberOfCapturingGroups();
  auto literal = [&out]() -> std::string& {
    if (out.pieces.empty() || out.pieces.back().group >= 0) out.pieces.emplace_back();
    return out.pieces.back().literal;
  };
  for (size_t i = 0; i < r.size(); ++i) {
    char c = r[i];
    if (c == '\\') {
      if (i + 1 >= r.size()) {
        *why = "character to be escaped is missing at its end";
        return false;
      }
      literal() += r[++i];
      continue;
    }
    if (c != '$') {
      literal() += c;
      continue;
    }
    if (i + 1 >= r.size()) {
      *why = "a group reference is missing after the last '$'";
      return false;
    }
    int g = -1;
    if (r[i + 1] == '{') {
      size_t close = r.find('}', i + 2);
      if (close == std::string::npos || close == i + 2) {
        *why = "a named group reference ${name} is not closed";
        return false;
      }
      std::string name = r.substr(i + 2, close - i - 2);
      const auto& named = re.NamedCapturingGroups();
      auto it = named.find(name);
      if (it == named.end()) {
        *why = fmt::format("the pattern has no group named '{}'", name);
        return false;
      }
      g = it->second;
      i = close;
    } else if (r[i + 1] >= '0' && r[i + 1] <= '9') {
      g = r[++i] - '0';
      if (g > groups) {
        *why = fmt::format("there is no group {}: the pattern has {}", g, groups);
        return false;
      }
      while (i + 1 < r.size() && r[i + 1] >= '0' && r[i + 1] <= '9' && g * 10 + (r[i + 1] - '0') <= groups) {
        g = g * 10 + (r[++i] - '0');
      }
    } else {
      *why = "'$' must be followed by a group number or ${name}; write \\$ for a dollar sign";
      return false;
    }
    out.pieces.push_back({{}, g});
    out.maxGroup = std::max(out.maxGroup, g);
  }
  return true;
}

using ReplacementPtr = std::shared_ptr<const Replacement>;

ReplacementPtr parseConstantReplacement(const std::string& fn, const ExprPtr& e, const RE2& re, size_t pos) {
  auto c = constantValue(e);
  if (!c || c->isNull()) return nullptr;
  auto r = std::make_shared<Replacement>();
  std::string why;
  if (!parseReplacement(c->asString(), re, *r, &why)) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("invalid replacement '{}' in {}: {}", c->asString(), fn, why), pos,
                   "refer to groups as $1 or ${name}; write \\$ for a dollar sign and \\\\ for a backslash");
  }
  return r;
}

Value replaceAll(const std::string& fn, const std::string& text, const RE2& re, const Replacement& rep) {
  std::string out;
  size_t copied = 0;
  Groups groups(rep.maxGroup + 1);
  forEachMatch(re, text, groups, [&](const re2::StringPiece* g) {
    const size_t start = offsetIn(text, g[0]);
    out.append(text, copied, start - copied);
    for (const auto& piece : rep.pieces) {
      if (piece.group < 0) {
        out += piece.literal;
      } else if (g[piece.group].data() != nullptr) {
        out.append(g[piece.group].data(), g[piece.group].size());
      }
    }
    copied = start + g[0].size();
    checkValueSize(fn, out.size() + (text.size() - copied));
    return true;
  });
  if (copied == 0 && out.empty()) return Value::string(text);
  out.append(text, copied, std::string::npos);
  return Value::string(std::move(out));
}

// Spark checks a group index only when the pattern matches: a match with an
// index outside [0, groups] is 22023 (INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX),
// no match gives '' (or an empty array) whatever the index.
[[noreturn]] void throwGroupIndex(const std::string& fn, int64_t idx, int groups, size_t pos) {
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("{} group index {} is out of range: the pattern has {} group{}", fn, idx,
                             groups, groups == 1 ? "" : "s"),
                 pos, fmt::format("the group index is between 0 and {}", groups));
}

bool groupIndexValid(int64_t idx, const RE2& re) { return idx >= 0 && idx <= re.NumberOfCapturingGroups(); }

ExprPtr buildExtract(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  RegexPtr fixed = regexArguments(name, args, pos, 1);
  return fn3(name, DataType::of(TypeId::String), args, [fixed, name, pos](const Value& s, const Value& p, const Value& i) {
    RecordPattern re(fixed, p, name, pos);
    int64_t idx = i.asInt();
    const bool valid = groupIndexValid(idx, *re);
    Groups groups(valid ? static_cast<int>(idx) + 1 : 1);
    const std::string& text = s.asString();
    if (!re->Match(text, 0, text.size(), RE2::UNANCHORED, groups.data(), groups.size()))
      return Value::string({});
    if (!valid) throwGroupIndex(name, idx, re->NumberOfCapturingGroups(), pos);
    // A group that did not take part in the match gives '' as in Spark.
    const re2::StringPiece& g = groups.data()[idx];
    return Value::string(g.data() ? std::string(g.data(), g.size()) : std::string());
  });
}

ExprPtr buildRegexpReplace(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  RegexPtr fixed = regexArguments(name, args, pos);
  argString(name, args, 2, pos);
  ReplacementPtr fixedRep = fixed && fixed->ok() ? parseConstantReplacement(name, args[2], *fixed, pos) : nullptr;
  return fn3(name, DataType::of(TypeId::String), args,
             [fixed, fixedRep, name, pos](const Value& s, const Value& p, const Value& r) {
               RecordPattern re(fixed, p, name, pos);
               if (fixedRep) return replaceAll(name, s.asString(), *re, *fixedRep);
               Replacement rep;
               std::string why;
               if (!parseReplacement(r.asString(), *re, rep, &why)) return Value();
               return replaceAll(name, s.asString(), *re, rep);
             });
}

// Spark splits by the empty pattern itself: one field per character, the last
// taking the rest when `limit` is smaller, and no trailing empty field.
Value splitCharacters(const std::string& s, int64_t limit) {
  const auto chars = static_cast<int64_t>(utf8Length(s));
  const int64_t fields = limit <= 0 || limit > chars ? chars : limit;
  ValueList parts;
  size_t at = 0;
  for (int64_t i = 0; i + 1 < fields; ++i) {
    const size_t n = utf8Step(s, at);
    parts.push_back(Value::string(s.substr(at, n)));
    at += n;
  }
  checkValueSize("split", static_cast<size_t>(fields) * sizeof(Value) + s.size());
  parts.push_back(Value::string(s.substr(at)));
  return Value::array(std::move(parts));
}

Value splitValue(const std::string& s, const RE2& re, int64_t limit) {
  if (re.pattern().empty() && !s.empty()) return splitCharacters(s, limit);
  ValueList parts;
  size_t last = 0;
  size_t bytes = 0;
  Groups groups(1);
  forEachMatch(re, s, groups, [&](const re2::StringPiece* g) {
    const size_t ms = offsetIn(s, g[0]);
    const size_t ml = g[0].size();
    if (ml == 0) {
      // As Java's String.split: an empty match at the start gives no leading
      // empty field (one at the end gives a trailing one); it never splits
      // inside a multi-byte character.
      if (ms == 0 || (ms < s.size() && (static_cast<unsigned char>(s[ms]) & 0xC0) == 0x80)) return true;
    }
    if (limit > 0 && static_cast<int64_t>(parts.size()) == limit - 1) return false;
    // Each part costs its Value besides its bytes: many tiny parts of a large
    // input would otherwise grow far beyond the input's size.
    bytes += sizeof(Value) + (ms - last);
    checkValueSize("split", bytes);
    parts.push_back(Value::string(s.substr(last, ms - last)));
    last = ms + ml;
    return true;
  });
  parts.push_back(Value::string(s.substr(last)));
  return Value::array(std::move(parts));
}

ExprPtr buildSplit(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  RegexPtr fixed = regexArguments(name, args, pos, -1);
  return fn3(name, DataType::arrayOf(DataType::of(TypeId::String)), args,
             [fixed, name, pos](const Value& s, const Value& p, const Value& l) {
               RecordPattern re(fixed, p, name, pos);
               return splitValue(s.asString(), *re, l.asInt());
             });
}

ExprPtr buildRlike(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  RegexPtr fixed = regexArguments(name, args, pos);
  return fn2(name, DataType::of(TypeId::Boolean), args, [fixed, name, pos](const Value& s, const Value& p) {
    RecordPattern re(fixed, p, name, pos);
    const std::string& text = s.asString();
    return Value::boolean(re->Match(text, 0, text.size(), RE2::UNANCHORED, nullptr, 0));
  });
}

// regexp_count(str, regexp): how many times the pattern matches (Java's find
// loop, empty matches included).
ExprPtr buildCount(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  RegexPtr fixed = regexArguments(name, args, pos);
  return fn2(name, DataType::of(TypeId::Int), args, [fixed, name, pos](const Value& s, const Value& p) {
    RecordPattern re(fixed, p, name, pos);
    int32_t n = 0;
    Groups groups(1);
    forEachMatch(*re, s.asString(), groups, [&](const re2::StringPiece*) {
      ++n;
      return true;
    });
    return Value::integer(n);
  });
}

// regexp_extract_all(str, regexp[, idx]): group idx (1 by default) of every
// match; a group that took no part gives ''.
ExprPtr buildExtractAll(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  RegexPtr fixed = regexArguments(name, args, pos, 1);
  return fn3(name, DataType::arrayOf(DataType::of(TypeId::String)), args,
             [fixed, name, pos](const Value& s, const Value& p, const Value& i) {
               RecordPattern re(fixed, p, name, pos);
               int64_t idx = i.asInt();
               const bool valid = groupIndexValid(idx, *re);
               ValueList out;
               size_t bytes = 0;
               Groups groups(valid ? static_cast<int>(idx) + 1 : 1);
               forEachMatch(*re, s.asString(), groups, [&](const re2::StringPiece* g) {
                 if (!valid) throwGroupIndex(name, idx, re->NumberOfCapturingGroups(), pos);
                 const re2::StringPiece& piece = g[idx];
                 bytes += sizeof(Value) + piece.size();
                 checkValueSize("regexp_extract_all", bytes);
                 out.push_back(Value::string(piece.data() ? std::string(piece.data(), piece.size())
                                                          : std::string()));
                 return true;
               });
               return Value::array(std::move(out));
             });
}

// regexp_substr(str, regexp): the first match, NULL when there is none or it
// is empty (as Spark).
ExprPtr buildSubstr(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  RegexPtr fixed = regexArguments(name, args, pos);
  return fn2(name, DataType::of(TypeId::String), args, [fixed, name, pos](const Value& s, const Value& p) {
    RecordPattern re(fixed, p, name, pos);
    const std::string& text = s.asString();
    re2::StringPiece m;
    if (!re->Match(text, 0, text.size(), RE2::UNANCHORED, &m, 1) || m.empty()) return Value();
    return Value::string(std::string(m.data(), m.size()));
  });
}

// regexp_instr(str, regexp[, idx]): the 1-based character position where the
// first match starts, 0 when there is none. Spark takes idx and ignores its
// value (a NULL idx still gives NULL), and so does rtsql.
ExprPtr buildRegexpInstr(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  RegexPtr fixed = regexArguments(name, args, pos, 0);
  return fn3(name, DataType::of(TypeId::Int), args,
             [fixed, name, pos](const Value& s, const Value& p, const Value& i) {
               RecordPattern re(fixed, p, name, pos);
               (void)i;
               const std::string& text = s.asString();
               re2::StringPiece g;
               if (!re->Match(text, 0, text.size(), RE2::UNANCHORED, &g, 1)) return Value::integer(0);
               return Value::integer(static_cast<int32_t>(
                   utf8Length(std::string_view(text).substr(0, offsetIn(text, g))) + 1));
             });
}

}  // namespace

void registerRegexFunctions(FunctionTable& t) {
  t["regexp_extract"] = {2, 3, buildExtract};
  t["regexp_replace"] = {3, 3, buildRegexpReplace};
  t["split"] = {2, 3, buildSplit};
  t["rlike"] = {2, 2, buildRlike};
  t["regexp_like"] = {2, 2, buildRlike};
  t["regexp"] = {2, 2, buildRlike};
  t["regexp_count"] = {2, 2, buildCount};
  t["regexp_extract_all"] = {2, 3, buildExtractAll};
  t["regexp_substr"] = {2, 2, buildSubstr};
  t["regexp_instr"] = {2, 3, buildRegexpInstr};
}

}  // namespace rtsql::expr_internal
