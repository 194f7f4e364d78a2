// Encoding and hashing functions: base64 unbase64 hex unhex md5 sha1 sha2
// hmac crc32 hash xxhash64.
// Digests use OpenSSL's EVP API. hash() is Spark's: Murmur3_x86_32 with seed 42,
// chained over the arguments, with Spark's treatment of each type (including its
// byte-at-a-time tail for strings), so hash('Spark', array(123), 2) gives the
// same INT here as in Spark; xxhash64() is Spark's XXH64 with seed 42 under the
// same rules.
#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <cctype>
#include <cstring>

#include "common/ansi_mode.h"
#include "common/crc32.h"
#include "common/digest.h"
#include "common/hex.h"
#include "common/functions/internal.h"
#include "common/spark_hash.h"

namespace rtsql::expr_internal {

std::string fmt_hex(uint64_t v);

namespace {

inline uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
inline uint32_t mixK1(uint32_t k1) {
  k1 *= 0xcc9e2d51u;
  k1 = rotl(k1, 15);
  return k1 * 0x1b873593u;
}
inline uint32_t mixH1(uint32_t h1, uint32_t k1) {
  h1 ^= k1;
  h1 = rotl(h1, 13);
  return h1 * 5 + 0xe6546b64u;
}
inline uint32_t fmix(uint32_t h1, uint32_t length) {
  h1 ^= length;
  h1 ^= h1 >> 16;
  h1 *= 0x85ebca6bu;
  h1 ^= h1 >> 13;
  h1 *= 0xc2b2ae35u;
  h1 ^= h1 >> 16;
  return h1;
}

uint32_t hashInt(uint32_t v, uint32_t seed) { return fmix(mixH1(seed, mixK1(v)), 4); }

uint32_t hashLong(uint64_t v, uint32_t seed) {
  uint32_t h = mixH1(seed, mixK1(static_cast<uint32_t>(v)));
  h = mixH1(h, mixK1(static_cast<uint32_t>(v >> 32)));
  return fmix(h, 8);
}

uint32_t hashBytes(std::string_view b, uint32_t seed) {
  uint32_t h = seed;
  size_t aligned = b.size() - b.size() % 4;
  for (size_t i = 0; i < aligned; i += 4) {
    uint32_t k;
    std::memcpy(&k, b.data() + i, 4);  // little-endian, as Spark reads it on x86
    h = mixH1(h, mixK1(k));
  }
  for (size_t i = aligned; i < b.size(); ++i) {
    // Spark mixes each trailing byte on its own, sign-extended.
    auto sb = static_cast<int32_t>(static_cast<signed char>(b[i]));
    h = mixH1(h, mixK1(static_cast<uint32_t>(sb)));
  }
  return fmix(h, static_cast<uint32_t>(b.size()));
}

std::string digest(const EVP_MD* md, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), out, &len, md, nullptr) != 1) return {};
  return lowerHex(std::string_view(reinterpret_cast<const char*>(out), len));
}

ExprPtr buildBase64(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBinary(name, args, 0, pos);
  return fn1(name, stringType(), args, [](const Value& v) {
    checkValueSize("base64", (v.asString().size() + 2) / 3 * 4);
    return Value::string(toBase64(v.asString()));
  });
}

// unbase64(s): in ANSI mode text Java's MIME decoder refuses (Spark's
// unbase64 raises for it, IllegalArgumentException) is CONVERSION_INVALID_INPUT;
// the legacy mode decodes what it can.
ExprPtr buildUnbase64(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  const bool ansi = ansiMode();
  return fn1(name, DataType::of(TypeId::Binary), args, [ansi](const Value& v) {
    if (ansi) {
      if (const char* why = javaMimeBase64Error(v.asString())) [[unlikely]]
        ansi::raise(ansi::kConversionInvalidInput,
                    fmt::format("unbase64: '{}' is not base64: {}",
                                v.asString().substr(0, 256), why),
                    "try_to_binary(s, 'base64')");
      // As the MIME decoder: the characters outside the alphabet are skipped.
      std::string kept;
      for (char c : v.asString())
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '=')
          kept += c;
      std::string out;
      return fromBase64(kept, &out) ? Value::binary(std::move(out)) : Value();
    }
    std::string out;
    return fromBase64(v.asString(), &out) ? Value::binary(std::move(out)) : Value();
  });
}

ExprPtr buildHex(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args[0]->type()->isIntegral()) {
    return fn1(name, stringType(), args, [](const Value& v) {
      std::string s = fmt_hex(static_cast<uint64_t>(v.asInt()));
      return Value::string(std::move(s));
    });
  }
  argBinary(name, args, 0, pos);
  return fn1(name, stringType(), args, [](const Value& v) {
    checkValueSize("hex", v.asString().size() * 2);
    std::string h = lowerHex(v.asString());
    for (auto& c : h) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return Value::string(std::move(h));
  });
}

ExprPtr buildMd5(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBinary(name, args, 0, pos);
  return fn1(name, stringType(), args, [](const Value& v) { return Value::string(digest(EVP_md5(), v.asString())); });
}

ExprPtr buildSha1(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBinary(name, args, 0, pos);
  return fn1(name, stringType(), args, [](const Value& v) { return Value::string(digest(EVP_sha1(), v.asString())); });
}

ExprPtr buildSha2(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBinary(name, args, 0, pos);
  argInt(name, args, 1, pos);
  return fn2(name, stringType(), args, [](const Value& v, const Value& bits) {
    const EVP_MD* md;
    switch (bits.asInt()) {
      case 0:
      case 256: md = EVP_sha256(); break;
      case 224: md = EVP_sha224(); break;
      case 384: md = EVP_sha384(); break;
      case 512: md = EVP_sha512(); break;
      default: return Value();  // Spark gives NULL for an unsupported bit length
    }
    return Value::string(digest(md, v.asString()));
  });
}

// The digest hmac() names by Spark's algorithm names, case-insensitive and
// with or without the dash ("SHA-256", "sha256"), as Spark takes them;
// nullptr for any other name.
const EVP_MD* hmacDigest(std::string_view algorithm) {
  std::string key;
  for (char c : algorithm) {
    if (c != '-') key += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  if (key == "SHA256") return EVP_sha256();
  if (key == "SHA224") return EVP_sha224();
  if (key == "SHA384") return EVP_sha384();
  if (key == "SHA512") return EVP_sha512();
  if (key == "SHA1") return EVP_sha1();
  if (key == "MD5") return EVP_md5();
  return nullptr;
}

[[noreturn]] void throwUnknownHmac(std::string_view algorithm, size_t pos) {
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("unknown hmac algorithm '{}'", algorithm), pos,
                 "use SHA-256 (the default), SHA-224, SHA-384, SHA-512, SHA-1 or MD5");
}

// hmac(key, message[, algorithm]): the raw MAC bytes, as Spark gives them.
// A literal algorithm is checked when the statement is planned.
ExprPtr buildHmac(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBinary(name, args, 0, pos);
  argBinary(name, args, 1, pos);
  if (args.size() == 2) args.push_back(makeLiteral(Value::string("SHA-256"), stringType()));
  argString(name, args, 2, pos);
  if (auto c = constantValue(args[2]); c && !c->isNull() && !hmacDigest(c->asString())) {
    throwUnknownHmac(c->asString(), pos);
  }
  return fn3(name, DataType::of(TypeId::Binary), args,
             [pos](const Value& key, const Value& message, const Value& algorithm) {
               const EVP_MD* md = hmacDigest(algorithm.asString());
               if (!md) throwUnknownHmac(algorithm.asString(), pos);
               const std::string& k = key.asString();
               if (k.empty()) {
                 // Java's Mac refuses an empty key, and so does Spark.
                 throw SqlError(sqlstate::kInvalidParameterValue, "hmac of an empty key", pos,
                                "give hmac a key of at least one byte");
               }
               const std::string& m = message.asString();
               unsigned char out[EVP_MAX_MD_SIZE];
               unsigned int len = 0;
               if (HMAC(md, k.data(), static_cast<int>(k.size()),
                        reinterpret_cast<const unsigned char*>(m.data()), m.size(), out,
                        &len) == nullptr) {
                 return Value();
               }
               return Value::binary(std::string(reinterpret_cast<const char*>(out), len));
             });
}

ExprPtr buildHash(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  return fnN(name, DataType::of(TypeId::Int), args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    int32_t h = 42;
    for (const auto& e : a) h = sparkHash(e->eval(row), h);
    return Value::integer(h);
  });
}

// ---- xxhash64, Spark's XXH64 with seed 42 -----------------------------------

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kP3 = 0x165667B19E3779F9ULL;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ULL;
constexpr uint64_t kP5 = 0x27D4EB2F165667C5ULL;

inline uint64_t rotl64(uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}
inline uint64_t xxFmix(uint64_t h) {
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}
inline uint64_t xxRound(uint64_t acc, uint64_t lane) {
  return rotl64(acc + lane * kP2, 31) * kP1;
}
inline uint64_t xxMerge(uint64_t h, uint64_t v) {
  return (h ^ xxRound(0, v)) * kP1 + kP4;
}

uint64_t xxInt(uint32_t v, uint64_t seed) {
  uint64_t h = seed + kP5 + 4;
  h ^= static_cast<uint64_t>(v) * kP1;
  h = rotl64(h, 23) * kP2 + kP3;
  return xxFmix(h);
}

uint64_t xxLong(uint64_t v, uint64_t seed) {
  uint64_t h = seed + kP5 + 8;
  h ^= rotl64(v * kP2, 31) * kP1;
  h = rotl64(h, 27) * kP1 + kP4;
  return xxFmix(h);
}

uint64_t load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
uint32_t load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// XXH64 of a byte string (little-endian lanes, as Spark reads them on x86).
uint64_t xxBytes(std::string_view b, uint64_t seed) {
  const char* p = b.data();
  const char* end = p + b.size();
  uint64_t h;
  if (b.size() >= 32) {
    uint64_t v1 = seed + kP1 + kP2, v2 = seed + kP2, v3 = seed, v4 = seed - kP1;
    const char* limit = end - 32;
    do {
      v1 = xxRound(v1, load64(p));
      v2 = xxRound(v2, load64(p + 8));
      v3 = xxRound(v3, load64(p + 16));
      v4 = xxRound(v4, load64(p + 24));
      p += 32;
    } while (p <= limit);
    h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
    h = xxMerge(h, v1);
    h = xxMerge(h, v2);
    h = xxMerge(h, v3);
    h = xxMerge(h, v4);
  } else {
    h = seed + kP5;
  }
  h += b.size();
  for (; p + 8 <= end; p += 8) h = rotl64(h ^ xxRound(0, load64(p)), 27) * kP1 + kP4;
  if (p + 4 <= end) {
    h = rotl64(h ^ (static_cast<uint64_t>(load32(p)) * kP1), 23) * kP2 + kP3;
    p += 4;
  }
  for (; p < end; ++p)
    h = rotl64(h ^ (static_cast<uint64_t>(static_cast<unsigned char>(*p)) * kP5), 11) * kP1;
  return xxFmix(h);
}

// A FLOAT's bits as Spark hashes them: -0.0 as 0.0 and every NaN as Java's
// canonical float NaN.
uint32_t sparkFloatBits(double value) {
  float f = static_cast<float>(value);
  if (f == 0) f = 0.0f;
  if (f != f) return 0x7fc00000u;
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// A value hashed as Spark's XxHash64Function does: the same type rules as
// hash() (see sparkHash), with 64-bit state.
uint64_t sparkXxHash(const Value& v, uint64_t seed) {
  switch (v.type()) {
    case TypeId::Null:
      return seed;
    case TypeId::Boolean:
      return xxInt(v.asBool() ? 1 : 0, seed);
    case TypeId::Int:
    case TypeId::TinyInt:
    case TypeId::SmallInt:
    case TypeId::Date:
    case TypeId::YearMonthInterval:
      return xxInt(static_cast<uint32_t>(v.asInt()), seed);
    case TypeId::Float:
      return xxInt(sparkFloatBits(v.asDouble()), seed);
    case TypeId::Decimal:
      if (v.decimalPrecision() <= decimal::kMaxInt64Precision)
        return xxLong(static_cast<uint64_t>(static_cast<int64_t>(v.asDecimal())), seed);
      return xxBytes(decimal::toBigEndianBytes(v.asDecimal()), seed);
    case TypeId::BigInt:
    case TypeId::Timestamp:
    case TypeId::TimestampNtz:
    case TypeId::Interval:
      return xxLong(static_cast<uint64_t>(v.asInt()), seed);
    case TypeId::Double: {
      double d = v.asDouble();
      if (d == 0) d = 0.0;
      uint64_t bits;
      if (d != d)
        bits = 0x7ff8000000000000ULL;
      else
        std::memcpy(&bits, &d, sizeof bits);
      return xxLong(bits, seed);
    }
    case TypeId::String:
    case TypeId::Binary:
      return xxBytes(v.asString(), seed);
    case TypeId::Array:
    case TypeId::Struct:
    case TypeId::Map: {  // keys and values in turn, as Spark hashes a map
      uint64_t h = seed;
      for (const auto& item : v.asList()) h = sparkXxHash(item, h);
      return h;
    }
  }
  return seed;
}

ExprPtr buildXxHash64(const std::string& name, std::vector<ExprPtr>& args, size_t) {
  return fnN(name, DataType::of(TypeId::BigInt), args, true,
             [](const Row& row, const std::vector<ExprPtr>& a) {
               uint64_t h = 42;
               for (const auto& e : a) h = sparkXxHash(e->eval(row), h);
               return Value::bigint(static_cast<int64_t>(h));
             });
}

// crc32(bytes): the CRC-32 (IEEE, as java.util.zip.CRC32) as a BIGINT.
ExprPtr buildCrc32(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBinary(name, args, 0, pos);
  return fn1(name, DataType::of(TypeId::BigInt), args, [](const Value& v) {
    const std::string& bytes = v.asString();
    return Value::bigint(static_cast<int64_t>(crc32(bytes.data(), bytes.size())));
  });
}

// unhex(text): the bytes of a hexadecimal string (an odd length gets a leading
// 0); NULL when a character is not a hex digit.
ExprPtr buildUnhex(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fn1(name, DataType::of(TypeId::Binary), args, [](const Value& v) {
    std::string out;
    if (!decodeHex(v.asString(), out)) return Value();
    return Value::binary(std::move(out));
  });
}

}  // namespace

int32_t sparkHash(const Value& v, int32_t seed) {
  auto s = static_cast<uint32_t>(seed);
  switch (v.type()) {
    case TypeId::Null: return seed;
    case TypeId::Boolean: return static_cast<int32_t>(hashInt(v.asBool() ? 1 : 0, s));
    case TypeId::Int:
    case TypeId::TinyInt:
    case TypeId::SmallInt:
    case TypeId::Date:
    case TypeId::YearMonthInterval: return static_cast<int32_t>(hashInt(static_cast<uint32_t>(v.asInt()), s));
    case TypeId::Float: return static_cast<int32_t>(hashInt(sparkFloatBits(v.asDouble()), s));
    case TypeId::Decimal:
      if (v.decimalPrecision() <= decimal::kMaxInt64Precision)
        return static_cast<int32_t>(hashLong(static_cast<uint64_t>(static_cast<int64_t>(v.asDecimal())), s));
      return static_cast<int32_t>(hashBytes(decimal::toBigEndianBytes(v.asDecimal()), s));
    case TypeId::BigInt:
    case TypeId::Timestamp:
    case TypeId::TimestampNtz:
    case TypeId::Interval: return static_cast<int32_t>(hashLong(static_cast<uint64_t>(v.asInt()), s));
    case TypeId::Double: {
      double d = v.asDouble();
      if (d == 0) d = 0.0;  // -0.0 hashes as 0.0
      uint64_t bits;
      if (d != d) {
        bits = 0x7ff8000000000000ULL;  // Java's canonical NaN
      } else {
        std::memcpy(&bits, &d, sizeof bits);
      }
      return static_cast<int32_t>(hashLong(bits, s));
    }
    case TypeId::String:
    case TypeId::Binary: return static_cast<int32_t>(hashBytes(v.asString(), s));
    case TypeId::Array:
    case TypeId::Struct:
    case TypeId::Map: {  // keys and values in turn, as Spark hashes a map
      int32_t h = seed;
      for (const auto& item : v.asList()) h = sparkHash(item, h);
      return h;
    }
  }
  return seed;
}

std::string fmt_hex(uint64_t v) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  if (v == 0) return "0";
  std::string s;
  while (v) {
    s.insert(s.begin(), kHex[v & 15]);
    v >>= 4;
  }
  return s;
}

void registerHashFunctions(FunctionTable& t) {
  t["base64"] = {1, 1, buildBase64};
  t["unbase64"] = {1, 1, buildUnbase64};
  t["hex"] = {1, 1, buildHex};
  t["md5"] = {1, 1, buildMd5};
  t["sha1"] = {1, 1, buildSha1};
  t["sha"] = {1, 1, buildSha1};
  t["sha2"] = {2, 2, buildSha2};
  t["hmac"] = {2, 3, buildHmac};
  t["hash"] = {1, -1, buildHash};
  t["xxhash64"] = {1, -1, buildXxHash64};
  t["crc32"] = {1, 1, buildCrc32};
  t["unhex"] = {1, 1, buildUnhex};
}

}  // namespace rtsql::expr_internal

namespace rtsql {

uint64_t sparkXxHash64(const Value& v, uint64_t seed) {
  return expr_internal::sparkXxHash(v, seed);
}

}  // namespace rtsql
