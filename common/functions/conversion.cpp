// Conversion functions: Spark's cast shorthands (int(x), bigint(x), string(x),
// ...), to_binary/try_to_binary, and encode/decode between strings and the
// bytes of a character set. A failed text conversion gives NULL, as CAST does.
#include <fmt/format.h>

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
  return fn2(name, DataType::of(TypeId::Binary), args, [](const Value& s, const Value& f) {
    std::string out;
    return toBinary(s.asString(), f.asString(), &out) ? Value::binary(std::move(out)) : Value();
  });
}

enum class Charset { Invalid, Utf8, Latin1, Ascii, Utf16, Utf16Be, Utf16Le };

Charset charsetOf(std::string_view name) {
  std::string n = toUpper(name);
  if (n == "UTF-8" || n == "UTF8") return Charset::Utf8;
  if (n == "ISO-8859-1" || n == "LATIN1") return Charset::Latin1;
  if (n == "US-ASCII" || n == "ASCII") return Charset::Ascii;
  if (n == "UTF-16") return Charset::Utf16;
  if (n == "UTF-16BE") return Charset::Utf16Be;
  if (n == "UTF-16LE") return Charset::Utf16Le;
  return Charset::Invalid;
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
// charset lacks becomes '?', as Java's String.getBytes does.
std::string encode(const std::string& s, Charset cs) {
  if (cs == Charset::Utf8) return s;
  std::string out;
  // Java writes UTF-16 big-endian after a byte order mark.
  if (cs == Charset::Utf16) {
    out = "\xFE\xFF";
    cs = Charset::Utf16Be;
  }
  for (uint32_t cp : decodeUtf8(s)) {
    if (cs == Charset::Latin1 || cs == Charset::Ascii) {
      out += cp < (cs == Charset::Ascii ? 0x80u : 0x100u) ? static_cast<char>(cp) : '?';
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
std::string decode(const std::string& b, Charset cs) {
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

Charset constCharset(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  auto c = constantValue(args[1]);
  if (!c || c->isNull()) return Charset::Invalid;
  Charset cs = charsetOf(c->asString());
  if (cs == Charset::Invalid)
    throw SqlError(
        sqlstate::kInvalidParameterValue,
        fmt::format("{}: unknown character set '{}'", name, c->asString()), pos,
        "character sets: 'UTF-8', 'US-ASCII', 'ISO-8859-1', 'UTF-16BE', 'UTF-16LE', 'UTF-16'");
  return cs;
}

ExprPtr buildEncode(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  constCharset(name, args, pos);
  return fn2(name, DataType::of(TypeId::Binary), args, [](const Value& s, const Value& c) {
    Charset cs = charsetOf(c.asString());
    if (cs == Charset::Invalid) return Value();
    std::string out = encode(s.asString(), cs);
    checkValueSize("encode", out.size());
    return Value::binary(std::move(out));
  });
}

ExprPtr buildDecode(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBinary(name, args, 0, pos);
  argString(name, args, 1, pos);
  constCharset(name, args, pos);
  return fn2(name, DataType::of(TypeId::String), args, [](const Value& b, const Value& c) {
    Charset cs = charsetOf(c.asString());
    if (cs == Charset::Invalid) return Value();
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
