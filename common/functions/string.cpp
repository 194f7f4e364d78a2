// String functions with Spark's semantics: lengths and positions count UTF-8
// characters, substring is 1-based with negative starts counting from the end,
// concat is NULL when any argument is, concat_ws skips NULLs.
#include <algorithm>
#include <array>

#include "common/functions/internal.h"

namespace rtsql::expr_internal {

namespace {

const DataTypePtr& str() {
  static const DataTypePtr t = DataType::of(TypeId::String);
  return t;
}

inline bool isCont(unsigned char c) { return (c & 0xC0) == 0x80; }

// Byte offset of the character with index `chars` (clamped to the end).
size_t byteOffset(std::string_view s, size_t chars) {
  size_t i = 0;
  while (i < s.size() && chars > 0) {
    ++i;
    while (i < s.size() && isCont(static_cast<unsigned char>(s[i]))) ++i;
    --chars;
  }
  return i;
}

void appendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Case mapping for ASCII, Latin-1, Greek and Cyrillic: the scripts whose case
// pairs sit at fixed offsets. Other characters pass through unchanged.
uint32_t mapCase(uint32_t cp, bool upper) {
  if (upper) {
    if ((cp >= 'a' && cp <= 'z') || (cp >= 0xE0 && cp <= 0xFE && cp != 0xF7) ||
        (cp >= 0x3B1 && cp <= 0x3C9 && cp != 0x3C2) || (cp >= 0x430 && cp <= 0x44F))
      return cp - 0x20;
    if (cp >= 0x450 && cp <= 0x45F) return cp - 0x50;
  } else {
    if ((cp >= 'A' && cp <= 'Z') || (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) ||
        (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) || (cp >= 0x410 && cp <= 0x42F))
      return cp + 0x20;
    if (cp >= 0x400 && cp <= 0x40F) return cp + 0x50;
  }
  return cp;
}

template <bool Upper>
Value changeCase(const Value& v) {
  const std::string& s = v.asString();
  // Fast path: pure ASCII text is mapped in place in one pass.
  {
    std::string out = s;
    bool ascii = true;
    for (char& ch : out) {
      auto c = static_cast<unsigned char>(ch);
      if (c >= 0x80) {
        ascii = false;
        break;
      }
      if (Upper ? (c >= 'a' && c <= 'z') : (c >= 'A' && c <= 'Z')) ch = static_cast<char>(c ^ 0x20);
    }
    if (ascii) return Value::string(std::move(out));
  }
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += static_cast<char>(Upper ? (c >= 'a' && c <= 'z' ? c - 32 : c) : (c >= 'A' && c <= 'Z' ? c + 32 : c));
      ++i;
      continue;
    }
    size_t n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    if (n == 1 || i + n > s.size()) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    uint32_t cp = n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    uint32_t m = mapCase(cp, Upper);
    if (m == cp)
      out.append(s, i, n);
    else
      appendUtf8(out, m);
    i += n;
  }
  return Value::string(std::move(out));
}

template <bool Upper>
ExprPtr buildCase(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fn1(name, str(), args, changeCase<Upper>);
}

ExprPtr buildLength(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  // Binary length counts bytes; string length counts characters.
  if (args[0]->type()->id == TypeId::Binary)
    return fn1(name, DataType::of(TypeId::Int), args,
               [](const Value& v) { return Value::integer(static_cast<int32_t>(v.asString().size())); });
  argString(name, args, 0, pos);
  return fn1(name, DataType::of(TypeId::Int), args,
             [](const Value& v) { return Value::integer(static_cast<int32_t>(utf8Length(v.asString()))); });
}

// Spark's UTF8String.substringSQL.
Value substringSql(const std::string& s, int64_t pos, int64_t len) {
  // Positions and lengths beyond any string's size behave alike; clamping them
  // keeps the arithmetic below far from overflow.
  constexpr int64_t kLimit = int64_t{1} << 40;
  pos = std::clamp(pos, -kLimit, kLimit);
  len = std::clamp(len, -kLimit, kLimit);
  auto n = static_cast<int64_t>(utf8Length(s));
  int64_t start = pos > 0 ? pos - 1 : (pos < 0 ? n + pos : 0);
  int64_t end = start + len;
  start = std::max<int64_t>(start, 0);
  if (start >= end || start >= n) return Value::string({});
  end = std::min(end, n);
  size_t b = byteOffset(s, static_cast<size_t>(start));
  size_t e = b + byteOffset(std::string_view(s).substr(b), static_cast<size_t>(end - start));
  return Value::string(s.substr(b, e - b));
}

ExprPtr buildSubstring(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argBigInt(name, args, 1, pos);
  if (args.size() == 2)
    return fn2(name, str(), args, [](const Value& s, const Value& p) {
      return substringSql(s.asString(), p.asInt(), INT64_MAX / 2);
    });
  argBigInt(name, args, 2, pos);
  return fn3(name, str(), args, [](const Value& s, const Value& p, const Value& l) {
    return substringSql(s.asString(), p.asInt(), l.asInt());
  });
}

ExprPtr buildConcat(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  for (size_t i = 0; i < args.size(); ++i) argString(name, args, i, pos);
  return fnN(name, str(), args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    std::string out;
    for (const auto& e : a) {
      Value v = e->eval(row);
      if (v.isNull()) return Value();
      checkValueSize("concat", out.size() + v.asString().size());
      out += v.asString();
    }
    return Value::string(std::move(out));
  });
}

ExprPtr buildConcatWs(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  for (size_t i = 1; i < args.size(); ++i) {
    const auto& t = args[i]->type();
    // Arrays of strings are flattened, as in Spark.
    if (t->id == TypeId::Array && t->element && (t->element->id == TypeId::String || isNullType(t->element)))
      continue;
    argString(name, args, i, pos);
  }
  return fnN(name, str(), args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    Value sep = a[0]->eval(row);
    if (sep.isNull()) return Value();
    std::string out;
    bool first = true;
    auto add = [&](const Value& v) {
      if (v.isNull()) return;
      checkValueSize("concat_ws", out.size() + sep.asString().size() + v.asString().size());
      if (!first) out += sep.asString();
      first = false;
      out += v.asString();
    };
    for (size_t i = 1; i < a.size(); ++i) {
      Value v = a[i]->eval(row);
      if (v.type() == TypeId::Array)
        for (const auto& item : v.asList()) add(item);
      else
        add(v);
    }
    return Value::string(std::move(out));
  });
}

template <bool Left, bool Right>
ExprPtr buildTrim(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  auto trim = [](const std::string& s, std::string_view chars) {
    size_t b = 0, e = s.size();
    if (chars.size() <= 4) {
      if (Left)
        while (b < e && chars.find(s[b]) != std::string_view::npos) ++b;
      if (Right)
        while (e > b && chars.find(s[e - 1]) != std::string_view::npos) --e;
      return Value::string(s.substr(b, e - b));
    }
    // A table of the bytes to remove: one lookup per byte of s, however long
    // `chars` is (a search of `chars` per byte would cost their product).
    std::array<bool, 256> drop{};
    for (char c : chars) drop[static_cast<unsigned char>(c)] = true;
    if (Left)
      while (b < e && drop[static_cast<unsigned char>(s[b])]) ++b;
    if (Right)
      while (e > b && drop[static_cast<unsigned char>(s[e - 1])]) --e;
    return Value::string(s.substr(b, e - b));
  };
  if (args.size() == 1)
    return fn1(name, str(), args, [trim](const Value& v) { return trim(v.asString(), " "); });
  // trim(str, chars): remove any of `chars` (single-byte characters) from the ends.
  argString(name, args, 1, pos);
  return fn2(name, str(), args, [trim](const Value& v, const Value& c) { return trim(v.asString(), c.asString()); });
}

ExprPtr buildReplace(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  for (size_t i = 0; i < args.size(); ++i) argString(name, args, i, pos);
  if (args.size() == 2) args.push_back(makeLiteral(Value::string(""), str()));
  return fn3(name, str(), args, [](const Value& sv, const Value& fv, const Value& rv) {
    const std::string& s = sv.asString();
    const std::string& f = fv.asString();
    if (f.empty()) return sv;
    std::string out;
    out.reserve(s.size());
    size_t i = 0;
    while (true) {
      size_t k = findSubstring(s, f, i);
      if (k == std::string::npos) break;
      checkValueSize("replace", out.size() + (k - i) + rv.asString().size() + (s.size() - k - f.size()));
      out.append(s, i, k - i);
      out += rv.asString();
      i = k + f.size();
    }
    out.append(s, i, std::string::npos);
    return Value::string(std::move(out));
  });
}

ExprPtr buildInstr(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  return fn2(name, DataType::of(TypeId::Int), args, [](const Value& s, const Value& sub) {
    size_t k = findSubstring(s.asString(), sub.asString());
    if (k == std::string::npos) return Value::integer(0);
    return Value::integer(static_cast<int32_t>(utf8Length(std::string_view(s.asString()).substr(0, k)) + 1));
  });
}

template <bool Left>
ExprPtr buildLeftRight(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argBigInt(name, args, 1, pos);
  return fn2(name, str(), args, [](const Value& s, const Value& n) {
    int64_t k = n.asInt();
    if (k <= 0) return Value::string({});
    if (Left) return substringSql(s.asString(), 1, k);
    return substringSql(s.asString(), -k, k);
  });
}

ExprPtr buildStartsEnds(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  bool starts = name == "startswith";
  return fn2(name, DataType::of(TypeId::Boolean), args, [starts](const Value& s, const Value& p) {
    const auto& a = s.asString();
    const auto& b = p.asString();
    if (b.size() > a.size()) return Value::boolean(false);
    return Value::boolean(starts ? a.compare(0, b.size(), b) == 0 : a.compare(a.size() - b.size(), b.size(), b) == 0);
  });
}

}  // namespace

void registerStringFunctions(FunctionTable& t) {
  t["lower"] = {1, 1, buildCase<false>};
  t["lcase"] = {1, 1, buildCase<false>};
  t["upper"] = {1, 1, buildCase<true>};
  t["ucase"] = {1, 1, buildCase<true>};
  t["length"] = {1, 1, buildLength};
  t["char_length"] = {1, 1, buildLength};
  t["character_length"] = {1, 1, buildLength};
  t["substring"] = {2, 3, buildSubstring};
  t["substr"] = {2, 3, buildSubstring};
  t["concat"] = {1, -1, buildConcat};
  t["concat_ws"] = {1, -1, buildConcatWs};
  t["trim"] = {1, 2, buildTrim<true, true>};
  t["btrim"] = {1, 2, buildTrim<true, true>};
  t["ltrim"] = {1, 2, buildTrim<true, false>};
  t["rtrim"] = {1, 2, buildTrim<false, true>};
  t["replace"] = {2, 3, buildReplace};
  t["instr"] = {2, 2, buildInstr};
  t["left"] = {2, 2, buildLeftRight<true>};
  t["right"] = {2, 2, buildLeftRight<false>};
  t["startswith"] = {2, 2, buildStartsEnds};
  t["endswith"] = {2, 2, buildStartsEnds};
}

}  // namespace rtsql::expr_internal
