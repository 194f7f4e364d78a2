// Tests for rtsqld's security: SCRAM-SHA-256 against the RFC 7677 test vector,
// verifier and users-file parsing, then a real server on a loopback port with
// TLS (a self-signed certificate made here with the OpenSSL API) and
// passwords, driven by libpq and by a raw socket client that reads the exact
// SQLSTATE of a refused startup.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/digest.h"
#include "common/error.h"
#include "server/pgwire/auth.h"
#include "server/pgwire/framing.h"
#include "server/pgwire/server.h"
#include "server/query_handler.h"
#include "server/users.h"
#include "server_test_util.h"

using namespace rtsql;
using namespace rtsql::pgwire;
using namespace std::chrono_literals;

namespace {

// ---- RFC 7677 section 3 ------------------------------------------------------------

constexpr const char* kRfcClientFirst = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
constexpr const char* kRfcServerNonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
constexpr const char* kRfcServerFirst =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
constexpr const char* kRfcClientFinal =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
constexpr const char* kRfcServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

ScramVerifier rfcVerifier() {
  return makeScramVerifier("pencil", *decodeBase64("W22ZaJ0SNY7soEsUEjb6gQ=="), 4096);
}

std::string sqlstateOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const SqlError& e) {
    return e.sqlstate();
  }
  return "";
}

// ---- A fake engine ------------------------------------------------------------------

class NoSession : public Session {};

// "select 'x'" answers one row x; anything else completes with OK.
class TinyHandler : public QueryHandler {
 public:
  std::atomic<int> sessionsOpened{0};

  std::unique_ptr<Session> openSession(const std::string&, const std::string&) override {
    ++sessionsOpened;
    return std::make_unique<NoSession>();
  }
  void execute(Session&, const std::string& sql, ResultWriter& out) override {
    if (sql.rfind("select '", 0) == 0) {
      out.columns({{"?column?", pgtype::kText}});
      out.row({sql.substr(8, sql.find('\'', 8) - 8)});
      out.complete("SELECT 1");
      return;
    }
    out.complete("OK");
  }
};

using testing::eventually;

// ---- A self-signed certificate --------------------------------------------------------

// A temporary directory with a fresh P-256 key and a self-signed certificate
// for CN=localhost, removed at the end of the test.
struct TestCertificate {
  std::filesystem::path dir;
  std::string certFile;
  std::string keyFile;

  TestCertificate() {
    std::random_device rd;
    dir = std::filesystem::temp_directory_path() /
          ("rtsql_security_test_" + std::to_string(::getpid()) + "_" + std::to_string(rd()));
    std::filesystem::create_directories(dir);
    certFile = (dir / "server.crt").string();
    keyFile = (dir / "server.key").string();

    EVP_PKEY* key = EVP_EC_gen("P-256");
    if (key == nullptr) throw std::runtime_error("EC key generation failed");
    X509* cert = X509_new();
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
    X509_set_pubkey(cert, key);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
    X509_set_issuer_name(cert, name);
    const bool signedOk = X509_sign(cert, key, EVP_sha256()) > 0;
    FILE* c = std::fopen(certFile.c_str(), "w");
    FILE* k = std::fopen(keyFile.c_str(), "w");
    const bool written = c && k && PEM_write_X509(c, cert) == 1 &&
                         PEM_write_PrivateKey(k, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
    if (c) std::fclose(c);
    if (k) std::fclose(k);
    X509_free(cert);
    EVP_PKEY_free(key);
    if (!signedOk || !written) throw std::runtime_error("could not write the test certificate");
  }
  ~TestCertificate() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

// ---- Server and clients --------------------------------------------------------------

using TestServer = testing::BasicTestServer<TinyHandler>;

struct PgConn {
  PGconn* c;
  explicit PgConn(const std::string& conninfo) : c(PQconnectdb(conninfo.c_str())) {}
  ~PgConn() { PQfinish(c); }
  bool ok() const { return PQstatus(c) == CONNECTION_OK; }
  std::string error() const { return PQerrorMessage(c); }
  bool tls() const { return PQsslInUse(c) == 1; }
  // The one value of a one-row query, or "" when it failed.
  std::string value(const char* sql) const {
    PGresult* r = PQexec(c, sql);
    std::string v = PQresultStatus(r) == PGRES_TUPLES_OK ? PQgetvalue(r, 0, 0) : "";
    PQclear(r);
    return v;
  }
};

std::string be32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) {
    s[static_cast<size_t>(i)] = static_cast<char>((v >> (24 - 8 * i)) & 0xFF);
  }
  return s;
}

std::string startupPacket(const std::string& user) {
  std::string body = be32(kProtocolV3) + "user" + '\0' + user + '\0' + "database" + '\0' +
                     "flows" + '\0' + '\0';
  return be32(static_cast<uint32_t>(body.size() + 4)) + body;
}

std::string frontendMessage(char type, const std::string& body) {
  return std::string(1, type) + be32(static_cast<uint32_t>(body.size() + 4)) + body;
}

using testing::RawClient;
using testing::RawMessage;

PgServerOptions withUsers(const std::string& usersText) {
  PgServerOptions o;
  o.users = std::make_shared<const UserStore>(UserStore::parse(usersText, "test users"));
  return o;
}

}  // namespace

// ---- SCRAM on strings -------------------------------------------------------------------

TEST_CASE("security: SCRAM-SHA-256 reproduces the RFC 7677 exchange") {
  ScramExchange exchange(rfcVerifier(), true, kRfcServerNonce);
  CHECK(exchange.serverFirst(kRfcClientFirst) == kRfcServerFirst);
  const auto final = exchange.serverFinal(kRfcClientFinal);
  REQUIRE(final.has_value());
  CHECK(*final == kRfcServerFinal);
}

TEST_CASE("security: SCRAM refuses a wrong proof and an unknown user") {
  SUBCASE("one flipped bit of the proof") {
    ScramExchange exchange(rfcVerifier(), true, kRfcServerNonce);
    exchange.serverFirst(kRfcClientFirst);
    std::string proof = *decodeBase64("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
    proof[5] = static_cast<char>(proof[5] ^ 1);
    const std::string final = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=" +
                              encodeBase64(proof);
    CHECK_FALSE(exchange.serverFinal(final).has_value());
  }
  SUBCASE("a verifier of another password") {
    ScramExchange exchange(makeScramVerifier("pencil2", *decodeBase64("W22ZaJ0SNY7soEsUEjb6gQ==")),
                           true, kRfcServerNonce);
    exchange.serverFirst(kRfcClientFirst);
    CHECK_FALSE(exchange.serverFinal(kRfcClientFinal).has_value());
  }
  SUBCASE("the right proof for a user that is not known") {
    ScramExchange exchange(rfcVerifier(), false, kRfcServerNonce);
    exchange.serverFirst(kRfcClientFirst);
    CHECK_FALSE(exchange.serverFinal(kRfcClientFinal).has_value());
  }
}

TEST_CASE("security: malformed SCRAM messages are protocol violations") {
  auto first = [](const char* msg) {
    return sqlstateOf(
        [&] { ScramExchange(rfcVerifier(), true, kRfcServerNonce).serverFirst(msg); });
  };
  CHECK(first("p=tls-server-end-point,,n=,r=abc") == "08P01");  // channel binding
  CHECK(first("x,,n=,r=abc") == "08P01");
  CHECK(first("n,,r=abc") == "08P01");             // no n= attribute
  CHECK(first("n,,n=,r=") == "08P01");             // empty nonce
  CHECK(first("n,,n=,r=a,b\x01") == "");           // extensions after the nonce are ignored
  CHECK(first("n,,n=,r=a\x01") == "08P01");        // unprintable nonce
  CHECK(first("n,a=admin,n=,r=abc") == "0A000");   // authorization identity
  CHECK(first("n,,m=ext,n=,r=abc") == "0A000");    // mandatory extension
  CHECK(first("n,,") == "08P01");

  auto final = [](const std::string& msg) {
    ScramExchange exchange(rfcVerifier(), true, kRfcServerNonce);
    exchange.serverFirst(kRfcClientFirst);
    return sqlstateOf([&] { exchange.serverFinal(msg); });
  };
  const std::string nonce = "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
  const std::string proof = "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
  CHECK(final("c=biws,r=" + nonce + "," + proof) == "");
  CHECK(final("c=eSws,r=" + nonce + "," + proof) == "08P01");  // "y,," against "n,,"
  CHECK(final("c=biws,r=" + nonce + "x," + proof) == "08P01");
  CHECK(final("c=biws,r=" + nonce) == "08P01");
  CHECK(final("c=biws,r=" + nonce + ",p=AAAA") == "08P01");
  CHECK(final("r=" + nonce + ",c=biws," + proof) == "08P01");
  CHECK(sqlstateOf([] { ScramExchange(rfcVerifier(), true).serverFinal("c=biws,r=x,p=x"); }) ==
        "08P01");
}

// The client's side of SCRAM, written out from RFC 5802 section 3, to drive
// the server through paths libpq does not take.
static std::string clientProof(std::string_view password, const std::string& salt, int iterations,
                        const std::string& authMessage) {
  unsigned char salted[32];
  REQUIRE(PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                            reinterpret_cast<const unsigned char*>(salt.data()),
                            static_cast<int>(salt.size()), iterations, EVP_sha256(), 32,
                            salted) == 1);
  const std::string clientKey =
      hmacSha256(std::string_view(reinterpret_cast<char*>(salted), 32), "Client Key");
  const std::string signature = hmacSha256(sha256(clientKey), authMessage);
  std::string proof(32, '\0');
  for (size_t i = 0; i < 32; ++i) proof[i] = static_cast<char>(clientKey[i] ^ signature[i]);
  return encodeBase64(proof);
}

TEST_CASE("security: SCRAM-SHA-256-PLUS binds the exchange to the certificate hash") {
  const std::string endPoint = sha256("the server certificate");
  const ScramVerifier v = rfcVerifier();
  auto bound = [&] {
    auto e = std::make_unique<ScramExchange>(v, true, "servernonce");
    e->offerChannelBinding(endPoint);
    return e;
  };
  const std::string header = "p=tls-server-end-point,,";
  const std::string bare = "n=,r=clientnonce";
  const std::string withoutProof =
      "c=" + encodeBase64(header + endPoint) + ",r=clientnonceservernonce";

  SUBCASE("the right certificate hash and proof") {
    auto e = bound();
    const std::string first = e->serverFirst(header + bare, kScramSha256Plus);
    const std::string proof =
        clientProof("pencil", v.salt, 4096, bare + "," + first + "," + withoutProof);
    CHECK(e->serverFinal(withoutProof + ",p=" + proof).has_value());
  }
  SUBCASE("another certificate hash fails the binding check") {
    auto e = bound();
    const std::string first = e->serverFirst(header + bare, kScramSha256Plus);
    const std::string other = "c=" + encodeBase64(header + sha256("another certificate")) +
                              ",r=clientnonceservernonce";
    const std::string proof = clientProof("pencil", v.salt, 4096, bare + "," + first + "," + other);
    CHECK(sqlstateOf([&] { e->serverFinal(other + ",p=" + proof); }) == "08P01");
  }
  SUBCASE("the client may still decline binding with n") {
    auto e = bound();
    const std::string first = e->serverFirst("n,," + bare, kScramSha256);
    const std::string final = "c=biws,r=clientnonceservernonce";
    const std::string proof = clientProof("pencil", v.salt, 4096, bare + "," + first + "," + final);
    CHECK(e->serverFinal(final + ",p=" + proof).has_value());
  }
  // "y" says the server offered no binding; it did, so the offer was tampered with.
  CHECK(sqlstateOf([&] { bound()->serverFirst("y,," + bare, kScramSha256); }) == "08P01");
  CHECK(sqlstateOf([&] { bound()->serverFirst("n,," + bare, kScramSha256Plus); }) == "08P01");
  CHECK(sqlstateOf([&] { bound()->serverFirst("p=tls-unique,," + bare, kScramSha256Plus); }) ==
        "08P01");
  CHECK(sqlstateOf([&] { bound()->serverFirst(header + bare, kScramSha256); }) == "08P01");
  // Without an offer, PLUS is not a valid choice.
  CHECK(sqlstateOf([&] {
          ScramExchange(v, true).serverFirst(header + bare, kScramSha256Plus);
        }) == "08P01");
}

TEST_CASE("security: a fresh exchange uses a random server nonce and the verifier's salt") {
  const ScramVerifier v = makeScramVerifier("secret");
  ScramExchange a(v, true);
  ScramExchange b(v, true);
  const std::string fa = a.serverFirst("n,,n=,r=clientnonce");
  const std::string fb = b.serverFirst("n,,n=,r=clientnonce");
  CHECK(fa != fb);
  CHECK(fa.rfind("r=clientnonce", 0) == 0);
  CHECK(fa.find(",s=" + encodeBase64(v.salt) + ",i=4096") != std::string::npos);
}

TEST_CASE("security: verifiers print and parse in PostgreSQL's format") {
  const ScramVerifier v = rfcVerifier();
  const std::string text = formatScramVerifier(v);
  CHECK(text.rfind("SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$", 0) == 0);
  const auto back = parseScramVerifier(text);
  REQUIRE(back.has_value());
  CHECK(back->iterations == 4096);
  CHECK(back->salt == v.salt);
  CHECK(back->storedKey == v.storedKey);
  CHECK(back->serverKey == v.serverKey);
  // The verifier of "pencil" with the RFC's salt, computed independently
  // (Python's hashlib), as PostgreSQL would store it.
  const auto pg = parseScramVerifier(
      "SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=:"
      "wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=");
  REQUIRE(pg.has_value());
  CHECK(pg->storedKey == v.storedKey);
  CHECK(pg->serverKey == v.serverKey);

  std::string why;
  CHECK_FALSE(parseScramVerifier("md5abcdef", &why));
  CHECK(why.find("SCRAM-SHA-256$") != std::string::npos);
  CHECK_FALSE(parseScramVerifier("SCRAM-SHA-256$0:" + text.substr(19), &why));
  CHECK(why.find("iteration") != std::string::npos);
  CHECK_FALSE(parseScramVerifier("SCRAM-SHA-256$x:" + text.substr(19), &why));
  CHECK_FALSE(parseScramVerifier("SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==", &why));
  CHECK_FALSE(parseScramVerifier("SCRAM-SHA-256$4096:W22Z!J0SNY7soEsUEjb6gQ==$" +
                                     text.substr(text.find('$', 14) + 1),
                                 &why));
  CHECK(why.find("salt") != std::string::npos);
  CHECK_FALSE(parseScramVerifier("SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$AAAA:AAAA", &why));
  CHECK(why.find("StoredKey") != std::string::npos);
}

TEST_CASE("security: base64 round trips and rejects what is not base64") {
  const std::vector<std::string> samples = {"", "a", "ab", "abc", "abcd",
                                            std::string("\0\xff\x10", 3)};
  for (const std::string& s : samples) {
    CHECK(decodeBase64(encodeBase64(s)) == s);
  }
  CHECK(encodeBase64("n,,") == "biws");
  CHECK_FALSE(decodeBase64("abc"));
  CHECK_FALSE(decodeBase64("ab=c"));
  CHECK_FALSE(decodeBase64("a==="));
  CHECK_FALSE(decodeBase64("ab c"));
  CHECK_FALSE(decodeBase64(" abc"));
}

// ---- The users file --------------------------------------------------------------------

TEST_CASE("security: a users file with verifiers, plain passwords and comments") {
  const std::string rfc = formatScramVerifier(rfcVerifier());
  const UserStore store = UserStore::parse("# rtsql users\n"
                                           "\n"
                                           "user:" + rfc + "\n"
                                           "  # indented comment\n"
                                           "bob:two words \r\n"
                                           "carol:p:with:colons",
                                           "users");
  CHECK(store.size() == 3);
  REQUIRE(store.find("user") != nullptr);
  CHECK(store.find("user")->storedKey == rfcVerifier().storedKey);
  CHECK(store.find("nobody") == nullptr);
  // A plain password is hashed at load with a fresh salt: the exchange works
  // with the password as written (trailing space kept, CR dropped).
  const ScramVerifier* bob = store.find("bob");
  REQUIRE(bob != nullptr);
  CHECK(bob->iterations == kScramDefaultIterations);
  CHECK(bob->storedKey == makeScramVerifier("two words ", bob->salt).storedKey);
  const ScramVerifier* carol = store.find("carol");
  REQUIRE(carol != nullptr);
  CHECK(carol->storedKey == makeScramVerifier("p:with:colons", carol->salt).storedKey);

  // Mock verifiers: stable per name, different across names.
  CHECK(store.mockVerifier("eve").salt == store.mockVerifier("eve").salt);
  CHECK(store.mockVerifier("eve").salt != store.mockVerifier("mallory").salt);
  CHECK(store.mockVerifier("eve").salt.size() == 16);
}

TEST_CASE("security: users file errors name the file and line") {
  auto error = [](const std::string& text) -> std::string {
    try {
      UserStore::parse(text, "u.txt");
    } catch (const SqlError& e) {
      CHECK(e.sqlstate() == "F0000");
      return e.message();
    }
    return "(no error)";
  };
  CHECK(error("alice:x\nbob\n") == "users file \"u.txt\" line 2: expected name:password");
  CHECK(error(":pw") == "users file \"u.txt\" line 1: the user name is empty");
  CHECK(error("alice:") == "users file \"u.txt\" line 1: user \"alice\" has an empty password");
  CHECK(error("a b:pw") ==
        "users file \"u.txt\" line 1: the user name \"a b\" contains whitespace");
  CHECK(error("alice:x\n#\nalice:y") ==
        "users file \"u.txt\" line 3: user \"alice\" is listed twice");
  CHECK(error("alice:SCRAM-SHA-256$4096:abc") ==
        "users file \"u.txt\" line 1: user \"alice\": expected "
        "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>");
  CHECK(error("# nobody\n\n") == "users file \"u.txt\" lists no users");

  CHECK_THROWS_AS(UserStore::loadFile("/nonexistent/rtsql/users"), SqlError);
}

// ---- A server with TLS and passwords ----------------------------------------------------

TEST_CASE("security: TLS with a password through libpq") {
  TestCertificate cert;
  PgServerOptions options = withUsers("alice:wonderland\n");
  options.tlsCertFile = cert.certFile;
  options.tlsKeyFile = cert.keyFile;
  TestServer ts(options);

  SUBCASE("the right password") {
    PgConn conn(ts.conninfo("alice", "sslmode=require password=wonderland"));
    REQUIRE_MESSAGE(conn.ok(), conn.error());
    CHECK(conn.tls());
    CHECK(conn.value("select 'over tls'") == "over tls");
    CHECK(ts.handler.sessionsOpened.load() == 1);
  }
  SUBCASE("channel binding to the certificate (SCRAM-SHA-256-PLUS)") {
    PgConn conn(
        ts.conninfo("alice", "sslmode=require password=wonderland channel_binding=require"));
    REQUIRE_MESSAGE(conn.ok(), conn.error());
    CHECK(conn.tls());
    CHECK(conn.value("select 'bound'") == "bound");
  }
  SUBCASE("channel binding is not offered without TLS") {
    PgConn conn(
        ts.conninfo("alice", "sslmode=disable password=wonderland channel_binding=require"));
    CHECK_FALSE(conn.ok());
    CHECK(ts.handler.sessionsOpened.load() == 0);
  }
  SUBCASE("a wrong password and an unknown user get the same refusal") {
    PgConn wrong(ts.conninfo("alice", "sslmode=require password=looking-glass"));
    CHECK_FALSE(wrong.ok());
    CHECK(wrong.error().find("password authentication failed for user \"alice\"") !=
          std::string::npos);
    PgConn unknown(ts.conninfo("hatter", "sslmode=require password=wonderland"));
    CHECK_FALSE(unknown.ok());
    CHECK(unknown.error().find("password authentication failed for user \"hatter\"") !=
          std::string::npos);
    CHECK(ts.handler.sessionsOpened.load() == 0);
  }
  SUBCASE("no password at all") {
    PgConn conn(ts.conninfo("alice", "sslmode=require passfile=/nonexistent"));
    CHECK_FALSE(conn.ok());
    CHECK(ts.handler.sessionsOpened.load() == 0);
  }
  SUBCASE("passwords also work without TLS when it is not required") {
    PgConn conn(ts.conninfo("alice", "sslmode=disable password=wonderland"));
    REQUIRE_MESSAGE(conn.ok(), conn.error());
    CHECK_FALSE(conn.tls());
    CHECK(conn.value("select 'plain'") == "plain");
  }
  CHECK(eventually([&] { return ts.server->connectionCount() == 0; }));
}

TEST_CASE("security: a wrong proof is FATAL 28P01 on the wire") {
  TestServer ts(withUsers("alice:wonderland\n"));
  for (const std::string user : {"alice", "hatter"}) {
    CAPTURE(user);
    RawClient c(ts.server->port());
    REQUIRE(c.connected());
    c.send(startupPacket(user));
    auto sasl = c.readMessage();
    REQUIRE(sasl.has_value());
    REQUIRE(sasl->type == 'R');
    CHECK(sasl->authCode() == 10);
    CHECK(sasl->body.substr(4) == std::string("SCRAM-SHA-256\0\0", 15));

    const std::string clientFirst = "n,,n=,r=fyko+d2lbbFgONRv9qkxdawL";
    c.send(frontendMessage('p', std::string("SCRAM-SHA-256") + '\0' +
                                    be32(static_cast<uint32_t>(clientFirst.size())) + clientFirst));
    auto cont = c.readMessage();
    REQUIRE(cont.has_value());
    REQUIRE(cont->type == 'R');
    CHECK(cont->authCode() == 11);
    const std::string serverFirst = cont->body.substr(4);
    REQUIRE(serverFirst.rfind("r=fyko+d2lbbFgONRv9qkxdawL", 0) == 0);
    const std::string nonce = serverFirst.substr(2, serverFirst.find(',') - 2);
    CHECK(serverFirst.find(",i=4096") != std::string::npos);

    c.send(frontendMessage('p', "c=biws,r=" + nonce + ",p=" + encodeBase64(std::string(32, 'x'))));
    auto err = c.readMessage();
    REQUIRE(err.has_value());
    REQUIRE(err->type == 'E');
    CHECK(err->errorField('S') == "FATAL");
    CHECK(err->errorField('C') == "28P01");
    CHECK(err->errorField('M') == "password authentication failed for user \"" + user + "\"");
    CHECK_FALSE(c.readMessage().has_value());  // closed
  }
  CHECK(ts.handler.sessionsOpened.load() == 0);
}

TEST_CASE("security: a client that answers SASL with something else is refused") {
  TestServer ts(withUsers("alice:wonderland\n"));
  RawClient c(ts.server->port());
  c.send(startupPacket("alice"));
  auto sasl = c.readMessage();
  REQUIRE(sasl.has_value());
  c.send(frontendMessage('Q', std::string("select 'x'") + '\0'));
  auto err = c.readMessage();
  REQUIRE(err.has_value());
  REQUIRE(err->type == 'E');
  CHECK(err->errorField('C') == "08P01");
  CHECK(ts.handler.sessionsOpened.load() == 0);
}

TEST_CASE("security: --tls-required refuses plain-text sessions") {
  TestCertificate cert;
  PgServerOptions options;
  options.tlsCertFile = cert.certFile;
  options.tlsKeyFile = cert.keyFile;
  options.tlsRequired = true;
  TestServer ts(options);

  {
    PgConn conn(ts.conninfo("alice", "sslmode=disable"));
    CHECK_FALSE(conn.ok());
    CHECK(conn.error().find("TLS is required") != std::string::npos);
  }
  {
    RawClient c(ts.server->port());
    c.send(startupPacket("alice"));
    auto err = c.readMessage();
    REQUIRE(err.has_value());
    REQUIRE(err->type == 'E');
    CHECK(err->errorField('S') == "FATAL");
    CHECK(err->errorField('C') == "28000");
    CHECK(err->errorField('M') == "TLS is required");
  }
  {
    // An SSLRequest is answered 'S' (never 'N') when TLS is configured.
    RawClient c(ts.server->port());
    c.send(be32(8) + be32(kSslRequestCode));
    char answer = 0;
    REQUIRE(c.readExact(&answer, 1));
    CHECK(answer == 'S');
  }
  // TLS without a users file: no password needed.
  PgConn conn(ts.conninfo("alice", "sslmode=require"));
  REQUIRE_MESSAGE(conn.ok(), conn.error());
  CHECK(conn.tls());
  CHECK(conn.value("select 'trusted'") == "trusted");
  CHECK(ts.handler.sessionsOpened.load() == 1);
}

TEST_CASE("security: without a certificate SSLRequest gets 'N'") {
  TestServer ts(PgServerOptions{});
  PgConn required(ts.conninfo("alice", "sslmode=require"));
  CHECK_FALSE(required.ok());
  PgConn preferred(ts.conninfo("alice", "sslmode=prefer"));
  REQUIRE_MESSAGE(preferred.ok(), preferred.error());
  CHECK_FALSE(preferred.tls());
}

TEST_CASE("security: bad TLS configuration stops start()") {
  TinyHandler handler;
  boost::asio::io_context io;
  TestCertificate cert;
  auto startWith = [&](PgServerOptions o) -> std::string {
    o.host = "127.0.0.1";
    o.port = 0;
    PgServer server(io, handler, o);
    try {
      server.start();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "(started)";
  };
  PgServerOptions missing;
  missing.tlsCertFile = (cert.dir / "absent.crt").string();
  missing.tlsKeyFile = cert.keyFile;
  CHECK(startWith(missing).find("absent.crt") != std::string::npos);

  PgServerOptions swapped;
  swapped.tlsCertFile = cert.keyFile;
  swapped.tlsKeyFile = cert.certFile;
  CHECK(startWith(swapped).find("could not load TLS") != std::string::npos);

  PgServerOptions required;
  required.tlsRequired = true;
  CHECK(startWith(required).find("TLS is required") != std::string::npos);

  PgServerOptions fine;
  fine.tlsCertFile = cert.certFile;
  fine.tlsKeyFile = cert.keyFile;
  CHECK(startWith(fine) == "(started)");
}

TEST_CASE("security: a statement above the size limit is refused and the session goes on") {
  TestCertificate cert;
  PgServerOptions options;
  options.maxMessageBytes = 4096;
  options.tlsCertFile = cert.certFile;
  options.tlsKeyFile = cert.keyFile;
  TestServer ts(options);
  for (const char* mode : {"sslmode=disable", "sslmode=require"}) {
    CAPTURE(mode);
    PgConn conn(ts.conninfo("alice", mode));
    REQUIRE_MESSAGE(conn.ok(), conn.error());
    const std::string big = "select '" + std::string(100'000, 'x') + "'";
    PGresult* r = PQexec(conn.c, big.c_str());
    CHECK(PQresultStatus(r) == PGRES_FATAL_ERROR);
    const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    CHECK(std::string(state ? state : "") == "54000");
    CHECK(std::string(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY)) == "statement too large");
    PQclear(r);
    CHECK(conn.value("select 'still here'") == "still here");
    // The same through the extended protocol (a Parse message).
    r = PQexecParams(conn.c, big.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0);
    CHECK(PQresultStatus(r) == PGRES_FATAL_ERROR);
    state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    CHECK(std::string(state ? state : "") == "54000");
    PQclear(r);
    CHECK(conn.value("select 'and after'") == "and after");
  }
}
