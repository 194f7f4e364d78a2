// Conversion functions: Spark's cast shorthands (int(x), bigint(x), string(x),
// ...), to_binary/try_to_binary, and encode/decode between strings and the
// bytes of a character set. A failed text conversion raises in ANSI mode and
// gives NULL in the legacy mode, as CAST does.
#include <fmt/format.h>

#include <simdjson.h>

#include "common/ansi_mode.h"
#include "common/functions/internal.h"
#include "common/hex.h"
#include "common/schema.h"

namespace rtsql::expr_internal {

std::string fmt_hex(uint64_t v);

namespace {

// int(x), bigint(x), tinyint(x), float(x), decimal(x), ...: CAST(x AS type);
// decimal(x) is DECIMAL(10, 0) as in Spark.
template <TypeId Target>
ExprPtr buildCastFn(const std::string&, std::vector<ExprPtr>& args, size_t pos) {
  return makeCast(args[0], DataType::of(Target), pos);
}

// The bytes `text` stands for in `format` (hex, utf-8, base64); false when
// the text is not valid in it.
bool toBinary(const std::string& text, std::string_view format, std::string* out) {
  std::string f = toLower(format);
  if (f == "utf-8" || f == "utf8") {
    *out = text;
    return true;
  }
  if (f == "base64") return fromBase64(text, out);
  return f == "hex" && decodeHex(text, *out);
}

// to_binary(str[, fmt]) (fmt hex by default) and try_to_binary: NULL for text
// that is not valid in the format. An unknown literal format is 22023.
ExprPtr buildToBinary(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  if (args.size() == 1)
    args.push_back(makeLiteral(Value::string("hex"), DataType::of(TypeId::String)));
  argString(name, args, 1, pos);
  // try_to_binary never raises: an unknown format gives NULL, as in Spark.
  if (auto c = constantValue(args[1]); c && !c->isNull() && name != "try_to_binary") {
    std::string f = toLower(c->asString());
    if (f != "hex" && f != "utf-8" && f != "utf8" && f != "base64")
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("{}: unknown format '{}'", name, c->asString()), pos,
                     "formats: 'hex', 'utf-8', 'base64'");
  }
  // In ANSI mode text that is not valid in its format is
  // CONVERSION_INVALID_INPUT, as Spark's to_binary raises (base64 as Spark
  // checks it: no spaces, padding only to complete the last unit);
  // try_to_binary is built in the legacy mode and answers NULL.
  const bool ansi = ansiMode();
  return fn2(name, DataType::of(TypeId::Binary), args, [ansi](const Value& s, const Value& f) {
    std::string out;
    bool ok = toBinary(s.asString(), f.asString(), &out);
    if (ansi && ok && iequals(f.asString(), "base64")) ok = sparkBase64Valid(s.asString());
    if (!ok && ansi) [[unlikely]]
      ansi::raise(ansi::kConversionInvalidInput,
                  fmt::format("to_binary: '{}' is not valid {}", s.asString().substr(0, 256),
                              f.asString().substr(0, 64)),
                  "try_to_binary");
    return ok ? Value::binary(std::move(out)) : Value();
  });
}

enum class Charset { Invalid, Utf8, Latin1, Ascii, Utf16, Utf16Be, Utf16Le, Utf32 };

// The character sets Spark's encode and decode take (any case), and no
// other name: 'utf8' or 'latin1' are unknown there too.
Charset charsetOf(std::string_view name) {
  std::string n = toUpper(name);
  if (n == "UTF-8") return Charset::Utf8;
  if (n == "ISO-8859-1") return Charset::Latin1;
  if (n == "US-ASCII") return Charset::Ascii;
  if (n == "UTF-16") return Charset::Utf16;
  if (n == "UTF-16BE") return Charset::Utf16Be;
  if (n == "UTF-16LE") return Charset::Utf16Le;
  if (n == "UTF-32") return Charset::Utf32;
  return Charset::Invalid;
}

constexpr const char* kCharsetHint =
    "character sets: 'UTF-8', 'US-ASCII', 'ISO-8859-1', 'UTF-16BE', 'UTF-16LE', 'UTF-16', "
    "'UTF-32'";

[[noreturn, gnu::cold]] void unknownCharset(const std::string& name, std::string_view charset,
                                            size_t pos) {
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("[INVALID_PARAMETER_VALUE.CHARSET] {}: unknown character set '{}'",
                             name, charset.substr(0, 64)),
                 pos, kCharsetHint);
}

[[noreturn, gnu::cold]] void malformedCoding(const char* name, std::string_view charset) {
  ansi::raise(ansi::kMalformedCharacterCoding,
              fmt::format("{}: the text cannot be coded in {}", name, charset));
}

// Code points of UTF-8 text; a malformed byte becomes U+FFFD.
std::vector<uint32_t> decodeUtf8(std::string_view s) {
  std::vector<uint32_t> cps;
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80             ? 1
               : (c & 0xE0) == 0xC0 ? 2
               : (c & 0xF0) == 0xE0 ? 3
               : (c & 0xF8) == 0xF0 ? 4
                                    : 0;
    if (n == 0 || i + n > s.size()) {
      cps.push_back(0xFFFD);
      ++i;
      continue;
    }
    uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    cps.push_back(cp);
    i += n;
  }
  return cps;
}

// encode(str, charset): the string's bytes in the charset; a character the
// charset lacks becomes '?', as Java's String.getBytes does, or sets
// `*unmappable` when it is given (ANSI mode raises for it, as Spark).
std::string encode(const std::string& s, Charset cs, bool* unmappable = nullptr) {
  if (cs == Charset::Utf8) return s;
  std::string out;
  if (cs == Charset::Utf32) {
    // Java writes UTF-32 big-endian without a byte order mark.
    for (uint32_t cp : decodeUtf8(s))
      for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((cp >> shift) & 0xFF);
    return out;
  }
  // Java writes UTF-16 big-endian after a byte order mark.
  if (cs == Charset::Utf16) {
    out = "\xFE\xFF";
    cs = Charset::Utf16Be;
  }
  for (uint32_t cp : decodeUtf8(s)) {
    if (cs == Charset::Latin1 || cs == Charset::Ascii) {
      const bool fits = cp < (cs == Charset::Ascii ? 0x80u : 0x100u);
      if (!fits && unmappable) *unmappable = true;
      out += fits ? static_cast<char>(cp) : '?';
      continue;
    }
    auto unit = [&](uint32_t u) {
      char hi = static_cast<char>(u >> 8), lo = static_cast<char>(u & 0xFF);
      out += cs == Charset::Utf16Be ? hi : lo;
      out += cs == Charset::Utf16Be ? lo : hi;
    };
    if (cp >= 0x10000) {
      unit(0xD800 + ((cp - 0x10000) >> 10));
      unit(0xDC00 + ((cp - 0x10000) & 0x3FF));
    } else {
      unit(cp);
    }
  }
  return out;
}

// decode(bytes, charset): the text; a malformed sequence becomes U+FFFD.
std::string decode(const std::string& b, Charset cs);

// Whether Java's decoder of the charset reports the bytes as malformed (ANSI
// mode raises for them, as Spark does): invalid UTF-8, a byte past 0x7F in
// US-ASCII, a lone surrogate or odd length in UTF-16, a length not a
// multiple of four or a code point past U+10FFFF in UTF-32.
bool malformedIn(const std::string& b, Charset cs) {
  switch (cs) {
    case Charset::Utf8: return !simdjson::validate_utf8(b.data(), b.size());
    case Charset::Ascii:
      for (char c : b)
        if (static_cast<unsigned char>(c) >= 0x80) return true;
      return false;
    case Charset::Utf16:
    case Charset::Utf16Be:
    case Charset::Utf16Le: {
      if (b.size() % 2 == 1) return true;
      bool le = cs == Charset::Utf16Le;
      size_t start = 0;
      if (cs == Charset::Utf16 && b.size() >= 2) {
        if (b.compare(0, 2, "\xFF\xFE") == 0) le = true;
        if (b.compare(0, 2, "\xFF\xFE") == 0 || b.compare(0, 2, "\xFE\xFF") == 0) start = 2;
      }
      auto unit = [&](size_t i) {
        auto h = static_cast<unsigned char>(b[i]), l = static_cast<unsigned char>(b[i + 1]);
        return le ? static_cast<uint32_t>(l << 8 | h) : static_cast<uint32_t>(h << 8 | l);
      };
      for (size_t i = start; i < b.size(); i += 2) {
        uint32_t u = unit(i);
        if (u >= 0xDC00 && u < 0xE000) return true;
        if (u >= 0xD800 && u < 0xDC00) {
          if (i + 3 >= b.size() || unit(i + 2) < 0xDC00 || unit(i + 2) >= 0xE000) return true;
          i += 2;
        }
      }
      return false;
    }
    case Charset::Utf32: {
      if (b.size() % 4 != 0) return true;
      for (size_t i = 0; i < b.size(); i += 4) {
        uint32_t be = 0, le = 0;
        for (int k = 0; k < 4; ++k) {
          be = be << 8 | static_cast<unsigned char>(b[i + k]);
          le = le << 8 | static_cast<unsigned char>(b[i + 3 - k]);
        }
        // A little-endian byte order mark at the start turns the order.
        if (i == 0 && le == 0xFEFF) {
          for (size_t j = 4; j < b.size(); j += 4) {
            uint32_t u = 0;
            for (int k = 3; k >= 0; --k) u = u << 8 | static_cast<unsigned char>(b[j + k]);
            if (u > 0x10FFFF) return true;
          }
          return false;
        }
        if (be > 0x10FFFF) return true;
      }
      return false;
    }
    default: return false;
  }
}

std::string decode(const std::string& b, Charset cs) {
  if (cs == Charset::Utf32) {
    // Big-endian unless a byte order mark says otherwise (it is left out); a
    // surrogate code point is '?', as Spark's string of it.
    std::string out;
    bool le = b.size() >= 4 && b.compare(0, 4, std::string("\xFF\xFE\0\0", 4)) == 0;
    size_t start = le || (b.size() >= 4 && b.compare(0, 4, std::string("\0\0\xFE\xFF", 4)) == 0)
                       ? 4
                       : 0;
    for (size_t i = start; i + 3 < b.size(); i += 4) {
      uint32_t u = 0;
      for (int k = 0; k < 4; ++k)
        u = u << 8 | static_cast<unsigned char>(b[le ? i + 3 - static_cast<size_t>(k) : i + k]);
      appendUtf8(out, u > 0x10FFFF ? 0xFFFD : (u >= 0xD800 && u < 0xE000) ? '?' : u);
    }
    if ((b.size() - start) % 4 != 0) appendUtf8(out, 0xFFFD);
    return out;
  }
  if (cs == Charset::Utf8) {
    std::string out;
    for (uint32_t cp : decodeUtf8(b)) appendUtf8(out, cp);
    return out;
  }
  std::string out;
  if (cs == Charset::Latin1 || cs == Charset::Ascii) {
    for (char c : b) {
      auto u = static_cast<unsigned char>(c);
      appendUtf8(out, cs == Charset::Ascii && u >= 0x80 ? 0xFFFD : u);
    }
    return out;
  }
  size_t start = 0;
  if (cs == Charset::Utf16) {
    // A byte order mark says which; big-endian without one, as in Java.
    cs = Charset::Utf16Be;
    if (b.size() >= 2 && b.compare(0, 2, "\xFF\xFE") == 0) cs = Charset::Utf16Le;
    if (b.size() >= 2 && (b.compare(0, 2, "\xFF\xFE") == 0 || b.compare(0, 2, "\xFE\xFF") == 0))
      start = 2;
  }
  for (size_t i = start; i + 1 < b.size(); i += 2) {
    auto h = static_cast<unsigned char>(b[i]), l = static_cast<unsigned char>(b[i + 1]);
    uint32_t u = cs == Charset::Utf16Be ? (h << 8 | l) : (l << 8 | h);
    if (u >= 0xD800 && u < 0xDC00 && i + 3 < b.size()) {
      auto h2 = static_cast<unsigned char>(b[i + 2]), l2 = static_cast<unsigned char>(b[i + 3]);
      uint32_t u2 = cs == Charset::Utf16Be ? (h2 << 8 | l2) : (l2 << 8 | h2);
      if (u2 >= 0xDC00 && u2 < 0xE000) {
        appendUtf8(out, 0x10000 + ((u - 0xD800) << 10) + (u2 - 0xDC00));
        i += 2;
        continue;
      }
    }
    appendUtf8(out, u >= 0xD800 && u < 0xE000 ? 0xFFFD : u);
  }
  if ((b.size() - start) % 2 == 1) appendUtf8(out, 0xFFFD);
  return out;
}

// A literal character set Spark does not know is refused when the statement
// is planned (a typo is an error), unless the text is a NULL literal:
// decode(NULL, 'bogus') is NULL, as in Spark, which checks the name only for
// a value. A computed one raises for each non-NULL value.
void constCharset(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  auto c = constantValue(args[1]);
  if (!c || c->isNull()) return;
  auto text = constantValue(args[0]);
  if (text && text->isNull()) return;
  if (charsetOf(c->asString()) == Charset::Invalid) unknownCharset(name, c->asString(), pos);
}

ExprPtr buildEncode(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  constCharset(name, args, pos);
  const bool ansi = ansiMode();
  return fn2(name, DataType::of(TypeId::Binary), args, [ansi, pos](const Value& s, const Value& c) {
    Charset cs = charsetOf(c.asString());
    if (cs == Charset::Invalid) unknownCharset("encode", c.asString(), pos);
    bool unmappable = false;
    std::string out = encode(s.asString(), cs, ansi ? &unmappable : nullptr);
    if (unmappable) malformedCoding("encode", c.asString());
    checkValueSize("encode", out.size());
    return Value::binary(std::move(out));
  });
}

ExprPtr buildDecode(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBinary(name, args, 0, pos);
  argString(name, args, 1, pos);
  constCharset(name, args, pos);
  const bool ansi = ansiMode();
  return fn2(name, DataType::of(TypeId::String), args, [ansi, pos](const Value& b, const Value& c) {
    Charset cs = charsetOf(c.asString());
    if (cs == Charset::Invalid) unknownCharset("decode", c.asString(), pos);
    if (ansi && malformedIn(b.asString(), cs)) [[unlikely]]
      malformedCoding("decode", c.asString());
    std::string out = decode(b.asString(), cs);
    checkValueSize("decode", out.size());
    return Value::string(std::move(out));
  });
}

}  // namespace

void registerConversionFunctions(FunctionTable& t) {
  t["int"] = {1, 1, buildCastFn<TypeId::Int>};
  t["smallint"] = {1, 1, buildCastFn<TypeId::SmallInt>};
  t["tinyint"] = {1, 1, buildCastFn<TypeId::TinyInt>};
  t["bigint"] = {1, 1, buildCastFn<TypeId::BigInt>};
  t["double"] = {1, 1, buildCastFn<TypeId::Double>};
  t["float"] = {1, 1, buildCastFn<TypeId::Float>};
  t["decimal"] = {1, 1, buildCastFn<TypeId::Decimal>};  // DECIMAL(10, 0), as in Spark
  t["string"] = {1, 1, buildCastFn<TypeId::String>};
  t["boolean"] = {1, 1, buildCastFn<TypeId::Boolean>};
  t["binary"] = {1, 1, buildCastFn<TypeId::Binary>};
  t["timestamp"] = {1, 1, buildCastFn<TypeId::Timestamp>};
  t["to_binary"] = {1, 2, buildToBinary};
  t["try_to_binary"] = {1, 2, buildToBinary};
  t["encode"] = {2, 2, buildEncode};
  t["decode"] = {2, 2, buildDecode};
}

}  // namespace rtsql::expr_internal
