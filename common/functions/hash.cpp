// Encoding and hashing functions: base64 unbase64 hex md5 sha1 sha2 hash.
// Digests use OpenSSL's EVP API. hash() is Spark's: Murmur3_x86_32 with seed 42,
// chained over the arguments, with Spark's treatment of each type (including its
// byte-at-a-time tail for strings), so hash('Spark', array(123), 2) gives the
// same INT here as in Spark.
#include <openssl/evp.h>

#include <cctype>
#include <cstring>

#include "common/functions/internal.h"

namespace rtsql::expr_internal {

std::string fmt_hex(uint64_t v);

namespace {

const DataTypePtr& str() {
  static const DataTypePtr t = DataType::of(TypeId::String);
  return t;
}

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
  return toHex(std::string_view(reinterpret_cast<const char*>(out), len));
}

ExprPtr buildBase64(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBinary(name, args, 0, pos);
  return fn1(name, str(), args, [](const Value& v) {
    checkValueSize("base64", (v.asString().size() + 2) / 3 * 4);
    return Value::string(toBase64(v.asString()));
  });
}

ExprPtr buildUnbase64(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fn1(name, DataType::of(TypeId::Binary), args, [](const Value& v) {
    std::string out;
    return fromBase64(v.asString(), &out) ? Value::binary(std::move(out)) : Value();
  });
}

ExprPtr buildHex(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args[0]->type()->isIntegral()) {
    return fn1(name, str(), args, [](const Value& v) {
      std::string s = fmt_hex(static_cast<uint64_t>(v.asInt()));
      return Value::string(std::move(s));
    });
  }
  argBinary(name, args, 0, pos);
  return fn1(name, str(), args, [](const Value& v) {
    checkValueSize("hex", v.asString().size() * 2);
    std::string h = toHex(v.asString());
    for (auto& c : h) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return Value::string(std::move(h));
  });
}

ExprPtr buildMd5(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBinary(name, args, 0, pos);
  return fn1(name, str(), args, [](const Value& v) { return Value::string(digest(EVP_md5(), v.asString())); });
}

ExprPtr buildSha1(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBinary(name, args, 0, pos);
  return fn1(name, str(), args, [](const Value& v) { return Value::string(digest(EVP_sha1(), v.asString())); });
}

ExprPtr buildSha2(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBinary(name, args, 0, pos);
  argInt(name, args, 1, pos);
  return fn2(name, str(), args, [](const Value& v, const Value& bits) {
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

ExprPtr buildHash(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  return fnN(name, DataType::of(TypeId::Int), args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    int32_t h = 42;
    for (const auto& e : a) h = sparkHash(e->eval(row), h);
    return Value::integer(h);
  });
}

}  // namespace

int32_t sparkHash(const Value& v, int32_t seed) {
  auto s = static_cast<uint32_t>(seed);
  switch (v.type()) {
    case TypeId::Null: return seed;
    case TypeId::Boolean: return static_cast<int32_t>(hashInt(v.asBool() ? 1 : 0, s));
    case TypeId::Int: return static_cast<int32_t>(hashInt(static_cast<uint32_t>(v.asInt()), s));
    case TypeId::BigInt:
    case TypeId::Timestamp:
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
    case TypeId::Struct: {
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
  t["hash"] = {1, -1, buildHash};
}

}  // namespace rtsql::expr_internal
