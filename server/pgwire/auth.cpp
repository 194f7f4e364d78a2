// SCRAM-SHA-256 on OpenSSL: PBKDF2, HMAC and SHA-256 for the keys, RAND_bytes
// for salts and nonces, CRYPTO_memcmp so that checking a proof takes the same
// time whichever byte differs.
#include "server/pgwire/auth.h"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <charconv>
#include <stdexcept>

#include "common/digest.h"
#include "common/error.h"
#include "server/pgwire/framing.h"

namespace rtsql::pgwire {

namespace {

constexpr size_t kKeyBytes = 32;  // SHA-256 output
constexpr size_t kSaltBytes = 16;
// PostgreSQL uses 18 random bytes for its half of the nonce.
constexpr size_t kServerNonceBytes = 18;
// A verifier with more iterations than this would let a users file make every
// login burn seconds of CPU.
constexpr int kMaxIterations = 10'000'000;

const unsigned char* bytesOf(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

SqlError malformed(std::string what) {
  SqlError err(sqlstate::kProtocolViolation, "malformed SCRAM message");
  err.withDetail(std::move(what));
  return err;
}

// The value of attribute `name` ("r", "c", ...) at the start of `part`, which
// must read "<name>=<value>".
std::string_view attribute(std::string_view part, char name) {
  if (part.size() < 2 || part[0] != name || part[1] != '=') {
    throw malformed(fmt::format("expected attribute \"{}\"", name));
  }
  return part.substr(2);
}

// Splits at the next comma; `rest` becomes what follows it (empty when none).
std::string_view nextPart(std::string_view& rest) {
  const size_t comma = rest.find(',');
  std::string_view part = rest.substr(0, comma);
  rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  return part;
}

// RFC 5802: a nonce is printable ASCII other than ','.
bool validNonce(std::string_view nonce) {
  if (nonce.empty()) return false;
  for (char c : nonce) {
    if (c < 0x21 || c > 0x7E || c == ',') return false;
  }
  return true;
}

std::string xorBytes(std::string_view a, std::string_view b) {
  std::string out(a.size(), '\0');
  for (size_t i = 0; i < a.size(); ++i) out[i] = static_cast<char>(a[i] ^ b[i]);
  return out;
}

}  // namespace

// ---- primitives -------------------------------------------------------------------

std::string randomBytes(size_t n) {
  std::string out(n, '\0');
  if (n > 0 && RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1) {
    throw std::runtime_error("the system random number generator failed");
  }
  return out;
}

std::string encodeBase64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytesOf(bytes),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::optional<std::string> decodeBase64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  // EVP_DecodeBlock skips leading and trailing whitespace; a verifier or a
  // SCRAM attribute has none, so refuse it rather than accept two spellings.
  for (char c : text) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '+' || c == '/' || c == '=';
    if (!ok) return std::nullopt;
  }
  const size_t firstPad = text.find('=');
  // Padding is one or two '=' at the very end.
  if (firstPad != std::string_view::npos &&
      (firstPad + 2 < text.size() ||
       text.find_first_not_of('=', firstPad) != std::string_view::npos)) {
    return std::nullopt;
  }
  std::string out(3 * text.size() / 4, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytesOf(text),
                                static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the zero bytes that padding stands for.
  size_t len = static_cast<size_t>(n);
  if (!text.empty() && text.back() == '=') --len;
  if (text.size() >= 2 && text[text.size() - 2] == '=') --len;
  out.resize(len);
  return out;
}

// ---- verifiers ---------------------------------------------------------------------

ScramVerifier makeScramVerifier(std::string_view password, std::string salt, int iterations) {
  if (salt.empty()) salt = randomBytes(kSaltBytes);
  unsigned char salted[kKeyBytes];
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), bytesOf(salt),
                        static_cast<int>(salt.size()), iterations, EVP_sha256(), sizeof salted,
                        salted) != 1) {
    throw std::runtime_error("PBKDF2-HMAC-SHA-256 failed");
  }
  const std::string_view saltedPassword(reinterpret_cast<char*>(salted), sizeof salted);
  ScramVerifier v;
  v.iterations = iterations;
  v.salt = std::move(salt);
  v.storedKey = sha256(hmacSha256(saltedPassword, "Client Key"));
  v.serverKey = hmacSha256(saltedPassword, "Server Key");
  OPENSSL_cleanse(salted, sizeof salted);
  return v;
}

std::string formatScramVerifier(const ScramVerifier& v) {
  return fmt::format("SCRAM-SHA-256${}:{}${}:{}", v.iterations, encodeBase64(v.salt),
                     encodeBase64(v.storedKey), encodeBase64(v.serverKey));
}

std::optional<ScramVerifier> parseScramVerifier(std::string_view text, std::string* why) {
  auto bad = [why](std::string reason) -> std::optional<ScramVerifier> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  constexpr std::string_view kPrefix = "SCRAM-SHA-256$";
  if (text.substr(0, kPrefix.size()) != kPrefix) {
    return bad("a SCRAM verifier starts with \"SCRAM-SHA-256$\"");
  }
  text.remove_prefix(kPrefix.size());
  const size_t dollar = text.find('$');
  if (dollar == std::string_view::npos) {
    return bad("expected SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>");
  }
  const std::string_view params = text.substr(0, dollar);
  const std::string_view keys = text.substr(dollar + 1);
  const size_t colon1 = params.find(':');
  const size_t colon2 = keys.find(':');
  if (colon1 == std::string_view::npos || colon2 == std::string_view::npos) {
    return bad("expected SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>");
  }
  ScramVerifier v;
  const std::string_view iter = params.substr(0, colon1);
  const auto [end, ec] = std::from_chars(iter.data(), iter.data() + iter.size(), v.iterations);
  if (ec != std::errc() || end != iter.data() + iter.size() || v.iterations < 1 ||
      v.iterations > kMaxIterations) {
    return bad(fmt::format("the iteration count \"{}\" is not a number from 1 to {}", iter,
                           kMaxIterations));
  }
  auto salt = decodeBase64(params.substr(colon1 + 1));
  if (!salt || salt->empty()) return bad("the salt is not valid base64");
  auto stored = decodeBase64(keys.substr(0, colon2));
  auto server = decodeBase64(keys.substr(colon2 + 1));
  if (!stored || stored->size() != kKeyBytes) {
    return bad("the StoredKey is not 32 bytes of base64");
  }
  if (!server || server->size() != kKeyBytes) {
    return bad("the ServerKey is not 32 bytes of base64");
  }
  v.salt = std::move(*salt);
  v.storedKey = std::move(*stored);
  v.serverKey = std::move(*server);
  return v;
}

// ---- the exchange ------------------------------------------------------------------

ScramExchange::ScramExchange(ScramVerifier verifier, bool knownUser, std::string serverNonce)
    : verifier_(std::move(verifier)), knownUser_(knownUser), serverNonce_(std::move(serverNonce)) {
  if (serverNonce_.empty()) serverNonce_ = encodeBase64(randomBytes(kServerNonceBytes));
}

std::string ScramExchange::serverFirst(std::string_view clientFirst, std::string_view mechanism) {
  const bool plus = mechanism == kScramSha256Plus;
  if (plus && !offersChannelBinding()) {
    throw SqlError(sqlstate::kProtocolViolation,
                   "client selected an invalid SASL authentication mechanism");
  }
  std::string_view rest = clientFirst;
  // GS2 header: channel-binding flag, then an optional authorization identity.
  const std::string_view flag = nextPart(rest);
  if (flag.substr(0, 2) == "p=") {
    if (!plus) {
      throw malformed(
          "The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message "
          "includes channel binding data.");
    }
    if (flag.substr(2) != "tls-server-end-point") {
      throw malformed(fmt::format("unsupported SCRAM channel-binding type \"{}\"", flag.substr(2)));
    }
    bound_ = true;
  } else if (plus) {
    throw malformed(
        "The client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not include "
        "channel binding data.");
  } else if (flag == "y" && offersChannelBinding()) {
    // "y" means the client supports channel binding but believes we do not;
    // we offered it, so someone removed it from the offer on the way.
    throw SqlError(sqlstate::kProtocolViolation, "SCRAM channel binding negotiation error",
                   SqlError::npos)
        .withDetail("The client supports SCRAM channel binding but thinks the server does not. "
                    "However, this server does support channel binding.");
  } else if (flag != "n" && flag != "y") {
    throw malformed("unexpected channel-binding flag");
  }
  const std::string_view authzid = nextPart(rest);
  if (!authzid.empty()) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "client uses authorization identity, but it is not supported");
  }
  if (rest.empty()) throw malformed("the client-first-message ends early");
  gs2Header_ = std::string(clientFirst.substr(0, clientFirst.size() - rest.size()));
  clientFirstBare_ = std::string(rest);

  std::string_view part = nextPart(rest);
  if (part.substr(0, 2) == "m=") {
    throw SqlError(sqlstate::kFeatureNotSupported, "SCRAM extensions are not supported");
  }
  // The user name in the message is ignored: the startup packet named the
  // user, and libpq sends an empty one here, as PostgreSQL expects.
  attribute(part, 'n');
  const std::string_view clientNonce = attribute(nextPart(rest), 'r');
  if (!validNonce(clientNonce)) throw malformed("the client nonce is empty or not printable");

  nonce_ = std::string(clientNonce) + serverNonce_;
  serverFirst_ = fmt::format("r={},s={},i={}", nonce_, encodeBase64(verifier_.salt),
                             verifier_.iterations);
  return serverFirst_;
}

std::optional<std::string> ScramExchange::serverFinal(std::string_view clientFinal) {
  if (serverFirst_.empty()) throw malformed("client-final-message before client-first-message");
  // The proof is the last attribute; the signature covers everything before it.
  const size_t proofAt = clientFinal.rfind(",p=");
  if (proofAt == std::string_view::npos) throw malformed("the client proof is missing");
  const std::string_view withoutProof = clientFinal.substr(0, proofAt);
  const auto proof = decodeBase64(clientFinal.substr(proofAt + 3));
  if (!proof || proof->size() != kKeyBytes) throw malformed("the client proof is not valid");

  std::string_view rest = withoutProof;
  const auto binding = decodeBase64(attribute(nextPart(rest), 'c'));
  // c= carries the GS2 header back, followed by the channel-binding data
  // (the certificate hash the client saw) when the client chose binding.
  const std::string expected = bound_ ? gs2Header_ + channelBinding_ : gs2Header_;
  if (!binding || binding->size() != expected.size() ||
      CRYPTO_memcmp(binding->data(), expected.data(), expected.size()) != 0) {
    throw malformed(bound_ ? "SCRAM channel binding check failed"
                           : "the channel-binding attribute does not match the GS2 header");
  }
  if (attribute(nextPart(rest), 'r') != nonce_) throw malformed("the nonce does not match");

  const std::string authMessage =
      clientFirstBare_ + "," + serverFirst_ + "," + std::string(withoutProof);
  const std::string clientSignature = hmacSha256(verifier_.storedKey, authMessage);
  const std::string clientKey = xorBytes(*proof, clientSignature);
  const std::string computed = sha256(clientKey);
  const bool match = CRYPTO_memcmp(computed.data(), verifier_.storedKey.data(), kKeyBytes) == 0;
  if (!match || !knownUser_) return std::nullopt;
  return "v=" + encodeBase64(hmacSha256(verifier_.serverKey, authMessage));
}

// ---- wire framing -------------------------------------------------------------------

namespace {
// Authentication request codes of the 'R' message.
constexpr int32_t kAuthSasl = 10;
constexpr int32_t kAuthSaslContinue = 11;
constexpr int32_t kAuthSaslFinal = 12;
}  // namespace

void appendAuthenticationSasl(std::string& out, bool withChannelBinding) {
  MessageBuilder m(out, 'R');
  m.int32(kAuthSasl);
  // Clients pick the first mechanism they support, so the stronger comes first.
  if (withChannelBinding) m.cstring(kScramSha256Plus);
  m.cstring(kScramSha256);
  m.byte('\0');  // the list of mechanisms ends with an empty name
  m.finish();
}

void appendAuthenticationSaslContinue(std::string& out, std::string_view data) {
  MessageBuilder m(out, 'R');
  m.int32(kAuthSaslContinue);
  m.bytes(data);
  m.finish();
}

void appendAuthenticationSaslFinal(std::string& out, std::string_view data) {
  MessageBuilder m(out, 'R');
  m.int32(kAuthSaslFinal);
  m.bytes(data);
  m.finish();
}

SaslInitialResponse decodeSaslInitialResponse(std::string_view body) {
  MessageReader in(body);
  SaslInitialResponse r;
  r.mechanism = std::string(in.cstring());
  const int32_t length = in.int32();
  // -1 means "no initial response", which SCRAM always has.
  if (length < 0 || static_cast<size_t>(length) != in.remaining()) {
    throw SqlError(sqlstate::kProtocolViolation,
                   "invalid SASLInitialResponse message: wrong data length");
  }
  r.data = std::string(body.substr(body.size() - in.remaining()));
  return r;
}

}  // namespace rtsql::pgwire
