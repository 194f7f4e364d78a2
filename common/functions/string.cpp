// String functions with Spark's semantics: lengths and positions count UTF-8
// characters, substring is 1-based with negative starts counting from the end,
// concat is NULL when any argument is, concat_ws skips NULLs. Functions whose
// result grows with an argument (lpad, repeat, space, format_string) check the
// size before they build it; loops over matches poll the interrupt check.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cwctype>
#include <locale.h>
#include <unordered_map>

#include "common/ansi_mode.h"
#include "common/functions/internal.h"
#include "common/interrupt.h"
#include "common/schema.h"

namespace rtsql::expr_internal {

namespace {

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

// Case mapping of one code point, simple (one code point to one), over all of
// Unicode: glibc's tables of the C.UTF-8 locale, read through a locale object
// of our own so the process's global locale stays as it is.
locale_t utf8Locale() {
  static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  return utf8;
}

// Whether a code point is an upper-case (lower-case) letter, as Java's
// Character.isUpperCase (isLowerCase) tells: 'ß' is lower case though it has
// no single upper-case letter.
bool isCase(uint32_t cp, bool upper) {
  if (cp < 0x80) return upper ? (cp >= 'A' && cp <= 'Z') : (cp >= 'a' && cp <= 'z');
  locale_t utf8 = utf8Locale();
  if (utf8 == static_cast<locale_t>(nullptr)) return false;
  auto w = static_cast<wint_t>(cp);
  return (upper ? iswupper_l(w, utf8) : iswlower_l(w, utf8)) != 0;
}

uint32_t mapCase(uint32_t cp, bool upper) {
  locale_t utf8 = utf8Locale();
  if (cp < 0x80) {
    if (upper && cp >= 'a' && cp <= 'z') return cp - 0x20;
    if (!upper && cp >= 'A' && cp <= 'Z') return cp + 0x20;
    return cp;
  }
  if (utf8 == static_cast<locale_t>(nullptr)) return cp;
  auto w = static_cast<wint_t>(cp);
  return static_cast<uint32_t>(upper ? towupper_l(w, utf8) : towlower_l(w, utf8));
}

// The unconditional full mappings of Unicode's SpecialCasing.txt that Java's
// String.toUpperCase applies (and so Spark): one character becomes several.
// Greek letters with a iota subscript keep their simple mapping (see docs/sql.md).
const char* fullUpper(uint32_t cp) {
  switch (cp) {
    case 0xDF: return "SS";
    case 0x149: return "\u02BCN";
    case 0x1F0: return "J\u030C";
    case 0x390: return "\u0399\u0308\u0301";
    case 0x3B0: return "\u03A5\u0308\u0301";
    case 0x587: return "\u0535\u0552";
    case 0x1E96: return "H\u0331";
    case 0x1E97: return "T\u0308";
    case 0x1E98: return "W\u030A";
    case 0x1E99: return "Y\u030A";
    case 0x1E9A: return "A\u02BE";
    case 0xFB00: return "FF";
    case 0xFB01: return "FI";
    case 0xFB02: return "FL";
    case 0xFB03: return "FFI";
    case 0xFB04: return "FFL";
    case 0xFB05:
    case 0xFB06: return "ST";
    case 0xFB13: return "\u0544\u0546";
    case 0xFB14: return "\u0544\u0535";
    case 0xFB15: return "\u0544\u053B";
    case 0xFB16: return "\u054E\u0546";
    case 0xFB17: return "\u0544\u053D";
    default: return nullptr;
  }
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
  out.reserve(s.size() + s.size() / 2);
  bool afterLetter = false;  // for the final sigma
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += static_cast<char>(Upper ? (c >= 'a' && c <= 'z' ? c - 32 : c) : (c >= 'A' && c <= 'Z' ? c + 32 : c));
      afterLetter = std::isalpha(c) != 0;
      ++i;
      continue;
    }
    size_t n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    if (n == 1 || i + n > s.size()) {
      out += static_cast<char>(c);
      afterLetter = false;
      ++i;
      continue;
    }
    uint32_t cp = n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    uint32_t m = mapCase(cp, Upper);
    const char* full = Upper ? fullUpper(cp) : nullptr;
    if (!Upper && cp == 0x130) {
      full = "i\u0307";  // İ: Java's lower case keeps the dot as a combining mark
    } else if (!Upper && cp == 0x3A3 && afterLetter) {
      // Σ ending a word is the final sigma ς, as Java's toLowerCase writes it.
      size_t j = i + n;
      bool letterNext = j < s.size() && (std::isalpha(static_cast<unsigned char>(s[j])) ||
                                         static_cast<unsigned char>(s[j]) >= 0x80);
      if (!letterNext) m = 0x3C2;
    }
    if (full != nullptr)
      out += full;
    else if (m == cp)
      out.append(s, i, n);
    else
      appendUtf8(out, m);
    afterLetter = m != cp || mapCase(cp, !Upper) != cp;
    i += n;
  }
  checkValueSize(Upper ? "upper" : "lower", out.size());
  return Value::string(std::move(out));
}

template <bool Upper>
ExprPtr buildCase(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fn1(name, stringType(), args, changeCase<Upper>);
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

// Spark's UTF8String.substringSQL; with `bytes`, positions count bytes and the
// result is BINARY, as Spark's substring of a BINARY value.
Value substringSql(const std::string& s, int64_t pos, int64_t len, bool bytes = false) {
  // Positions and lengths beyond any string's size behave alike; clamping them
  // keeps the arithmetic below far from overflow.
  constexpr int64_t kLimit = int64_t{1} << 40;
  pos = std::clamp(pos, -kLimit, kLimit);
  len = std::clamp(len, -kLimit, kLimit);
  auto n = static_cast<int64_t>(bytes ? s.size() : utf8Length(s));
  int64_t start = pos > 0 ? pos - 1 : (pos < 0 ? n + pos : 0);
  int64_t end = start + len;
  start = std::max<int64_t>(start, 0);
  if (start >= end || start >= n) return bytes ? Value::binary({}) : Value::string({});
  end = std::min(end, n);
  if (bytes) return Value::binary(s.substr(static_cast<size_t>(start), static_cast<size_t>(end - start)));
  size_t b = byteOffset(s, static_cast<size_t>(start));
  size_t e = b + byteOffset(std::string_view(s).substr(b), static_cast<size_t>(end - start));
  return Value::string(s.substr(b, e - b));
}

ExprPtr buildSubstring(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args[0]->type()->id == TypeId::Binary) {
    argBigInt(name, args, 1, pos);
    if (args.size() == 2) args.push_back(makeLiteral(Value::bigint(INT64_MAX / 2), DataType::of(TypeId::BigInt)));
    argBigInt(name, args, 2, pos);
    return fn3(name, DataType::of(TypeId::Binary), args, [](const Value& s, const Value& p, const Value& l) {
      return substringSql(s.asString(), p.asInt(), l.asInt(), true);
    });
  }
  argString(name, args, 0, pos);
  argBigInt(name, args, 1, pos);
  if (args.size() == 2)
    return fn2(name, stringType(), args, [](const Value& s, const Value& p) {
      return substringSql(s.asString(), p.asInt(), INT64_MAX / 2);
    });
  argBigInt(name, args, 2, pos);
  return fn3(name, stringType(), args, [](const Value& s, const Value& p, const Value& l) {
    return substringSql(s.asString(), p.asInt(), l.asInt());
  });
}

// concat of arrays joins them (NULL when any is NULL), as Spark's concat does.
ExprPtr buildArrayConcat(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  DataTypePtr t = argsCommon(name, args, 0, pos);
  if (t->id != TypeId::Array)
    throwArgError(name, args, pos, "the arguments must all be ARRAYs or all be strings");
  return fnN(name, t, args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    ValueList out;
    for (const auto& e : a) {
      Value v = e->eval(row);
      if (v.isNull()) return Value();
      checkValueSize("concat", (out.size() + v.asList().size()) * sizeof(Value));
      out.insert(out.end(), v.asList().begin(), v.asList().end());
    }
    return Value::array(std::move(out));
  });
}

ExprPtr buildConcat(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args[0]->type()->id == TypeId::Array) return buildArrayConcat(name, args, pos);
  // Spark's concat of BINARY values only is BINARY.
  bool binary = true;
  for (const auto& a : args) binary = binary && a->type()->id == TypeId::Binary;
  for (size_t i = 0; i < args.size() && !binary; ++i) argString(name, args, i, pos);
  return fnN(name, binary ? DataType::of(TypeId::Binary) : stringType(), args, true,
             [binary](const Row& row, const std::vector<ExprPtr>& a) {
    std::string out;
    for (const auto& e : a) {
      Value v = e->eval(row);
      if (v.isNull()) return Value();
      checkValueSize("concat", out.size() + v.asString().size());
      out += v.asString();
    }
    return binary ? Value::binary(std::move(out)) : Value::string(std::move(out));
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
  return fnN(name, stringType(), args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
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

// The code points of a UTF-8 string, for trimming by character: a byte of a
// multi-byte character is never a character to remove on its own.
std::vector<std::string_view> utf8Chars(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < s.size();) {
    size_t n = 1;
    while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) ++n;
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

// trim, btrim, ltrim, rtrim. With two arguments Spark's function form takes
// them in two orders: `trim(trimStr, str)`, `ltrim(trimStr, str)` and
// `rtrim(trimStr, str)` (as in `TRIM(trimStr FROM str)`), but
// `btrim(str, trimStr)`. Any character of trimStr is removed from the ends,
// whole characters only.
template <bool Left, bool Right>
ExprPtr buildTrim(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  for (size_t i = 0; i < args.size(); ++i) argString(name, args, i, pos);
  auto trim = [](const std::string& s, std::string_view chars) {
    size_t b = 0, e = s.size();
    bool ascii = true;
    for (char c : chars) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
    if (ascii) {
      // One lookup per byte of s, however long `chars` is (a search of
      // `chars` per byte would cost their product). An ASCII byte is never
      // part of a multi-byte character.
      std::array<bool, 256> drop{};
      for (char c : chars) drop[static_cast<unsigned char>(c)] = true;
      if (Left)
        while (b < e && drop[static_cast<unsigned char>(s[b])]) ++b;
      if (Right)
        while (e > b && drop[static_cast<unsigned char>(s[e - 1])]) --e;
      return Value::string(s.substr(b, e - b));
    }
    std::vector<std::string_view> set = utf8Chars(chars);
    std::sort(set.begin(), set.end());
    auto dropped = [&set](std::string_view c) { return std::binary_search(set.begin(), set.end(), c); };
    std::vector<std::string_view> cs = utf8Chars(s);
    size_t cb = 0, ce = cs.size();
    if (Left)
      while (cb < ce && dropped(cs[cb])) ++cb;
    if (Right)
      while (ce > cb && dropped(cs[ce - 1])) --ce;
    if (cb == ce) return Value::string("");
    b = static_cast<size_t>(cs[cb].data() - s.data());
    e = static_cast<size_t>(cs[ce - 1].data() + cs[ce - 1].size() - s.data());
    return Value::string(s.substr(b, e - b));
  };
  if (args.size() == 1)
    return fn1(name, stringType(), args, [trim](const Value& v) { return trim(v.asString(), " "); });
  if (name == "btrim")
    return fn2(name, stringType(), args, [trim](const Value& v, const Value& c) { return trim(v.asString(), c.asString()); });
  return fn2(name, stringType(), args, [trim](const Value& c, const Value& v) { return trim(v.asString(), c.asString()); });
}

ExprPtr buildReplace(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  for (size_t i = 0; i < args.size(); ++i) argString(name, args, i, pos);
  if (args.size() == 2) args.push_back(makeLiteral(Value::string(""), stringType()));
  return fn3(name, stringType(), args, [](const Value& sv, const Value& fv, const Value& rv) {
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
  return fn2(name, stringType(), args, [](const Value& s, const Value& n) {
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

// Length in bytes of the UTF-8 character starting at s[i] (1 for a stray byte).
size_t charLen(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80             ? 1
             : (c & 0xE0) == 0xC0 ? 2
             : (c & 0xF0) == 0xE0 ? 3
             : (c & 0xF8) == 0xF0 ? 4
                                  : 1;
  return std::min(n, s.size() - i);
}

// The code point of the character at s[i..i+n); a stray byte stands for itself.
uint32_t decodeAt(std::string_view s, size_t i, size_t n) {
  auto c = static_cast<unsigned char>(s[i]);
  if (n == 1) return c;
  uint32_t cp = n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return cp;
}

std::vector<uint32_t> codePoints(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = charLen(s, i);
    out.push_back(decodeAt(s, i, n));
    i += n;
  }
  return out;
}

// lpad/rpad(str, len[, pad]): Spark's UTF8String.lpad/rpad. The result has
// `len` characters: str cut to len, or str padded with repeats of pad; an
// empty pad leaves a shorter str as it is.
template <bool Left>
Value pad(const std::string& s, int64_t len, const std::string& p, bool bytes = false) {
  if (len <= 0) return bytes ? Value::binary({}) : Value::string({});
  auto n = static_cast<int64_t>(bytes ? s.size() : utf8Length(s));
  int64_t spaces = len - n;
  if (spaces <= 0 || p.empty()) return substringSql(s, 1, len, bytes);
  auto padChars = static_cast<int64_t>(bytes ? p.size() : utf8Length(p));
  int64_t full = spaces / padChars;
  size_t tail = bytes ? static_cast<size_t>(spaces % padChars) : byteOffset(p, static_cast<size_t>(spaces % padChars));
  // Checked before anything is built: len may ask for gigabytes.
  if (static_cast<uint64_t>(full) > kMaxValueBytes / p.size())
    checkValueSize(Left ? "lpad" : "rpad", kMaxValueBytes + 1);
  checkValueSize(Left ? "lpad" : "rpad", s.size() + static_cast<size_t>(full) * p.size() + tail);
  std::string out;
  out.reserve(s.size() + static_cast<size_t>(full) * p.size() + tail);
  if (!Left) out += s;
  for (int64_t i = 0; i < full; ++i) out += p;
  out.append(p, 0, tail);
  if (Left) out += s;
  return bytes ? Value::binary(std::move(out)) : Value::string(std::move(out));
}

template <bool Left>
ExprPtr buildPad(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  // BINARY in, BINARY out, padded with bytes (zero bytes by default), as Spark.
  if (args[0]->type()->id == TypeId::Binary &&
      (args.size() == 2 || args[2]->type()->id == TypeId::Binary)) {
    argBigInt(name, args, 1, pos);
    if (args.size() == 2) args.push_back(makeLiteral(Value::binary(std::string(1, '\0')), DataType::of(TypeId::Binary)));
    return fn3(name, DataType::of(TypeId::Binary), args, [](const Value& s, const Value& l, const Value& p) {
      return pad<Left>(s.asString(), l.asInt(), p.asString(), true);
    });
  }
  argString(name, args, 0, pos);
  argBigInt(name, args, 1, pos);
  if (args.size() == 2) args.push_back(makeLiteral(Value::string(" "), stringType()));
  argString(name, args, 2, pos);
  return fn3(name, stringType(), args, [](const Value& s, const Value& l, const Value& p) {
    return pad<Left>(s.asString(), l.asInt(), p.asString());
  });
}

ExprPtr buildRepeat(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argBigInt(name, args, 1, pos);
  return fn2(name, stringType(), args, [](const Value& sv, const Value& nv) {
    const std::string& s = sv.asString();
    int64_t n = nv.asInt();
    if (n <= 0 || s.empty()) return Value::string({});
    if (static_cast<uint64_t>(n) > kMaxValueBytes / s.size())
      checkValueSize("repeat", kMaxValueBytes + 1);
    checkValueSize("repeat", s.size() * static_cast<size_t>(n));
    std::string out;
    out.reserve(s.size() * static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out += s;
    return Value::string(std::move(out));
  });
}

// reverse(str) reverses characters (not bytes); reverse(array) its elements.
ExprPtr buildReverse(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args[0]->type()->id == TypeId::Array)
    return fn1(name, args[0]->type(), args, [](const Value& v) {
      ValueList items(v.asList().rbegin(), v.asList().rend());
      return Value::array(std::move(items));
    });
  argString(name, args, 0, pos);
  return fn1(name, stringType(), args, [](const Value& v) {
    const std::string& s = v.asString();
    std::string out(s.size(), '\0');
    size_t w = s.size();
    for (size_t i = 0; i < s.size();) {
      size_t n = charLen(s, i);
      w -= n;
      std::memcpy(out.data() + w, s.data() + i, n);
      i += n;
    }
    return Value::string(std::move(out));
  });
}

// The title case of a character whose upper case is several (SpecialCasing's
// title column, as Java's and so Spark's initcap gives it): the upper case up
// to its first cased letter, the rest lower case ('ß' is "Ss", 'ﬁ' "Fi", 'ŉ'
// "ʼN").
void appendFullTitle(std::string& out, const char* upper) {
  std::string_view u(upper);
  bool cased = false;
  for (size_t i = 0; i < u.size();) {
    size_t n = charLen(u, i);
    uint32_t cp = decodeAt(u, i, n);
    uint32_t lower = mapCase(cp, false);
    appendUtf8(out, cased ? lower : cp);
    cased = cased || lower != cp;
    i += n;
  }
}

// The title case of one character: its upper case, but for the four
// digraphs that have a title form of their own ('ǆ' is 'ǅ', not 'Ǆ').
uint32_t titleCase(uint32_t cp) {
  switch (cp) {
    case 0x1C4: case 0x1C5: case 0x1C6: return 0x1C5;
    case 0x1C7: case 0x1C8: case 0x1C9: return 0x1C8;
    case 0x1CA: case 0x1CB: case 0x1CC: return 0x1CB;
    case 0x1F1: case 0x1F2: case 0x1F3: return 0x1F2;
    default: return mapCase(cp, true);
  }
}

// initcap: Spark lower-cases the string, then title-cases each character that
// follows a space (or starts the string).
ExprPtr buildInitcap(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fn1(name, stringType(), args, [](const Value& v) {
    const std::string& s = v.asString();
    std::string out;
    out.reserve(s.size());
    bool start = true;
    for (size_t i = 0; i < s.size();) {
      size_t n = charLen(s, i);
      uint32_t cp = decodeAt(s, i, n);
      bool valid = n > 1 || cp < 0x80;
      uint32_t m = !valid ? cp : start ? titleCase(cp) : mapCase(cp, false);
      if (const char* full = start && valid ? fullUpper(cp) : nullptr)
        appendFullTitle(out, full);
      else if (m == cp)
        out.append(s, i, n);
      else
        appendUtf8(out, m);
      start = cp == ' ';
      i += n;
    }
    return Value::string(std::move(out));
  });
}

// translate(src, from, to): each character of `from` becomes the character at
// the same place in `to`, or is removed when `to` is shorter. The first
// occurrence of a character in `from` wins.
ExprPtr buildTranslate(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  for (size_t i = 0; i < 3; ++i) argString(name, args, i, pos);
  return fn3(name, stringType(), args, [](const Value& sv, const Value& fv, const Value& tv) {
    std::vector<uint32_t> from = codePoints(fv.asString());
    std::vector<uint32_t> to = codePoints(tv.asString());
    std::unordered_map<uint32_t, int64_t> dict;  // -1: remove
    for (size_t k = 0; k < from.size(); ++k)
      dict.emplace(from[k], k < to.size() ? static_cast<int64_t>(to[k]) : -1);
    const std::string& s = sv.asString();
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
      size_t n = charLen(s, i);
      auto it = dict.find(decodeAt(s, i, n));
      if (it == dict.end())
        out.append(s, i, n);
      else if (it->second >= 0)
        appendUtf8(out, static_cast<uint32_t>(it->second));
      i += n;
    }
    // A one-byte character may become a four-byte one.
    checkValueSize("translate", out.size());
    return Value::string(std::move(out));
  });
}

// 1-based character position of `sub` in `s` at or after character `from`
// (1-based), 0 when absent.
int32_t locateFrom(const std::string& sub, const std::string& s, int64_t from) {
  if (from < 1) return 0;
  if (sub.empty()) return 1;  // Spark: an empty substring is found at once
  auto n = static_cast<int64_t>(utf8Length(s));
  if (from - 1 > n) return 0;
  size_t k = findSubstring(s, sub, byteOffset(s, static_cast<size_t>(from - 1)));
  if (k == std::string::npos) return 0;
  return static_cast<int32_t>(utf8Length(std::string_view(s).substr(0, k)) + 1);
}

// locate(substr, str[, pos]) and position(substr, str[, pos]).
ExprPtr buildLocate(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  if (args.size() == 2) args.push_back(makeLiteral(Value::integer(1), DataType::of(TypeId::Int)));
  argBigInt(name, args, 2, pos);
  return fn3(name, DataType::of(TypeId::Int), args,
             [](const Value& sub, const Value& s, const Value& p) {
               return Value::integer(locateFrom(sub.asString(), s.asString(), p.asInt()));
             });
}

ExprPtr buildAscii(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fn1(name, DataType::of(TypeId::Int), args, [](const Value& v) {
    const std::string& s = v.asString();
    if (s.empty()) return Value::integer(0);
    return Value::integer(static_cast<int32_t>(decodeAt(s, 0, charLen(s, 0))));
  });
}

// chr(n): the character with code (n mod 256), '' for a negative n, as Spark.
ExprPtr buildChr(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBigInt(name, args, 0, pos);
  return fn1(name, stringType(), args, [](const Value& v) {
    int64_t n = v.asInt();
    if (n < 0) return Value::string({});
    std::string out;
    appendUtf8(out, static_cast<uint32_t>(n & 0xFF));
    return Value::string(std::move(out));
  });
}

ExprPtr buildSpace(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBigInt(name, args, 0, pos);
  return fn1(name, stringType(), args, [](const Value& v) {
    int64_t n = v.asInt();
    if (n <= 0) return Value::string({});
    checkValueSize("space", static_cast<uint64_t>(n) > kMaxValueBytes ? kMaxValueBytes + 1
                                                                      : static_cast<size_t>(n));
    return Value::string(std::string(static_cast<size_t>(n), ' '));
  });
}

template <int BitsPerByte>
ExprPtr buildByteLength(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args[0]->type()->id != TypeId::Binary) argString(name, args, 0, pos);
  return fn1(name, DataType::of(TypeId::Int), args, [](const Value& v) {
    return Value::integer(static_cast<int32_t>(v.asString().size() * BitsPerByte));
  });
}

// The byte offsets of the pieces of s between occurrences of delim.
std::vector<std::pair<size_t, size_t>> splitOn(const std::string& s, const std::string& delim) {
  std::vector<std::pair<size_t, size_t>> parts;
  size_t i = 0;
  unsigned n = 0;
  while (true) {
    if (++n % 256 == 0) throwIfInterrupted();
    size_t k = findSubstring(s, delim, i);
    if (k == std::string::npos) break;
    parts.emplace_back(i, k);
    i = k + delim.size();
  }
  parts.emplace_back(i, s.size());
  return parts;
}

// split_part(str, delim, n): the n-th piece (negative counts from the end), ''
// when there is none; n = 0 is an error, as in Spark.
ExprPtr buildSplitPart(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  argBigInt(name, args, 2, pos);
  return fn3(name, stringType(), args, [](const Value& sv, const Value& dv, const Value& nv) {
    int64_t n = nv.asInt();
    if (n == 0)
      throw SqlError(sqlstate::kInvalidParameterValue, "split_part: the part number must not be 0",
                     SqlError::npos, "parts count from 1; a negative number counts from the end");
    const std::string& s = sv.asString();
    const std::string& d = dv.asString();
    if (d.empty()) return Value::string(n == 1 || n == -1 ? s : std::string());
    auto parts = splitOn(s, d);
    auto count = static_cast<int64_t>(parts.size());
    if (n > count || n < -count) return Value::string({});
    auto [b, e] = parts[static_cast<size_t>(n > 0 ? n - 1 : count + n)];
    return Value::string(s.substr(b, e - b));
  });
}

// substring_index(str, delim, count): the text before the count-th occurrence
// of delim (after the count-th from the end when count < 0). Occurrences may
// overlap, as Spark finds them.
ExprPtr buildSubstringIndex(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  argBigInt(name, args, 2, pos);
  return fn3(name, stringType(), args, [](const Value& sv, const Value& dv, const Value& cv) {
    const std::string& s = sv.asString();
    const std::string& d = dv.asString();
    int64_t count = cv.asInt();
    if (count == 0 || d.empty() || s.empty()) return Value::string({});
    // Searching the reversed text from the left finds occurrences from the right.
    std::string rs, rd;
    if (count < 0) {
      rs.assign(s.rbegin(), s.rend());
      rd.assign(d.rbegin(), d.rend());
    }
    const std::string& text = count > 0 ? s : rs;
    const std::string& needle = count > 0 ? d : rd;
    int64_t want = count > 0 ? count : -count;
    size_t at = std::string::npos;
    size_t from = 0;
    for (int64_t i = 0; i < want; ++i) {
      if ((i + 1) % 256 == 0) throwIfInterrupted();
      at = findSubstring(text, needle, from);
      if (at == std::string::npos) return sv;
      from = at + 1;
    }
    if (count > 0) return Value::string(s.substr(0, at));
    return Value::string(s.substr(s.size() - at));
  });
}

// overlay(input, replace, pos[, len]): input with len characters from pos
// replaced (len defaults to replace's length).
ExprPtr buildOverlay(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  // BINARY over BINARY works on bytes and gives BINARY, as Spark.
  bool bytes = args[0]->type()->id == TypeId::Binary && args[1]->type()->id == TypeId::Binary;
  if (!bytes) {
    argString(name, args, 0, pos);
    argString(name, args, 1, pos);
  }
  argBigInt(name, args, 2, pos);
  if (args.size() == 4) argBigInt(name, args, 3, pos);
  return fnN(name, bytes ? DataType::of(TypeId::Binary) : stringType(), args, true,
             [bytes](const Row& row, const std::vector<ExprPtr>& a) {
    Value in = a[0]->eval(row);
    if (in.isNull()) return Value();
    Value rep = a[1]->eval(row);
    if (rep.isNull()) return Value();
    Value p = a[2]->eval(row);
    if (p.isNull()) return Value();
    int64_t len;
    if (a.size() == 4) {
      Value l = a[3]->eval(row);
      if (l.isNull()) return Value();
      len = l.asInt();
    } else {
      len = static_cast<int64_t>(bytes ? rep.asString().size() : utf8Length(rep.asString()));
    }
    constexpr int64_t kLimit = int64_t{1} << 40;
    int64_t start = std::clamp(p.asInt(), -kLimit, kLimit);
    len = std::clamp(len, -kLimit, kLimit);
    std::string out = substringSql(in.asString(), 1, start - 1, bytes).asString();
    checkValueSize("overlay", out.size() + rep.asString().size() + in.asString().size());
    out += rep.asString();
    out += substringSql(in.asString(), start + len, kLimit, bytes).asString();
    return bytes ? Value::binary(std::move(out)) : Value::string(std::move(out));
  });
}

// soundex: Spark's (American Soundex, H and W ignored between letters); a
// string that does not start with an ASCII letter is returned as it is.
ExprPtr buildSoundex(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fn1(name, stringType(), args, [](const Value& v) {
    static constexpr char kCodes[] = "01230127022455012623017202";
    const std::string& s = v.asString();
    if (s.empty()) return v;
    char b = s[0];
    if (b >= 'a' && b <= 'z')
      b = static_cast<char>(b - 32);
    else if (b < 'A' || b > 'Z')
      return v;
    std::string sx = "0000";
    sx[0] = b;
    size_t k = 1;
    char last = kCodes[b - 'A'];
    for (size_t i = 1; i < s.size() && k < 4; ++i) {
      char c = s[i];
      if (c >= 'a' && c <= 'z')
        c = static_cast<char>(c - 32);
      else if (c < 'A' || c > 'Z') {
        last = '0';
        continue;
      }
      char code = kCodes[c - 'A'];
      if (code == '7') continue;
      if (code != '0' && code != last) sx[k++] = code;
      last = code;
    }
    return Value::string(std::move(sx));
  });
}

// The edit distance between two strings in characters. Two rows of the
// table; the interrupt check runs between rows, since two long values cost
// the product of their lengths.
int64_t levenshtein(const std::string& as, const std::string& bs) {
  std::vector<uint32_t> a = codePoints(as), b = codePoints(bs);
  if (a.size() < b.size()) std::swap(a, b);
  if (b.empty()) return static_cast<int64_t>(a.size());
  std::vector<int64_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int64_t>(j);
  size_t work = 0;
  for (size_t i = 1; i <= a.size(); ++i) {
    work += b.size();
    if (work >= (1u << 20)) {
      work = 0;
      throwIfInterrupted();
    }
    cur[0] = static_cast<int64_t>(i);
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] =
          std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// levenshtein(a, b[, threshold]): -1 when the distance is over the threshold.
ExprPtr buildLevenshtein(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  if (args.size() == 2)
    return fn2(name, DataType::of(TypeId::Int), args, [](const Value& a, const Value& b) {
      return Value::integer(static_cast<int32_t>(levenshtein(a.asString(), b.asString())));
    });
  argInt(name, args, 2, pos);
  return fn3(name, DataType::of(TypeId::Int), args,
             [](const Value& a, const Value& b, const Value& t) {
               int64_t d = levenshtein(a.asString(), b.asString());
               return Value::integer(d > t.asInt() ? -1 : static_cast<int32_t>(d));
             });
}

ExprPtr buildContains(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  return fn2(name, DataType::of(TypeId::Boolean), args, [](const Value& s, const Value& sub) {
    return Value::boolean(findSubstring(s.asString(), sub.asString()) != std::string::npos);
  });
}

// find_in_set(str, 'a,b,c'): 1-based index of str in the list, 0 when absent
// or when str holds a comma.
ExprPtr buildFindInSet(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  return fn2(name, DataType::of(TypeId::Int), args, [](const Value& sv, const Value& lv) {
    const std::string& s = sv.asString();
    const std::string& list = lv.asString();
    if (s.find(',') != std::string::npos) return Value::integer(0);
    int32_t index = 1;
    size_t i = 0;
    while (true) {
      size_t k = list.find(',', i);
      size_t e = k == std::string::npos ? list.size() : k;
      if (list.compare(i, e - i, s) == 0) return Value::integer(index);
      if (k == std::string::npos) return Value::integer(0);
      i = k + 1;
      ++index;
    }
  });
}

// elt(n, a, b, ...): the n-th argument (1-based), NULL when out of range.
ExprPtr buildElt(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args.size() < 2) throwArgError(name, args, pos, "expects an index and at least one value");
  argBigInt(name, args, 0, pos);
  DataTypePtr t = argsCommon(name, args, 1, pos);
  const bool ansi = ansiMode();
  return fnN(name, t, args, true, [ansi](const Row& row, const std::vector<ExprPtr>& a) {
    Value n = a[0]->eval(row);
    if (n.isNull()) return Value();
    int64_t k = n.asInt();
    if (k < 1 || k >= static_cast<int64_t>(a.size())) [[unlikely]] {
      if (ansi)
        ansi::raise(ansi::kInvalidArrayIndex,
                    fmt::format("the index {} is out of bounds: elt() has {} values", k,
                                a.size() - 1));
      return Value();
    }
    return a[static_cast<size_t>(k)]->eval(row);
  });
}

// luhn_check(digits): whether a string of digits passes the Luhn checksum.
ExprPtr buildLuhnCheck(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fn1(name, DataType::of(TypeId::Boolean), args, [](const Value& v) {
    const std::string& s = v.asString();
    if (s.empty()) return Value::boolean(false);
    int sum = 0;
    bool twice = false;
    for (size_t i = s.size(); i-- > 0;) {
      char c = s[i];
      if (c < '0' || c > '9') return Value::boolean(false);
      int d = c - '0';
      if (twice) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
      sum += d;
      twice = !twice;
    }
    return Value::boolean(sum % 10 == 0);
  });
}

// Inserts Java's grouping commas into the integer digits of a formatted number.
std::string groupDigits(const std::string& num) {
  size_t b = 0;
  while (b < num.size() && (num[b] < '0' || num[b] > '9')) ++b;
  size_t e = b;
  while (e < num.size() && num[e] >= '0' && num[e] <= '9') ++e;
  std::string out = num.substr(0, b);
  for (size_t i = b; i < e; ++i) {
    out += num[i];
    size_t left = e - i - 1;
    if (left > 0 && left % 3 == 0) out += ',';
  }
  out += num.substr(e);
  return out;
}

// %.Nf and %.Ne of a finite double as Java's Formatter writes them (and so
// Spark's printf): the shortest decimal text that reads back as the double,
// rounded HALF_UP to the precision, and padded with zeros past its digits.
// printf('%.2f', 0.125) is 0.13 and 2.675 gives 2.68, where C's binary
// rounding gives 0.12 and 2.67.
std::string javaFloat(double d, int precision, char conv, bool plus, bool space) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, std::fabs(d), std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  size_t epos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, epos))
    if (c != '.') digits += c;
  int exp10 = std::stoi(std::string(sci.substr(epos + 1)));
  // Keeps the first `keep` digits, rounding HALF_UP on the next one; returns
  // whether a carry added a digit in front.
  auto round = [&digits](long keep) {
    if (keep <= 0) {
      bool up = keep == 0 && digits[0] >= '5';
      digits = up ? "1" : "0";
      return false;
    }
    bool up = static_cast<size_t>(keep) < digits.size() && digits[static_cast<size_t>(keep)] >= '5';
    digits.resize(static_cast<size_t>(keep), '0');
    if (!up) return false;
    for (size_t i = digits.size(); i-- > 0;) {
      if (digits[i] != '9') {
        ++digits[i];
        return false;
      }
      digits[i] = '0';
    }
    digits.insert(0, "1");
    return true;
  };
  std::string out = std::signbit(d) ? "-" : plus ? "+" : space ? " " : "";
  if (conv == 'e') {
    if (d == 0) exp10 = 0;
    if (round(precision + 1)) {
      digits.pop_back();
      ++exp10;
    }
    out += digits[0];
    if (precision > 0) out += "." + digits.substr(1);
    out += fmt::format("e{}{:02}", exp10 < 0 ? '-' : '+', std::abs(exp10));
    return out;
  }
  // digits is now round(|d| * 10^precision) as an integer.
  if (d == 0)
    digits = "0";
  else
    round(static_cast<long>(exp10) + 1 + precision);
  size_t nz = digits.find_first_not_of('0');
  digits = nz == std::string::npos ? "0" : digits.substr(nz);
  if (digits.size() < static_cast<size_t>(precision) + 1)
    digits.insert(0, static_cast<size_t>(precision) + 1 - digits.size(), '0');
  out += digits.substr(0, digits.size() - static_cast<size_t>(precision));
  if (precision > 0) out += "." + digits.substr(digits.size() - static_cast<size_t>(precision));
  return out;
}

[[noreturn]] void formatError(const std::string& what) {
  throw SqlError(sqlstate::kInvalidParameterValue, "format_string: " + what, SqlError::npos,
                 "conversions: %s %d %x %o %f %e %g %c %b %%, with flags - + 0 , and space, width "
                 "and .precision");
}

// format_string(fmt, args...) / printf: Java's Formatter for the common
// conversions. A NULL argument prints as "null", as in Java; a width or
// precision is capped by the value size limit.
std::string javaFormat(const std::string& f, const std::vector<Value>& args) {
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < f.size();) {
    if (f[i] != '%') {
      out += f[i++];
      continue;
    }
    size_t j = i + 1;
    // argument_index$
    size_t argIndex = 0;
    {
      size_t k = j;
      uint64_t n = 0;
      while (k < f.size() && f[k] >= '0' && f[k] <= '9' && n < 1000000)
        n = n * 10 + static_cast<uint64_t>(f[k++] - '0');
      if (k > j && k < f.size() && f[k] == '$') {
        if (n == 0) formatError("argument index 0");
        argIndex = static_cast<size_t>(n);
        j = k + 1;
      }
    }
    std::string flags;
    while (j < f.size() && std::string_view("-+ 0,#").find(f[j]) != std::string_view::npos)
      flags += f[j++];
    uint64_t width = 0;
    while (j < f.size() && f[j] >= '0' && f[j] <= '9' && width < kMaxValueBytes)
      width = width * 10 + static_cast<uint64_t>(f[j++] - '0');
    int64_t precision = -1;
    if (j < f.size() && f[j] == '.') {
      ++j;
      precision = 0;
      while (j < f.size() && f[j] >= '0' && f[j] <= '9' && precision < 1000)
        precision = precision * 10 + (f[j++] - '0');
    }
    if (j >= f.size()) formatError("the format ends inside a conversion");
    char conv = f[j++];
    i = j;
    checkValueSize("format_string", out.size() + width);
    if (conv == '%') {
      out += '%';
      continue;
    }
    if (conv == 'n') {
      out += '\n';
      continue;
    }
    size_t ai = argIndex > 0 ? argIndex - 1 : next++;
    if (ai >= args.size()) formatError("too few arguments for the format");
    const Value& v = args[ai];
    std::string piece;
    bool left = flags.find('-') != std::string::npos;
    bool zero = flags.find('0') != std::string::npos;
    bool upper = conv >= 'A' && conv <= 'Z';
    char lc = static_cast<char>(upper ? conv + 32 : conv);
    if (v.isNull() && lc != 'b') {
      // Java prints "null" for any conversion, cut to the precision.
      piece = "null";
      if (precision >= 0 && precision < 4) piece.resize(static_cast<size_t>(precision));
      zero = false;
    } else {
      switch (lc) {
        case 's':
          piece = v.type() == TypeId::String || v.type() == TypeId::Binary ? v.asString()
                  : v.type() == TypeId::Double ? formatDouble(v.asDouble())
                                               : v.toString();
          if (precision >= 0) piece = substringSql(piece, 1, precision).asString();
          break;
        case 'b':
          piece = v.isNull()                    ? "false"
                  : v.type() == TypeId::Boolean ? (v.asBool() ? "true" : "false")
                                                : "true";
          break;
        case 'c': {
          if (v.type() == TypeId::String && utf8Length(v.asString()) == 1) {
            piece = v.asString();
          } else if (v.type() == TypeId::Int || v.type() == TypeId::BigInt) {
            appendUtf8(piece, static_cast<uint32_t>(v.asInt()) & 0x1FFFFF);
          } else {
            formatError("%c needs a character or an integer");
          }
          break;
        }
        case 'd':
        case 'x':
        case 'o': {
          if (v.type() != TypeId::Int && v.type() != TypeId::BigInt)
            formatError(std::string("%") + conv + " needs an integer argument, got " +
                        typeIdName(v.type()));
          int64_t n = v.asInt();
          if (lc == 'd') {
            std::string digits = std::to_string(n);
            if (flags.find(',') != std::string::npos) digits = groupDigits(digits);
            if (n >= 0 && flags.find('+') != std::string::npos)
              digits.insert(0, "+");
            else if (n >= 0 && flags.find(' ') != std::string::npos)
              digits.insert(0, " ");
            piece = digits;
          } else {
            // Java prints a negative number in two's complement of its width.
            uint64_t u =
                v.type() == TypeId::Int ? static_cast<uint32_t>(n) : static_cast<uint64_t>(n);
            piece = lc == 'x' ? fmt::format("{:x}", u) : fmt::format("{:o}", u);
            if (flags.find('#') != std::string::npos) piece.insert(0, lc == 'x' ? "0x" : "0");
          }
          break;
        }
        case 'f':
        case 'e':
        case 'g': {
          if (v.type() != TypeId::Double)
            formatError(std::string("%") + conv + " needs a DOUBLE argument, got " +
                        typeIdName(v.type()));
          double d = v.asDouble();
          if (std::isnan(d) || std::isinf(d)) {
            piece = std::isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity";
            zero = false;
          } else {
            int p = static_cast<int>(precision < 0 ? 6 : precision);
            bool plus = flags.find('+') != std::string::npos, space = flags.find(' ') != std::string::npos;
            if (lc != 'g') {
              checkValueSize("format_string", out.size() + static_cast<size_t>(p) + 330);
              piece = javaFloat(d, p, lc, plus, space);
            } else {
              char spec[16];
              std::snprintf(spec, sizeof spec, "%%%s.%d%c", plus ? "+" : space ? " " : "", p, lc);
              char buf[512];
              int len = std::snprintf(buf, sizeof buf, spec, d);
              if (len < 0 || static_cast<size_t>(len) >= sizeof buf) {
                std::string big(static_cast<size_t>(std::max(len, 0)) + 1, '\0');
                std::snprintf(big.data(), big.size(), spec, d);
                big.pop_back();
                piece = big;
              } else {
                piece.assign(buf, static_cast<size_t>(len));
              }
            }
            if (lc == 'f' && flags.find(',') != std::string::npos) piece = groupDigits(piece);
          }
          break;
        }
        default:
          formatError(std::string("unknown conversion %") + conv);
      }
    }
    if (upper) piece = toUpper(piece);
    size_t chars = utf8Length(piece);
    if (width > chars) {
      size_t fill = static_cast<size_t>(width) - chars;
      if (left) {
        piece.append(fill, ' ');
      } else if (zero) {
        size_t at =
            !piece.empty() && (piece[0] == '-' || piece[0] == '+' || piece[0] == ' ') ? 1 : 0;
        if (piece.compare(at, 2, "0x") == 0) at += 2;
        piece.insert(at, fill, '0');
      } else {
        piece.insert(0, fill, ' ');
      }
    }
    checkValueSize("format_string", out.size() + piece.size());
    out += piece;
  }
  return out;
}

ExprPtr buildFormatString(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fnN(name, stringType(), args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    Value f = a[0]->eval(row);
    if (f.isNull()) return Value();
    std::vector<Value> vals;
    vals.reserve(a.size() - 1);
    for (size_t i = 1; i < a.size(); ++i) vals.push_back(a[i]->eval(row));
    return Value::string(javaFormat(f.asString(), vals));
  });
}

// like(str, pattern) is str LIKE pattern; ilike compares lower-cased.
template <bool IgnoreCase>
ExprPtr buildLikeFn(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  if (IgnoreCase) {
    for (size_t i = 0; i < 2; ++i) {
      std::vector<ExprPtr> a{args[i]};
      args[i] = buildCase<false>("lower", a, pos);
    }
  }
  return makeLike(args[0], args[1], false, pos);
}

// x's plain decimal digits with d decimals, rounded half even (Java's
// DecimalFormat): "-1234.50". NaN and the infinities are the caller's.
std::string decimalDigits(const Value& x, int64_t d) {
  if (x.type() == TypeId::Double) {
    double v = x.asDouble();
    // Past 2^53 a double has no fraction: Java's DecimalFormat prints its
    // shortest digits and zeros (1e308 is 1 and 308 zeros), not the exact
    // binary expansion.
    return std::fabs(v) >= 9007199254740992.0 ? javaFloat(v, static_cast<int>(d), 'f', false, false)
                                               : fmt::format("{:.{}f}", v, d);
  }
  std::string num = std::to_string(x.asInt());
  if (d > 0) num += "." + std::string(static_cast<size_t>(d), '0');
  return num;
}

// The part of a java.text.DecimalFormat pattern format_number takes: literal
// text before and after one number of '#', '0', ',' and '.', optionally in
// scientific notation ('0.###E0', engineering '##0.##E0') ("$#,##0.00 USD").
// Per-mille, quotes and a negative subpattern are refused rather than printed
// as text.
struct NumberPattern {
  std::string prefix, suffix;
  int minInt = 0, maxInt = 0, minFrac = 0, maxFrac = 0;
  int grouping = 0;  // digits between separators; 0 for none
  bool dotAlways = false;
  bool percent = false;  // the number times 100
  int minExpDigits = 0;  // scientific notation: the '0's after 'E'; 0 for none
};

bool parseNumberPattern(std::string_view p, NumberPattern* out) {
  if (p.find_first_of("';") != std::string_view::npos ||
      p.find("\u2030") != std::string_view::npos || p.find("\u00a4") != std::string_view::npos) {
    return false;
  }
  size_t b = p.find_first_of("#0,.");
  if (b == std::string_view::npos) return false;
  size_t e = p.find_first_not_of("#0,.", b);
  if (e == std::string_view::npos) e = p.size();
  std::string_view body = p.substr(b, e - b);
  // 'E' right after the number starts its exponent, as in Java: one or more
  // '0's, the least number of exponent digits.
  size_t suffixAt = e;
  if (e < p.size() && p[e] == 'E') {
    suffixAt = p.find_first_not_of('0', e + 1);
    if (suffixAt == std::string_view::npos) suffixAt = p.size();
    out->minExpDigits = static_cast<int>(suffixAt - e - 1);
    if (out->minExpDigits == 0) return false;
  }
  if (p.find_first_of("#0,.", suffixAt) != std::string_view::npos) return false;
  out->prefix = std::string(p.substr(0, b));
  out->suffix = std::string(p.substr(suffixAt));
  // A '%' in the text multiplies by 100, as in Java; one at most.
  const auto percents = std::count(p.begin(), p.end(), '%');
  if (percents > 1) return false;
  out->percent = percents == 1;
  // Java's DecimalFormat.applyPattern: '#'s before the first '0' (left),
  // '0's, '#'s after them (right), where the point falls, and the digits
  // after the last ','.
  int left = 0, zeros = 0, right = 0, decimalPos = -1, groupingCount = -1;
  for (char c : body) {
    if (c == '#' || c == '0') {
      if (c == '0') {
        if (right > 0) return false;  // a '0' after a '#' that follows a '0'
        ++zeros;
      } else {
        (zeros > 0 ? right : left) += 1;
      }
      if (groupingCount >= 0 && decimalPos < 0) ++groupingCount;
    } else if (c == ',') {
      if (decimalPos >= 0) return false;
      groupingCount = 0;
    } else if (decimalPos >= 0) {
      return false;  // a second '.'
    } else {
      decimalPos = left + zeros + right;
    }
  }
  if (left + zeros + right == 0 || groupingCount == 0) return false;
  if (zeros == 0 && decimalPos >= 0) {
    // "#.##" reads as "0.##" and ".##" as ".0#", as in Java.
    int n = decimalPos == 0 ? 1 : decimalPos;
    right = left - n;
    left = n - 1;
    zeros = 1;
  }
  const int total = left + zeros + right;
  out->minInt = (decimalPos >= 0 ? decimalPos : total) - left;
  // In scientific notation the '#'s before the first '0' count too: more
  // integer digits than the least repeat the exponent by that many
  // (engineering notation).
  out->maxInt = out->minExpDigits > 0 ? left + out->minInt : 0;
  out->maxFrac = decimalPos >= 0 ? total - decimalPos : 0;
  out->minFrac = decimalPos >= 0 ? left + zeros - decimalPos : 0;
  out->grouping = std::max(groupingCount, 0);
  out->dotAlways = decimalPos == 0 || decimalPos == total;
  return true;
}

// The significant digits of |x| (times 100 for a percent) as Java's DigitList
// holds them: no trailing zeros (none at all for zero), the value being
// 0.digits times 10^decimalAt, rounded HALF_EVEN to `maxDigits` digits. A
// double's digits are its shortest decimal text, rounded on its exact value.
struct SignificantDigits {
  std::string digits;
  int decimalAt = 0;
};

SignificantDigits significantDigits(const Value& x, bool percent, int maxDigits) {
  SignificantDigits out;
  auto stripZeros = [&out] {
    size_t last = out.digits.find_last_not_of('0');
    out.digits.resize(last == std::string::npos ? 0 : last + 1);
  };
  if (x.type() == TypeId::Double) {
    double v = std::fabs(x.asDouble()) * (percent ? 100 : 1);
    if (v == 0) return out;
    char buf[64];
    auto scientific = [&](std::to_chars_result r) {
      std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));
      size_t epos = sci.find('e');
      out.digits.clear();
      for (char c : sci.substr(0, epos))
        if (c != '.') out.digits += c;
      out.decimalAt = std::stoi(std::string(sci.substr(epos + 1))) + 1;
      stripZeros();
    };
    scientific(std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific));
    if (static_cast<int>(out.digits.size()) > maxDigits)
      scientific(std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, maxDigits - 1));
    return out;
  }
  const int64_t n = x.asInt();
  out.digits = std::to_string(n < 0 ? -static_cast<uint64_t>(n) : static_cast<uint64_t>(n));
  if (n == 0) return {};
  if (percent) out.digits += "00";
  out.decimalAt = static_cast<int>(out.digits.size());
  stripZeros();
  if (static_cast<int>(out.digits.size()) > maxDigits) {
    const auto keep = static_cast<size_t>(maxDigits);
    const char next = out.digits[keep];
    const bool rest = out.digits.find_first_not_of('0', keep + 1) != std::string::npos;
    const bool up = next > '5' || (next == '5' && (rest || (out.digits[keep - 1] - '0') % 2 == 1));
    out.digits.resize(keep);
    size_t i = keep;
    while (up && i > 0 && out.digits[i - 1] == '9') out.digits[--i] = '0';
    if (up && i == 0) {
      out.digits.insert(0, "1");
      ++out.decimalAt;
    } else if (up) {
      ++out.digits[i - 1];
    }
    stripZeros();
  }
  return out;
}

// x in a scientific pattern, as Java's DecimalFormat writes it: the mantissa's
// least integer digits set by moving the exponent, or, when the pattern allows
// more integer digits than its least (engineering, '##0.##E0'), an exponent
// that is a multiple of that many; at most maxInt + maxFrac significant
// digits; no grouping; the exponent with its least digits and a '-' only.
std::string formatScientific(const Value& x, const NumberPattern& p) {
  const bool negative = x.type() == TypeId::Double ? std::signbit(x.asDouble()) : x.asInt() < 0;
  const SignificantDigits d = significantDigits(x, p.percent, std::max(p.maxInt + p.maxFrac, 1));
  const bool zero = d.digits.empty();
  int exponent = d.decimalAt;
  int minInt = p.minInt;
  const int repeat = p.maxInt;
  if (repeat > 1 && repeat > p.minInt) {
    exponent = exponent >= 1 ? ((exponent - 1) / repeat) * repeat : ((exponent - repeat) / repeat) * repeat;
    minInt = 1;
  } else {
    exponent -= minInt;
  }
  const int integerDigits = zero ? minInt : d.decimalAt - exponent;
  const int minDigits = std::max(p.minInt + p.minFrac, integerDigits);
  const int totalDigits = std::max(minDigits, static_cast<int>(d.digits.size()));
  std::string out = (negative ? "-" : "") + p.prefix;
  for (int i = 0; i < totalDigits; ++i) {
    if (i == integerDigits) out += '.';
    out += i < static_cast<int>(d.digits.size()) ? d.digits[static_cast<size_t>(i)] : '0';
  }
  if (p.dotAlways && totalDigits == integerDigits) out += '.';
  if (zero) exponent = 0;
  out += 'E';
  if (exponent < 0) out += '-';
  std::string e = std::to_string(std::abs(exponent));
  if (static_cast<int>(e.size()) < p.minExpDigits) e.insert(0, static_cast<size_t>(p.minExpDigits) - e.size(), '0');
  out += e + p.suffix;
  return out;
}

// format_number(x, 'pattern'), as Spark's DecimalFormat(pattern) with
// Locale.US and HALF_EVEN rounding; an empty pattern groups a whole number.
std::string formatByPattern(const Value& x, const NumberPattern& p) {
  if (x.type() == TypeId::Double && !std::isfinite(x.asDouble())) {
    double v = x.asDouble();
    if (std::isnan(v)) return "NaN";
    return (v < 0 ? "-" : "") + p.prefix + "\u221e" + p.suffix;
  }
  if (p.minExpDigits > 0) return formatScientific(x, p);
  std::string num;
  if (!p.percent) {
    num = decimalDigits(x, p.maxFrac);
  } else if (x.type() == TypeId::Double) {
    num = decimalDigits(Value::float64(x.asDouble() * 100), p.maxFrac);
  } else {
    // An integer times 100 is its digits and two zeros, past 64 bits too.
    num = decimalDigits(x, p.maxFrac);
    size_t dot = std::min(num.find('.'), num.size());
    if (num != "0" && num.compare(0, 2, "0.") != 0) num.insert(dot, "00");
  }
  bool negative = !num.empty() && num[0] == '-';
  if (negative) num.erase(0, 1);
  size_t dot = num.find('.');
  std::string ip = num.substr(0, dot);
  std::string fp = dot == std::string::npos ? std::string() : num.substr(dot + 1);
  while (static_cast<int>(fp.size()) > p.minFrac && fp.back() == '0') fp.pop_back();
  size_t lead = ip.find_first_not_of('0');
  ip = lead == std::string::npos ? std::string() : ip.substr(lead);
  if (static_cast<int>(ip.size()) < p.minInt)
    ip.insert(0, static_cast<size_t>(p.minInt) - ip.size(), '0');
  // Java prints a zero rather than nothing at all.
  if (ip.empty() && fp.empty()) ip = "0";
  std::string grouped;
  for (size_t i = 0; i < ip.size(); ++i) {
    grouped += ip[i];
    size_t left = ip.size() - i - 1;
    if (p.grouping > 0 && left > 0 && left % static_cast<size_t>(p.grouping) == 0) grouped += ',';
  }
  std::string out = (negative ? "-" : "") + p.prefix + grouped;
  if (!fp.empty() || p.dotAlways) out += "." + fp;
  out += p.suffix;
  return out;
}

[[noreturn]] void throwNumberPattern(std::string_view pattern, size_t pos) {
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("format_number does not take the pattern '{}'", pattern), pos,
                 "write a pattern of '#', '0', ',' and '.' between literal text, such as "
                 "'#,##0.00' or '0.###E0'");
}

// format_number(x, d): x with d decimals (rounded half even) and grouping
// commas, as Java's DecimalFormat('#,##0.00'); NULL for a negative d.
// format_number(x, 'pattern'): x as that DecimalFormat pattern writes it.
ExprPtr buildFormatNumber(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argNumeric(name, args, 0, pos);
  if (args[1]->type()->id == TypeId::String) {
    // One pattern per statement in practice: parsed once when literal.
    std::shared_ptr<const NumberPattern> fixed;
    if (auto c = constantValue(args[1]); c && !c->isNull()) {
      auto p = std::make_shared<NumberPattern>();
      std::string text = c->asString().empty() ? "#,###,###,###,###,###,##0" : c->asString();
      if (!parseNumberPattern(text, p.get())) throwNumberPattern(c->asString(), pos);
      fixed = std::move(p);
    }
    return fn2(name, stringType(), args, [fixed, pos](const Value& x, const Value& pv) {
      if (fixed) return Value::string(formatByPattern(x, *fixed));
      NumberPattern p;
      std::string text = pv.asString().empty() ? "#,###,###,###,###,###,##0" : pv.asString();
      if (!parseNumberPattern(text, &p)) throwNumberPattern(pv.asString(), pos);
      return Value::string(formatByPattern(x, p));
    });
  }
  argInt(name, args, 1, pos);
  return fn2(name, stringType(), args, [](const Value& x, const Value& dv) {
    int64_t d = dv.asInt();
    if (d < 0) return Value();
    d = std::min<int64_t>(d, 340);
    if (x.type() == TypeId::Double) {
      double v = x.asDouble();
      if (std::isnan(v)) return Value::string("NaN");
      if (std::isinf(v)) return Value::string(v > 0 ? "∞" : "-∞");
    }
    return Value::string(groupDigits(decimalDigits(x, d)));
  });
}

// mask(str[, upper, lower, digit, other]): upper-case letters become 'X',
// lower-case 'x', digits 'n', other characters stay; a NULL replacement leaves
// its class as it is.
ExprPtr buildMask(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  static const char* kDefaults[] = {"X", "x", "n"};
  for (size_t i = args.size(); i < 5; ++i)
    args.push_back(i < 4 ? makeLiteral(Value::string(kDefaults[i - 1]), stringType())
                         : makeLiteral(Value(), stringType()));
  for (size_t i = 0; i < 5; ++i) argString(name, args, i, pos);
  return fnN(name, stringType(), args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    Value s = a[0]->eval(row);
    if (s.isNull()) return Value();
    Value rep[4];
    for (size_t i = 0; i < 4; ++i) rep[i] = a[i + 1]->eval(row);
    const std::string& text = s.asString();
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
      size_t n = charLen(text, i);
      uint32_t cp = decodeAt(text, i, n);
      bool letter = n > 1 || cp < 0x80;
      int cls = cp >= '0' && cp <= '9'               ? 2
                : letter && isCase(cp, true)         ? 0
                : letter && isCase(cp, false)        ? 1
                                                     : 3;
      const Value& r = rep[cls];
      if (r.isNull() || r.asString().empty())
        out.append(text, i, n);
      else
        out.append(r.asString(), 0, byteOffset(r.asString(), 1));
      i += n;
    }
    checkValueSize("mask", out.size());
    return Value::string(std::move(out));
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
  t["lpad"] = {2, 3, buildPad<true>};
  t["rpad"] = {2, 3, buildPad<false>};
  t["repeat"] = {2, 2, buildRepeat};
  t["reverse"] = {1, 1, buildReverse};
  t["initcap"] = {1, 1, buildInitcap};
  t["translate"] = {3, 3, buildTranslate};
  t["locate"] = {2, 3, buildLocate};
  t["position"] = {2, 3, buildLocate};
  t["ascii"] = {1, 1, buildAscii};
  t["chr"] = {1, 1, buildChr};
  t["char"] = {1, 1, buildChr};
  t["space"] = {1, 1, buildSpace};
  t["octet_length"] = {1, 1, buildByteLength<1>};
  t["bit_length"] = {1, 1, buildByteLength<8>};
  t["len"] = {1, 1, buildLength};
  t["split_part"] = {3, 3, buildSplitPart};
  t["substring_index"] = {3, 3, buildSubstringIndex};
  t["overlay"] = {3, 4, buildOverlay};
  t["soundex"] = {1, 1, buildSoundex};
  t["levenshtein"] = {2, 3, buildLevenshtein};
  t["contains"] = {2, 2, buildContains};
  t["find_in_set"] = {2, 2, buildFindInSet};
  t["elt"] = {2, -1, buildElt};
  t["luhn_check"] = {1, 1, buildLuhnCheck};
  t["format_string"] = {1, -1, buildFormatString};
  t["printf"] = {1, -1, buildFormatString};
  t["like"] = {2, 2, buildLikeFn<false>};
  t["ilike"] = {2, 2, buildLikeFn<true>};
  t["format_number"] = {2, 2, buildFormatNumber};
  t["mask"] = {1, 5, buildMask};
}

}  // namespace rtsql::expr_internal
