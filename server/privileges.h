// Who may do what on an rtsqld shared by several users.
//
// There are two kinds of user. A superuser is the first user of the users
// file, or one named by `--superuser NAME`; without a users file every client
// is trusted and so every session is a superuser's. Every other user may
// create and run sources, sinks, tables, flows and live queries, and change
// their own password, but not:
//   - create, drop or alter other users (42501);
//   - name a file of the server's machine (a file table's or file sink's
//     'path', the Kafka client's certificate and key locations) unless it
//     resolves inside a `--files-dir` directory (42501);
//   - make the server load a library or run a command (the Kafka client's
//     plugin.library.paths, ssl.engine.location, sasl.kerberos.kinit.cmd),
//     which is for superusers only (42501);
//   - create a Python function (CREATE FUNCTION ... LANGUAGE PYTHON), whose
//     code runs with the server's rights (42501);
//   - name a place the server connects to ('schema.registry.url', an HTTP
//     sink's 'url', 'kinesis.endpoint') unless the operator gave an outbound
//     allow-list (rtsqld --outbound-allow); with one, everyone's destinations
//     must be in it (connectors/net/outbound_policy.h) (42501);
//   - have the server sign requests with its own AWS credentials (a Kinesis
//     source without 'kinesis.accessKeyId'): a user's source brings its own
//     keys (42501);
//   - replace, drop or read the body of a function or processor of another
//     user, nor stop, start or drop another user's flow (42501).
// Functions, processors and flows have an owner: the user whose statement
// created them, recorded in the catalog. CREATE OR REPLACE keeps it, as in
// PostgreSQL. An object of a catalog written before owners were recorded has
// none, and is then the superusers' alone.
// With `--files-dir` given, superusers are confined to those directories too:
// the operator's list is the whole of what SQL may touch. Without it, only
// superusers may name files, and they may name any file rtsqld can open.
//
// A path is resolved before it is compared: made absolute against rtsqld's
// working directory, its symbolic links followed and its `..` taken out
// (std::filesystem::weakly_canonical), so neither `dir/../x` nor a link inside
// a directory pointing out of it escapes. A path through a link that points
// nowhere is refused, since the file it would create is not where it seems.
//
// These checks run when a statement names the file. Definitions restored from
// the catalog at start were checked when they were created and are not checked
// again; an operator who narrows --files-dir drops what should no longer be.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/options.h"

namespace rtsql {

class UserStore;

class Privileges {
 public:
  // `users` is null without a users file (every session a superuser's).
  // `filesDirs` must name existing directories: throws SqlError 58030 naming
  // the one that does not resolve, and 22023 for one that holds or lies
  // inside one of `ownPaths` (the data directory, the users file), which
  // statements must never write to.
  Privileges(std::shared_ptr<const UserStore> users, std::vector<std::string> superusers,
             const std::vector<std::string>& filesDirs,
             const std::vector<std::string>& ownPaths = {});

  bool isSuperuser(std::string_view user) const;

  // Throws SqlError 42501 unless `user` is a superuser. `action` says what was
  // refused ("create users"), `hint` what to do instead.
  void requireSuperuser(std::string_view user, std::string_view action,
                        const std::string& hint) const;

  // Whether `user` may change (replace, drop, stop, start) or read the body
  // of an object whose owner is `owner` (empty: the superusers').
  bool owns(std::string_view user, std::string_view owner) const;
  // Throws SqlError 42501 unless owns(); `action` says what was refused
  // ("drop function f"), at `pos` (the object's name in the statement), and
  // the hint names the owner.
  void requireOwner(std::string_view user, std::string_view owner, std::string_view action,
                    size_t pos) const;

  // Throws SqlError 42501 at the option's value unless `user` may have the
  // server open the file `option` names (see the header comment).
  void checkFile(std::string_view user, const OptionEntry& option) const;
  // Throws SqlError 42501 at the option's value unless `user` is a superuser:
  // the option makes the server load a library or run a command.
  void checkProgram(std::string_view user, const OptionEntry& option) const;
  // Throws SqlError 42501 at the option's value unless `user` may have the
  // server connect to the URL `option` names (see the header comment).
  void checkDestination(std::string_view user, const OptionEntry& option) const;
  // With an outbound allow-list, each broker of a Kafka bootstrap list must
  // be in it, whoever names it; without one, anyone may name brokers.
  void checkBrokers(const OptionEntry& option) const;
  // Throws SqlError 42501 unless `user` may have the server use its own
  // credentials for a destination.
  void checkServerCredentials(std::string_view user) const;
  // checkFile(), checkProgram(), checkDestination() and
  // checkServerCredentials() for every option of a source, sink or table
  // of `connector` that names a file or a program (connectors/provider.h).
  void checkOptions(std::string_view user, const std::string& connector,
                    const Options& options) const;

  // The --files-dir directories, resolved.
  const std::vector<std::string>& filesDirs() const { return filesDirs_; }

 private:
  std::shared_ptr<const UserStore> users_;
  std::vector<std::string> superusers_;
  std::vector<std::string> filesDirs_;
};

}  // namespace rtsql
