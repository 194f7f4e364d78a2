// AES encryption as Spark's aes_encrypt / aes_decrypt / try_aes_decrypt do it
// (OpenSSL's EVP API): modes GCM (the default), CBC and ECB; keys of 16, 24
// or 32 bytes; GCM output is IV(12) || ciphertext || tag(16), CBC output
// IV(16) || ciphertext, so a value encrypted by Spark decrypts here and back.
// Without an IV argument, GCM and CBC draw a random one: aes_encrypt is then
// non-deterministic, as in Spark.
#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>

#include "common/functions/internal.h"
#include "common/schema.h"

namespace rtsql::expr_internal {

namespace {

enum class Mode { Gcm, Cbc, Ecb };

struct CipherCtx {
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> ctx{EVP_CIPHER_CTX_new(),
                                                                      &EVP_CIPHER_CTX_free};
};

[[noreturn]] void aesError(const std::string& what) {
  throw SqlError(sqlstate::kInvalidParameterValue, what, SqlError::npos,
                 "keys are 16, 24 or 32 bytes; modes: 'GCM' (padding 'NONE'), 'CBC' and 'ECB' "
                 "(padding 'PKCS')");
}

// The mode and whether PKCS padding applies, from Spark's (mode, padding)
// arguments; an unsupported combination is 22023.
Mode modeOf(const std::string& m, const std::string& p, bool* pkcs) {
  std::string mode = toUpper(m), pad = toUpper(p);
  if (mode == "GCM" && (pad == "DEFAULT" || pad == "NONE")) {
    *pkcs = false;
    return Mode::Gcm;
  }
  if ((mode == "CBC" || mode == "ECB") && (pad == "DEFAULT" || pad == "PKCS")) {
    *pkcs = true;
    return mode == "CBC" ? Mode::Cbc : Mode::Ecb;
  }
  aesError(fmt::format("AES mode {} with padding {} is not supported", m, p));
}

const EVP_CIPHER* cipherOf(Mode mode, size_t keyBytes) {
  if (keyBytes != 16 && keyBytes != 24 && keyBytes != 32)
    aesError(fmt::format("the AES key has {} bytes; it must have 16, 24 or 32", keyBytes));
  int k = static_cast<int>(keyBytes / 8 - 2);  // 0, 1, 2
  switch (mode) {
    case Mode::Gcm:
      return k == 0 ? EVP_aes_128_gcm() : k == 1 ? EVP_aes_192_gcm() : EVP_aes_256_gcm();
    case Mode::Cbc:
      return k == 0 ? EVP_aes_128_cbc() : k == 1 ? EVP_aes_192_cbc() : EVP_aes_256_cbc();
    case Mode::Ecb:
      return k == 0 ? EVP_aes_128_ecb() : k == 1 ? EVP_aes_192_ecb() : EVP_aes_256_ecb();
  }
  return nullptr;
}

const unsigned char* bytes(const std::string& s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

std::string encrypt(const std::string& in, const std::string& key, Mode mode, bool pkcs,
                    std::string iv, const std::string& aad) {
  const EVP_CIPHER* c = cipherOf(mode, key.size());
  size_t ivLen = mode == Mode::Gcm ? 12 : mode == Mode::Cbc ? 16 : 0;
  if (!iv.empty() && iv.size() != ivLen)
    aesError(fmt::format("the IV has {} bytes; this mode takes {}", iv.size(), ivLen));
  if (iv.empty() && ivLen > 0) {
    iv.resize(ivLen);
    if (RAND_bytes(reinterpret_cast<unsigned char*>(iv.data()), static_cast<int>(ivLen)) != 1)
      aesError("no random IV");
  }
  checkValueSize("aes_encrypt", in.size() + 64);
  CipherCtx cx;
  EVP_CIPHER_CTX* ctx = cx.ctx.get();
  std::string out = iv;
  out.resize(iv.size() + in.size() + 32);
  int len = 0, total = static_cast<int>(iv.size());
  bool ok = EVP_EncryptInit_ex(ctx, c, nullptr, nullptr, nullptr) == 1;
  if (mode == Mode::Gcm)
    ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, 12, nullptr) == 1;
  ok =
      ok && EVP_EncryptInit_ex(ctx, nullptr, nullptr, bytes(key), ivLen ? bytes(iv) : nullptr) == 1;
  if (mode != Mode::Gcm) EVP_CIPHER_CTX_set_padding(ctx, pkcs ? 1 : 0);
  if (ok && mode == Mode::Gcm && !aad.empty())
    ok = EVP_EncryptUpdate(ctx, nullptr, &len, bytes(aad), static_cast<int>(aad.size())) == 1;
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  ok = ok && EVP_EncryptUpdate(ctx, o + total, &len, bytes(in), static_cast<int>(in.size())) == 1;
  total += len;
  ok = ok && EVP_EncryptFinal_ex(ctx, o + total, &len) == 1;
  total += len;
  if (ok && mode == Mode::Gcm) {
    ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, o + total) == 1;
    total += 16;
  }
  if (!ok) aesError("AES encryption failed");
  out.resize(static_cast<size_t>(total));
  return out;
}

// Decrypts, or returns false (wrong key, damaged input, bad tag).
bool decrypt(const std::string& in, const std::string& key, Mode mode, bool pkcs,
             const std::string& aad, std::string* out) {
  const EVP_CIPHER* c = cipherOf(mode, key.size());
  size_t ivLen = mode == Mode::Gcm ? 12 : mode == Mode::Cbc ? 16 : 0;
  size_t tagLen = mode == Mode::Gcm ? 16 : 0;
  if (in.size() < ivLen + tagLen) return false;
  std::string iv = in.substr(0, ivLen);
  std::string body = in.substr(ivLen, in.size() - ivLen - tagLen);
  std::string tag = in.substr(in.size() - tagLen);
  CipherCtx cx;
  EVP_CIPHER_CTX* ctx = cx.ctx.get();
  out->assign(body.size() + 32, '\0');
  int len = 0, total = 0;
  bool ok = EVP_DecryptInit_ex(ctx, c, nullptr, nullptr, nullptr) == 1;
  if (mode == Mode::Gcm)
    ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, 12, nullptr) == 1;
  ok =
      ok && EVP_DecryptInit_ex(ctx, nullptr, nullptr, bytes(key), ivLen ? bytes(iv) : nullptr) == 1;
  if (mode != Mode::Gcm) EVP_CIPHER_CTX_set_padding(ctx, pkcs ? 1 : 0);
  if (ok && mode == Mode::Gcm && !aad.empty())
    ok = EVP_DecryptUpdate(ctx, nullptr, &len, bytes(aad), static_cast<int>(aad.size())) == 1;
  auto* o = reinterpret_cast<unsigned char*>(out->data());
  ok = ok && EVP_DecryptUpdate(ctx, o, &len, bytes(body), static_cast<int>(body.size())) == 1;
  total += len;
  if (ok && mode == Mode::Gcm)
    ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, const_cast<char*>(tag.data())) == 1;
  ok = ok && EVP_DecryptFinal_ex(ctx, o + total, &len) == 1;
  total += len;
  if (!ok) return false;
  out->resize(static_cast<size_t>(total));
  return true;
}

// Arguments after the input and key default as in Spark: mode 'GCM',
// padding 'DEFAULT', no IV, no AAD.
void defaults(std::vector<ExprPtr>& args, size_t upTo) {
  static const char* kDefaults[] = {"GCM", "DEFAULT", "", ""};
  while (args.size() < upTo) {
    size_t i = args.size() - 2;
    bool binary = i >= 2;
    args.push_back(makeLiteral(binary ? Value::binary(kDefaults[i]) : Value::string(kDefaults[i]),
                               DataType::of(binary ? TypeId::Binary : TypeId::String)));
  }
}

// aes_encrypt(input, key[, mode[, padding[, iv[, aad]]]]).
ExprPtr buildEncrypt(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  defaults(args, 6);
  argBinary(name, args, 0, pos);
  argBinary(name, args, 1, pos);
  argString(name, args, 2, pos);
  argString(name, args, 3, pos);
  argBinary(name, args, 4, pos);
  argBinary(name, args, 5, pos);
  return fnN(name, DataType::of(TypeId::Binary), args, false,
             [](const Row& row, const std::vector<ExprPtr>& a) {
               Value v[6];
               for (size_t i = 0; i < 6; ++i) {
                 v[i] = a[i]->eval(row);
                 if (v[i].isNull()) return Value();
               }
               bool pkcs;
               Mode mode = modeOf(v[2].asString(), v[3].asString(), &pkcs);
               return Value::binary(encrypt(v[0].asString(), v[1].asString(), mode, pkcs,
                                            v[4].asString(), v[5].asString()));
             });
}

// aes_decrypt(input, key[, mode[, padding[, aad]]]): input that does not
// decrypt is 22023; try_aes_decrypt gives NULL instead.
template <bool Try>
ExprPtr buildDecrypt(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  defaults(args, 4);
  if (args.size() == 4)
    args.push_back(makeLiteral(Value::binary(""), DataType::of(TypeId::Binary)));
  argBinary(name, args, 0, pos);
  argBinary(name, args, 1, pos);
  argString(name, args, 2, pos);
  argString(name, args, 3, pos);
  argBinary(name, args, 4, pos);
  return fnN(
      name, DataType::of(TypeId::Binary), args, true,
      [](const Row& row, const std::vector<ExprPtr>& a) {
        Value v[5];
        for (size_t i = 0; i < 5; ++i) {
          v[i] = a[i]->eval(row);
          if (v[i].isNull()) return Value();
        }
        try {
          bool pkcs;
          Mode mode = modeOf(v[2].asString(), v[3].asString(), &pkcs);
          std::string out;
          if (!decrypt(v[0].asString(), v[1].asString(), mode, pkcs, v[4].asString(), &out)) {
            if (Try) return Value();
            aesError("the input does not decrypt with this key and mode");
          }
          return Value::binary(std::move(out));
        } catch (const SqlError&) {
          if (Try) return Value();
          throw;
        }
      });
}

}  // namespace

void registerEncryptionFunctions(FunctionTable& t) {
  t["aes_encrypt"] = {2, 6, buildEncrypt, kNotDeterministic};
  t["aes_decrypt"] = {2, 5, buildDecrypt<false>};
  t["try_aes_decrypt"] = {2, 5, buildDecrypt<true>};
}

}  // namespace rtsql::expr_internal
