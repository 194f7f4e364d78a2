#include "server/users.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/crypto.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/digest.h"
#include "common/error.h"

namespace rtsql {

namespace {

// PostgreSQL's longest role name (NAMEDATALEN - 1).
constexpr size_t kMaxNameBytes = 63;

SqlError userError(const char* state, std::string message, std::string hint = {}) {
  return SqlError(state, std::move(message), SqlError::npos, std::move(hint));
}

std::string systemError() { return std::strerror(errno); }

}  // namespace

UserStore::UserStore() : mockSecret_(pgwire::randomBytes(32)) {}

UserStore::UserStore(UserStore&& other) noexcept
    : users_(std::move(other.users_)),
      lines_(std::move(other.lines_)),
      retired_(std::move(other.retired_)),
      mockSecret_(std::move(other.mockSecret_)),
      path_(std::move(other.path_)) {}

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
  UserStore store = parse(text.str(), path);
  store.path_ = path;
  return store;
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
    if (first == std::string_view::npos || line[first] == '#') {
      store.lines_.push_back({std::string(), std::string(line)});
      continue;
    }

    auto fail = [&](const std::string& why) {
      return SqlError(sqlstate::kConfigFileError,
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
    store.users_.emplace(std::string(name),
                         std::make_shared<const pgwire::ScramVerifier>(std::move(verifier)));
    store.lines_.push_back({std::string(name), std::string()});
  }
  if (store.users_.empty()) {
    // An empty file would lock everyone out; that is more likely a mistake
    // (a wrong path, a file not yet written) than the intent.
    throw SqlError(sqlstate::kConfigFileError,
                   fmt::format("users file \"{}\" lists no users", source));
  }
  return store;
}

const pgwire::ScramVerifier* UserStore::find(std::string_view user) const {
  std::shared_lock lock(mu_);
  auto it = users_.find(std::string(user));
  return it == users_.end() ? nullptr : it->second.get();
}

pgwire::ScramVerifier UserStore::mockVerifier(std::string_view user) const {
  pgwire::ScramVerifier v;
  const std::string digest = hmacSha256(mockSecret_, user);
  v.salt = digest.substr(0, 16);
  v.storedKey = hmacSha256(mockSecret_, std::string("stored key of ").append(user));
  v.serverKey = hmacSha256(mockSecret_, std::string("server key of ").append(user));
  return v;
}

bool UserStore::checkPassword(std::string_view user, std::string_view password) const {
  const pgwire::ScramVerifier* known = find(user);
  const pgwire::ScramVerifier v = known ? *known : mockVerifier(user);
  const pgwire::ScramVerifier derived = pgwire::makeScramVerifier(password, v.salt, v.iterations);
  const bool same =
      derived.storedKey.size() == v.storedKey.size() &&
      CRYPTO_memcmp(derived.storedKey.data(), v.storedKey.data(), v.storedKey.size()) == 0;
  return known != nullptr && same;
}

size_t UserStore::size() const {
  std::shared_lock lock(mu_);
  return users_.size();
}

std::vector<std::string> UserStore::names() const {
  std::vector<std::string> out;
  {
    std::shared_lock lock(mu_);
    out.reserve(users_.size());
    for (const auto& [name, v] : users_) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string UserStore::firstUser() const {
  std::shared_lock lock(mu_);
  for (const Line& l : lines_) {
    if (!l.user.empty()) return l.user;
  }
  return {};
}

// ---- changes ------------------------------------------------------------------------

void UserStore::checkName(const std::string& user) {
  const std::string hint = "A user name is 1 to 63 bytes without whitespace, control characters "
                           "or ':', and does not start with '#'.";
  if (user.empty() || user.size() > kMaxNameBytes || user.front() == '#' ||
      std::any_of(user.begin(), user.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u <= 0x20 || u == 0x7F || c == ':';
      })) {
    throw userError(sqlstate::kInvalidParameterValue,
                    fmt::format("\"{}\" cannot be a user name", user), hint);
  }
}

pgwire::ScramVerifier UserStore::verifierOf(const std::string& user, std::string_view secret) {
  if (secret.empty()) {
    throw userError(sqlstate::kInvalidParameterValue,
                    fmt::format("empty password for user \"{}\"", user),
                    "An empty password would let anyone log in; give a non-empty one.");
  }
  // A verifier is taken as it is, so an administrator can set a password
  // without ever sending it (rtsqld --hash-password prints one).
  if (secret.rfind("SCRAM-SHA-256$", 0) == 0) {
    std::string why;
    if (auto parsed = pgwire::parseScramVerifier(secret, &why)) return std::move(*parsed);
    // The reason names the malformed part, never the text itself.
    throw userError(sqlstate::kInvalidParameterValue,
                    fmt::format("invalid SCRAM-SHA-256 verifier for user \"{}\": {}", user, why));
  }
  return pgwire::makeScramVerifier(secret);
}

bool UserStore::create(const std::string& user, std::string_view secret, bool ifNotExists) {
  checkName(user);
  // Hashing takes milliseconds; it is done before any lock is taken.
  auto verifier = std::make_shared<const pgwire::ScramVerifier>(verifierOf(user, secret));
  return change(
      [&] {
        if (users_.count(user) == 0) return true;
        if (ifNotExists) return false;
        throw userError(sqlstate::kDuplicateObject, fmt::format("user \"{}\" already exists", user),
                        "ALTER USER changes the password of an existing user.");
      },
      [&](Verifiers& users, std::vector<Line>& lines) {
        users.emplace(user, std::move(verifier));
        lines.push_back({user, std::string()});
      });
}

void UserStore::alter(const std::string& user, std::string_view secret) {
  auto verifier = std::make_shared<const pgwire::ScramVerifier>(verifierOf(user, secret));
  change(
      [&] {
        if (users_.count(user) != 0) return true;
        throw userError(sqlstate::kUndefinedObject, fmt::format("user \"{}\" does not exist", user),
                        "SHOW USERS lists the users; CREATE USER adds one.");
      },
      [&](Verifiers& users, std::vector<Line>&) { users[user] = std::move(verifier); });
}

bool UserStore::drop(const std::string& user, bool ifExists) {
  return change(
      [&] {
        if (users_.count(user) == 0) {
          if (ifExists) return false;
          throw userError(sqlstate::kUndefinedObject, fmt::format("user \"{}\" does not exist", user),
                          "SHOW USERS lists the users.");
        }
        if (users_.size() == 1) {
          // The server would refuse to start on a file without users.
          throw userError(sqlstate::kObjectNotInPrerequisiteState,
                          fmt::format("cannot drop \"{}\", the last user", user),
                          "Create another user first.");
        }
        return true;
      },
      [&](Verifiers& users, std::vector<Line>& lines) {
        users.erase(user);
        lines.erase(std::remove_if(lines.begin(), lines.end(),
                                   [&](const Line& l) { return l.user == user; }),
                    lines.end());
      });
}

bool UserStore::change(const std::function<bool()>& check,
                       const std::function<void(Verifiers&, std::vector<Line>&)>& apply) {
  std::lock_guard write(writeMu_);
  Verifiers users;
  std::vector<Line> lines;
  {
    std::shared_lock lock(mu_);
    if (!check()) return false;
    users = users_;
    lines = lines_;
  }
  apply(users, lines);
  writeFile(renderLocked(lines, users));
  commit(std::move(users), std::move(lines));
  return true;
}

void UserStore::commit(Verifiers users, std::vector<Line> lines) {
  std::unique_lock lock(mu_);
  // Verifiers that no longer appear stay alive for pointers find() gave out.
  for (auto& [name, v] : users_) {
    auto it = users.find(name);
    if (it == users.end() || it->second != v) retired_.push_back(v);
  }
  users_ = std::move(users);
  lines_ = std::move(lines);
}

std::string UserStore::render() const {
  std::shared_lock lock(mu_);
  return renderLocked(lines_, users_);
}

std::string UserStore::renderLocked(const std::vector<Line>& lines, const Verifiers& users) const {
  std::string out;
  for (const Line& l : lines) {
    if (l.user.empty()) {
      out += l.text;
    } else {
      out += l.user;
      out += ':';
      out += pgwire::formatScramVerifier(*users.at(l.user));
    }
    out += '\n';
  }
  return out;
}

void UserStore::writeFile(const std::string& text) const {
  if (path_.empty()) return;
  namespace fs = std::filesystem;
  // Through a symbolic link the file it points at is replaced, not the link.
  std::error_code ec;
  fs::path target = fs::canonical(path_, ec);
  if (ec) target = path_;
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  auto fail = [&](const std::string& what) {
    return SqlError(sqlstate::kIoError,
                    fmt::format("could not write users file \"{}\": {}", path_, what),
                    SqlError::npos, "The users file and its directory must be writable by rtsqld.");
  };

  // The new file keeps the old one's permissions (a users file is usually 0600).
  mode_t mode = 0600;
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) mode = st.st_mode & 07777;

  std::string tmp = (dir / (target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw fail(systemError());
  bool ok = ::fchmod(fd, mode) == 0;
  size_t done = 0;
  while (ok && done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ok = false;
    else done += static_cast<size_t>(n);
  }
  // The data reaches the disk before the rename makes it the users file, so a
  // crash leaves either the old file or the new one, never half of one.
  if (ok) ok = ::fsync(fd) == 0;
  const std::string why = ok ? std::string() : systemError();
  if (::close(fd) != 0 && ok) ok = false;
  if (!ok || ::rename(tmp.c_str(), target.c_str()) != 0) {
    const std::string reason = why.empty() ? systemError() : why;
    ::unlink(tmp.c_str());
    throw fail(reason);
  }
  // The rename itself is durable once the directory is synced.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace rtsql
