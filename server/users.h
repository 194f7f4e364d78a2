// The users rtsqld accepts and how they prove who they are: a users file read
// once at start (--users-file). Each line names one user and either a
// PostgreSQL SCRAM-SHA-256 verifier or a plain password, which is turned into
// a verifier as the file is loaded, so passwords are never kept in memory:
//
//   # comment
//   alice:SCRAM-SHA-256$4096:<salt b64>$<StoredKey b64>:<ServerKey b64>
//   bob:correct horse battery staple
//
// `rtsqld --hash-password` prints the verifier of a password for such a file.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

#include "server/pgwire/auth.h"

namespace rtsql {

class UserStore {
 public:
  // Reads and parses a users file. Throws SqlError F0000 naming the file and
  // line for a malformed line, a duplicate user or an empty file, and 58030
  // when the file cannot be read.
  static UserStore loadFile(const std::string& path);
  // Parses the text of a users file; `source` names it in error messages.
  static UserStore parse(std::string_view text, std::string_view source);

  // The user's verifier, or nullptr when there is no such user.
  const pgwire::ScramVerifier* find(std::string_view user) const;
  // A verifier for a user that does not exist: the same salt every time for
  // the same name (so a client cannot spot unknown names by a changing salt),
  // keys no password matches.
  pgwire::ScramVerifier mockVerifier(std::string_view user) const;

  size_t size() const { return users_.size(); }

 private:
  UserStore();

  std::unordered_map<std::string, pgwire::ScramVerifier> users_;
  std::string mockSecret_;
};

}  // namespace rtsql
