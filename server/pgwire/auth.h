// SCRAM-SHA-256 password authentication (RFC 5802, RFC 7677) as PostgreSQL
// speaks it: the server stores only a verifier (salt, iteration count,
// StoredKey, ServerKey), never the password, and the client proves it knows
// the password without sending it. Both sides end up proving themselves: the
// client with its ClientProof, the server with its ServerSignature.
//
// Everything here is plain string work on the SASL messages, with no sockets,
// so it is tested against the RFC's test vector. The connection wraps the
// messages in AuthenticationSASL* / SASLResponse frames (see connection.cpp).
//
// Over TLS the server also offers SCRAM-SHA-256-PLUS with the
// tls-server-end-point channel binding (RFC 5929): the client's proof then
// covers a hash of the certificate it saw, so a man in the middle that
// terminates TLS with another certificate cannot relay the exchange.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace rtsql::pgwire {

// The mechanism name in AuthenticationSASL and SASLInitialResponse.
inline constexpr std::string_view kScramSha256 = "SCRAM-SHA-256";
inline constexpr std::string_view kScramSha256Plus = "SCRAM-SHA-256-PLUS";
// PostgreSQL's default; also what rtsqld --hash-password and plain passwords
// in a users file use.
inline constexpr int kScramDefaultIterations = 4096;

// What the server keeps for one user. Keys and salt are raw bytes.
struct ScramVerifier {
  int iterations = kScramDefaultIterations;
  std::string salt;
  std::string storedKey;  // SHA-256(HMAC(SaltedPassword, "Client Key"))
  std::string serverKey;  // HMAC(SaltedPassword, "Server Key")
};

// Derives the verifier of `password`. An empty salt means a fresh random
// 16-byte one.
ScramVerifier makeScramVerifier(std::string_view password, std::string salt = {},
                                int iterations = kScramDefaultIterations);

// PostgreSQL's text form, as stored in pg_authid.rolpassword:
// SCRAM-SHA-256$<iterations>:<salt base64>$<StoredKey base64>:<ServerKey base64>
std::string formatScramVerifier(const ScramVerifier& v);
// Parses the text form; nullopt with `why` filled in when it is malformed.
std::optional<ScramVerifier> parseScramVerifier(std::string_view text, std::string* why = nullptr);

// Standard base64 with padding. decodeBase64 returns nullopt on any character
// outside the alphabet or a length that is not a multiple of four.
std::string encodeBase64(std::string_view bytes);
std::optional<std::string> decodeBase64(std::string_view text);

// `n` cryptographically random bytes (OpenSSL's RAND_bytes).
std::string randomBytes(size_t n);

// The server side of one SCRAM-SHA-256 exchange.
//
//   client-first  ->  serverFirst()   (salt, iterations, combined nonce)
//   client-final  ->  serverFinal()   (server signature, if the proof holds)
//
// A user that does not exist gets a mock exchange: a salt derived from the
// user name, and a proof that never matches, so a client cannot tell an
// unknown user from a wrong password.
class ScramExchange {
 public:
  // `verifier` is the user's, or a mock one with `knownUser` false.
  // `serverNonce` is the server's half of the nonce; empty means 18 random
  // bytes in base64 (tests pass the RFC's).
  ScramExchange(ScramVerifier verifier, bool knownUser, std::string serverNonce = {});

  // Offers SCRAM-SHA-256-PLUS with `endPoint`, the tls-server-end-point data
  // (the hash of the server's certificate), on this exchange.
  void offerChannelBinding(std::string endPoint) { channelBinding_ = std::move(endPoint); }
  bool offersChannelBinding() const { return !channelBinding_.empty(); }

  // Takes the client-first-message and the mechanism the client chose, and
  // returns the server-first-message. Throws SqlError 08P01 when the message
  // is malformed or its channel-binding flag does not fit the mechanism and
  // what was offered.
  std::string serverFirst(std::string_view clientFirst,
                          std::string_view mechanism = kScramSha256);
  // Takes the client-final-message. Returns the server-final-message
  // ("v=...") when the proof is right, nullopt when it is wrong (or the user is
  // unknown). Throws SqlError 08P01 when the message is malformed.
  std::optional<std::string> serverFinal(std::string_view clientFinal);

 private:
  ScramVerifier verifier_;
  bool knownUser_;
  std::string serverNonce_;
  std::string channelBinding_;
  bool bound_ = false;  // the client chose channel binding
  std::string gs2Header_;
  std::string clientFirstBare_;
  std::string serverFirst_;
  std::string nonce_;  // client nonce followed by server nonce
};

}  // namespace rtsql::pgwire

namespace rtsql::pgwire {

// ---- Wire framing of the SASL exchange -------------------------------------------

// AuthenticationSASL listing SCRAM-SHA-256-PLUS (when `withChannelBinding`)
// and SCRAM-SHA-256.
void appendAuthenticationSasl(std::string& out, bool withChannelBinding);
// AuthenticationSASLContinue carrying the server-first-message.
void appendAuthenticationSaslContinue(std::string& out, std::string_view data);
// AuthenticationSASLFinal carrying the server-final-message.
void appendAuthenticationSaslFinal(std::string& out, std::string_view data);

// The client's SASLInitialResponse: the mechanism it chose and its
// client-first-message. (A SASLResponse body is the message itself.)
struct SaslInitialResponse {
  std::string mechanism;
  std::string data;
};
// Throws SqlError 08P01 when the body is malformed.
SaslInitialResponse decodeSaslInitialResponse(std::string_view body);

}  // namespace rtsql::pgwire
