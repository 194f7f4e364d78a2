#include "server/pgwire/tls.h"

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace rtsql::pgwire {

namespace {

// Why loading a file failed: the system's reason when it cannot be opened,
// else the first error OpenSSL queued (the later ones only repeat where it
// was noticed).
std::string loadFailure(const std::string& file, const boost::system::error_code& ec) {
  if (FILE* f = std::fopen(file.c_str(), "r")) {
    std::fclose(f);
  } else {
    const int err = errno;
    ERR_clear_error();
    return std::strerror(err);
  }
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code != 0) {
    const char* reason = ERR_reason_error_string(code);
    if (reason != nullptr) return reason;
  }
  return ec.message();
}

}  // namespace

std::shared_ptr<TlsContext> makeServerTlsContext(const std::string& certFile,
                                                 const std::string& keyFile) {
  auto ctx = std::make_shared<TlsContext>(TlsContext::tls_server);
  // SSL and TLS 1.0/1.1 are broken or deprecated; PostgreSQL's default
  // minimum is TLS 1.2 as well.
  ctx->set_options(TlsContext::default_workarounds | TlsContext::no_sslv2 |
                   TlsContext::no_sslv3 | TlsContext::no_tlsv1 | TlsContext::no_tlsv1_1 |
                   TlsContext::single_dh_use);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  boost::system::error_code ec;
  ctx->use_certificate_chain_file(certFile, ec);
  if (ec) {
    throw std::runtime_error(
        fmt::format("could not load TLS certificate \"{}\": {}", certFile,
                    loadFailure(certFile, ec)));
  }
  ctx->use_private_key_file(keyFile, TlsContext::pem, ec);
  if (ec) {
    throw std::runtime_error(
        fmt::format("could not load TLS private key \"{}\": {}", keyFile,
                    loadFailure(keyFile, ec)));
  }
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    throw std::runtime_error(fmt::format(
        "the TLS private key \"{}\" does not match the certificate \"{}\"", keyFile, certFile));
  }
  return ctx;
}

std::string tlsServerEndPoint(TlsContext& ctx) {
  X509* cert = SSL_CTX_get0_certificate(ctx.native_handle());
  if (cert == nullptr) return {};
  int digestNid = NID_undef;
  int keyNid = NID_undef;
  if (OBJ_find_sigid_algs(X509_get_signature_nid(cert), &digestNid, &keyNid) != 1) return {};
  const EVP_MD* digest = (digestNid == NID_md5 || digestNid == NID_sha1)
                             ? EVP_sha256()
                             : EVP_get_digestbynid(digestNid);
  if (digest == nullptr) return {};
  unsigned char hash[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (X509_digest(cert, digest, hash, &length) != 1) return {};
  return std::string(reinterpret_cast<char*>(hash), length);
}

}  // namespace rtsql::pgwire
