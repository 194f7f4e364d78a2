// Regular-expression functions (regexp_extract, regexp_replace, split, rlike)
// on std::regex with the ECMAScript grammar, which agrees with Java's for the
// patterns people write in practice. A literal pattern is compiled once at bind
// time, and a bad literal pattern is reported there with its position; a
// pattern computed per record is compiled per record and yields NULL if bad.
#include <regex>

#include <fmt/format.h>

#include "common/functions/internal.h"

namespace rtsql::expr_internal {

namespace {

constexpr const char* kInvalidRegex = "2201B";

using RegexPtr = std::shared_ptr<const std::regex>;

RegexPtr compileConstant(const std::string& fn, const ExprPtr& e, size_t pos) {
  auto c = constantValue(e);
  if (!c || c->isNull()) return nullptr;
  try {
    return std::make_shared<const std::regex>(c->asString(), std::regex::ECMAScript);
  } catch (const std::regex_error& ex) {
    throw SqlError(kInvalidRegex,
                   fmt::format("invalid regular expression '{}' in {}: {}", c->asString(), fn, ex.what()), pos);
  }
}

// The compiled pattern to use for one evaluation: the bind-time one, or a fresh
// compile of this record's pattern (nullptr when it does not compile).
const std::regex* pick(const RegexPtr& fixed, const Value& pattern, std::optional<std::regex>& local) {
  if (fixed) return fixed.get();
  try {
    local.emplace(pattern.asString(), std::regex::ECMAScript);
    return &*local;
  } catch (const std::regex_error&) {
    return nullptr;
  }
}

ExprPtr buildExtract(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  if (args.size() == 2) args.push_back(makeLiteral(Value::integer(1), DataType::of(TypeId::Int)));
  argBigInt(name, args, 2, pos);
  RegexPtr fixed = compileConstant(name, args[1], pos);
  if (fixed) {
    if (auto idx = constantValue(args[2]); idx && !idx->isNull()) {
      if (idx->asInt() < 0 || static_cast<size_t>(idx->asInt()) > fixed->mark_count())
        throw SqlError(sqlstate::kInvalidParameterValue,
                       fmt::format("regexp_extract group index {} is out of range: the pattern has {} group{}",
                                   idx->asInt(), fixed->mark_count(), fixed->mark_count() == 1 ? "" : "s"),
                       pos);
    }
  }
  return fn3(name, DataType::of(TypeId::String), args, [fixed](const Value& s, const Value& p, const Value& i) {
    std::optional<std::regex> local;
    const std::regex* re = pick(fixed, p, local);
    if (!re) return Value();
    int64_t idx = i.asInt();
    if (idx < 0 || static_cast<size_t>(idx) > re->mark_count()) return Value();
    std::smatch m;
    const std::string& text = s.asString();
    if (!std::regex_search(text, m, *re)) return Value::string({});
    // A group that did not take part in the match gives '' as in Spark.
    return Value::string(m[static_cast<size_t>(idx)].matched ? m[static_cast<size_t>(idx)].str() : std::string());
  });
}

ExprPtr buildReplace(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  argString(name, args, 2, pos);
  RegexPtr fixed = compileConstant(name, args[1], pos);
  return fn3(name, DataType::of(TypeId::String), args, [fixed](const Value& s, const Value& p, const Value& r) {
    std::optional<std::regex> local;
    const std::regex* re = pick(fixed, p, local);
    if (!re) return Value();
    return Value::string(std::regex_replace(s.asString(), *re, r.asString()));
  });
}

Value splitValue(const std::string& s, const std::regex& re, int64_t limit) {
  ValueList parts;
  size_t last = 0;
  for (auto it = std::sregex_iterator(s.begin(), s.end(), re); it != std::sregex_iterator(); ++it) {
    auto ms = static_cast<size_t>(it->position());
    auto ml = static_cast<size_t>(it->length());
    if (ml == 0) {
      // An empty match splits between characters, never at the ends or inside
      // a multi-byte character.
      if (ms == 0 || ms >= s.size() || (static_cast<unsigned char>(s[ms]) & 0xC0) == 0x80) continue;
    }
    if (limit > 0 && static_cast<int64_t>(parts.size()) == limit - 1) break;
    parts.push_back(Value::string(s.substr(last, ms - last)));
    last = ms + ml;
  }
  parts.push_back(Value::string(s.substr(last)));
  return Value::array(std::move(parts));
}

ExprPtr buildSplit(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  if (args.size() == 2) args.push_back(makeLiteral(Value::integer(-1), DataType::of(TypeId::Int)));
  argBigInt(name, args, 2, pos);
  RegexPtr fixed = compileConstant(name, args[1], pos);
  return fn3(name, DataType::arrayOf(DataType::of(TypeId::String)), args,
             [fixed](const Value& s, const Value& p, const Value& l) {
               std::optional<std::regex> local;
               const std::regex* re = pick(fixed, p, local);
               if (!re) return Value();
               return splitValue(s.asString(), *re, l.asInt());
             });
}

ExprPtr buildRlike(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  RegexPtr fixed = compileConstant(name, args[1], pos);
  return fn2(name, DataType::of(TypeId::Boolean), args, [fixed](const Value& s, const Value& p) {
    std::optional<std::regex> local;
    const std::regex* re = pick(fixed, p, local);
    if (!re) return Value();
    return Value::boolean(std::regex_search(s.asString(), *re));
  });
}

}  // namespace

void registerRegexFunctions(FunctionTable& t) {
  t["regexp_extract"] = {2, 3, buildExtract};
  t["regexp_replace"] = {3, 3, buildReplace};
  t["split"] = {2, 3, buildSplit};
  t["rlike"] = {2, 2, buildRlike};
  t["regexp_like"] = {2, 2, buildRlike};
  t["regexp"] = {2, 2, buildRlike};
}

}  // namespace rtsql::expr_internal
