// The users rtsqld accepts and how they prove who they are: a users file read
// at start (--users-file) and kept up to date by CREATE / ALTER / DROP USER.
// Each line names one user and either a PostgreSQL SCRAM-SHA-256 verifier or
// a plain password, which is turned into a verifier as the file is loaded, so
// passwords are never kept in memory:
//
//   # comment
//   alice:SCRAM-SHA-256$4096:<salt b64>$<StoredKey b64>:<ServerKey b64>
//   bob:correct horse battery staple
//
// `rtsqld --hash-password` prints the verifier of a password for such a file.
//
// The store is shared by the protocol server (which looks users up for each
// new connection) and the engine (which changes them), so every method is
// thread-safe, and a change is visible to the next connection at once. A
// change rewrites the file first (a temporary file, fsync, rename), so what
// the server accepts and what it would load after a restart never differ.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "server/pgwire/auth.h"

namespace rtsql {

class UserStore {
 public:
  // Reads and parses a users file, and remembers its path: changes are
  // written back to it. Throws SqlError F0000 naming the file and line for a
  // malformed line, a duplicate user or an empty file, and 58030 when the file
  // cannot be read.
  static UserStore loadFile(const std::string& path);
  // Parses the text of a users file; `source` names it in error messages. A
  // store made this way has no file: changes stay in memory.
  static UserStore parse(std::string_view text, std::string_view source);

  UserStore(UserStore&& other) noexcept;
  UserStore& operator=(UserStore&&) = delete;

  // The user's verifier, or nullptr when there is no such user. The pointer
  // stays valid for the life of the store, even after the user is altered or
  // dropped: replaced verifiers are kept (about 100 bytes each, one per ALTER
  // or DROP), so a connection that looked a user up never reads freed memory.
  const pgwire::ScramVerifier* find(std::string_view user) const;
  // A verifier for a user that does not exist: the same salt every time for
  // the same name (so a client cannot spot unknown names by a changing salt),
  // keys no password matches.
  pgwire::ScramVerifier mockVerifier(std::string_view user) const;
  // Whether `password` is `user`'s (for HTTP Basic authentication, where the
  // client sends the password itself). Derives the key from the password and
  // the user's salt and compares it in constant time; an unknown user costs
  // the same derivation against mockVerifier, so the time taken does not tell
  // which names exist.
  bool checkPassword(std::string_view user, std::string_view password) const;

  size_t size() const;
  // Every user name, sorted.
  std::vector<std::string> names() const;
  // The user of the file's first user line: the owner of the server, a
  // superuser (server/privileges.h). CREATE USER appends and DROP USER refuses
  // to drop this user, so only editing the file changes who it is.
  std::string firstUser() const;
  // The file changes are written to; empty for a store made by parse().
  const std::string& path() const { return path_; }

  // Changes. `secret` is a password, or a SCRAM-SHA-256 verifier in
  // PostgreSQL's text form (taken as it is, as PostgreSQL's CREATE ROLE does).
  // Each throws SqlError: 22023 for a name the file cannot hold or an empty
  // password, 42710 when creating a user that exists, 42704 when altering or
  // dropping one that does not, 55000 when dropping the last user, 58030 when
  // the file cannot be written (the store is then unchanged). No message ever
  // includes the secret.
  //
  // create() returns false (and changes nothing) when the user exists and
  // `ifNotExists` is set; drop() returns false when the user does not exist
  // and `ifExists` is set.
  bool create(const std::string& user, std::string_view secret, bool ifNotExists = false);
  void alter(const std::string& user, std::string_view secret);
  bool drop(const std::string& user, bool ifExists = false);

  // The users-file text of the store as it is now: comments and blank lines of
  // the loaded file in place, every user as a verifier (a plain password read
  // from the file is written back as its verifier).
  std::string render() const;

 private:
  UserStore();

  // One line of the file: a user's (text regenerated from the verifier) or a
  // comment or blank line kept as it was.
  struct Line {
    std::string user;  // empty: `text` is a comment or blank line
    std::string text;
  };
  using Verifiers = std::unordered_map<std::string, std::shared_ptr<const pgwire::ScramVerifier>>;

  static pgwire::ScramVerifier verifierOf(const std::string& user, std::string_view secret);
  static void checkName(const std::string& user);
  std::string renderLocked(const std::vector<Line>& lines, const Verifiers& users) const;
  // Writes `text` to path_ atomically; nothing when there is no file.
  void writeFile(const std::string& text) const;
  // Makes `users`/`lines` the store's content, keeping replaced verifiers.
  void commit(Verifiers users, std::vector<Line> lines);
  // One change, made durably: with writeMu_ held, `check` looks at the users
  // as they are (under a read lock of mu_) and returns false when there is
  // nothing to do, or throws; `apply` then changes a copy of the users and
  // lines, the file is written as the copy is, and only then does the copy
  // become the store's, so a change the file cannot record changes nothing.
  // Returns what `check` returned.
  bool change(const std::function<bool()>& check,
              const std::function<void(Verifiers&, std::vector<Line>&)>& apply);

  // Serialises changes (which hold it while the file is written), so lookups
  // under `mu_` never wait for a disk.
  std::mutex writeMu_;
  mutable std::shared_mutex mu_;
  Verifiers users_;
  std::vector<Line> lines_;
  std::vector<std::shared_ptr<const pgwire::ScramVerifier>> retired_;
  std::string mockSecret_;
  std::string path_;
};

}  // namespace rtsql
