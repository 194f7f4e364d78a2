#include "server/users.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "common/error.h"

namespace rtsql {

namespace {

// PostgreSQL's SQLSTATE for a malformed configuration file.
constexpr const char* kConfigFileError = "F0000";

}  // namespace

UserStore::UserStore() : mockSecret_(pgwire::randomBytes(32)) {}

UserStore UserStore::loadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw SqlError(sqlstate::kIoError, fmt::format("could not read users file \"{}\"", path));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    throw SqlError(sqlstate::kIoError, fmt::format("could not read users file \"{}\"", path));
  }
  return parse(text.str(), path);
}

UserStore UserStore::parse(std::string_view text, std::string_view source) {
  UserStore store;
  size_t lineNo = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++lineNo;
    // Files written on Windows end lines with CR LF; the CR is not part of a
    // password. Other whitespace is kept: a password may end with a space.
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;

    auto fail = [&](const std::string& why) {
      return SqlError(kConfigFileError,
                      fmt::format("users file \"{}\" line {}: {}", source, lineNo, why),
                      SqlError::npos, "Each line reads name:password or name:SCRAM-SHA-256$...");
    };
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) throw fail("expected name:password");
    const std::string_view name = line.substr(0, colon);
    const std::string_view secret = line.substr(colon + 1);
    if (name.empty()) throw fail("the user name is empty");
    if (name.find_first_of(" \t") != std::string_view::npos) {
      throw fail(fmt::format("the user name \"{}\" contains whitespace", name));
    }
    if (secret.empty()) throw fail(fmt::format("user \"{}\" has an empty password", name));
    if (store.users_.count(std::string(name)) != 0) {
      throw fail(fmt::format("user \"{}\" is listed twice", name));
    }

    pgwire::ScramVerifier verifier;
    if (secret.rfind("SCRAM-SHA-256$", 0) == 0) {
      std::string why;
      auto parsed = pgwire::parseScramVerifier(secret, &why);
      if (!parsed) throw fail(fmt::format("user \"{}\": {}", name, why));
      verifier = std::move(*parsed);
    } else {
      verifier = pgwire::makeScramVerifier(secret);
    }
    store.users_.emplace(std::string(name), std::move(verifier));
  }
  if (store.users_.empty()) {
    // An empty file would lock everyone out; that is more likely a mistake
    // (a wrong path, a file not yet written) than the intent.
    throw SqlError(kConfigFileError, fmt::format("users file \"{}\" lists no users", source));
  }
  return store;
}

const pgwire::ScramVerifier* UserStore::find(std::string_view user) const {
  auto it = users_.find(std::string(user));
  return it == users_.end() ? nullptr : &it->second;
}

pgwire::ScramVerifier UserStore::mockVerifier(std::string_view user) const {
  pgwire::ScramVerifier v;
  const std::string digest = pgwire::hmacSha256(mockSecret_, user);
  v.salt = digest.substr(0, 16);
  v.storedKey = pgwire::hmacSha256(mockSecret_, std::string("stored key of ").append(user));
  v.serverKey = pgwire::hmacSha256(mockSecret_, std::string("server key of ").append(user));
  return v;
}

}  // namespace rtsql
