#include "common/file_beneath.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <mutex>
#include <system_error>
#include <utility>

namespace rtsql {

namespace fs = std::filesystem;

namespace {

// Closes a descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

// The components of `relative`, or nullopt (errno EXDEV) when one is '..' or
// the path is absolute. Empty components and '.' are dropped.
std::optional<std::vector<std::string>> components(std::string_view relative) {
  if (!relative.empty() && relative.front() == '/') {
    errno = EXDEV;
    return std::nullopt;
  }
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= relative.size()) {
    size_t end = relative.find('/', start);
    if (end == std::string_view::npos) end = relative.size();
    std::string_view part = relative.substr(start, end - start);
    if (part == "..") {
      errno = EXDEV;
      return std::nullopt;
    }
    if (!part.empty() && part != ".") parts.emplace_back(part);
    start = end + 1;
  }
  return parts;
}

// Set once the kernel said it has no openat2(2): the fallback from then on.
std::atomic<bool> noOpenat2{false};

std::mutex rootsMu;
std::vector<std::string>& roots() {
  static std::vector<std::string> dirs;
  return dirs;
}

}  // namespace

int openBeneathStepwise(int dirFd, std::string_view relative, int flags, mode_t mode) {
  const auto parts = components(relative);
  if (!parts) return -1;
  if (parts->empty()) return ::openat(dirFd, ".", flags | O_CLOEXEC, mode);
  Fd dir(-1);
  int at = dirFd;
  for (size_t i = 0; i + 1 < parts->size(); ++i) {
    const std::string& part = (*parts)[i];
    int next = ::openat(at, part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      // A link to a directory fails as "not a directory": say what it is.
      const int err = errno;
      struct stat st {};
      errno = err == ENOTDIR && ::fstatat(at, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                      S_ISLNK(st.st_mode)
                  ? ELOOP
                  : err;
      return -1;
    }
    dir.reset(next);
    at = dir.get();
  }
  return ::openat(at, parts->back().c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
}

int openBeneath(int dirFd, std::string_view relative, int flags, mode_t mode) {
  // RESOLVE_BENEATH alone lets "a/../b" through; '..' is refused everywhere
  // so that both ways of opening agree.
  const auto parts = components(relative);
  if (!parts) return -1;
  if (!noOpenat2.load(std::memory_order_relaxed)) {
    std::string joined;
    for (const std::string& p : *parts) joined += (joined.empty() ? "" : "/") + p;
    if (joined.empty()) joined = ".";
    struct open_how how {};
    how.flags = static_cast<uint64_t>(flags | O_CLOEXEC | O_NOFOLLOW);
    how.mode = (flags & O_CREAT) != 0 ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    // EAGAIN: a rename or mount raced the lookup; the kernel asks for a retry.
    for (int attempt = 0; attempt < 16; ++attempt) {
      const long fd = ::syscall(SYS_openat2, dirFd, joined.c_str(), &how, sizeof how);
      if (fd >= 0) return static_cast<int>(fd);
      if (errno == EAGAIN || errno == EINTR) continue;
      if (errno != ENOSYS) return -1;
      noOpenat2.store(true, std::memory_order_relaxed);
      break;
    }
    if (!noOpenat2.load(std::memory_order_relaxed)) return -1;
  }
  return openBeneathStepwise(dirFd, relative, flags, mode);
}

void setServerFileRoots(std::vector<std::string> dirs) {
  std::lock_guard lock(rootsMu);
  roots() = std::move(dirs);
}

std::vector<std::string> serverFileRoots() {
  std::lock_guard lock(rootsMu);
  return roots();
}

std::optional<std::string> resolveServerPath(const std::string& text) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(fs::path(text), ec);
  if (ec) return std::nullopt;
  const fs::path p = fs::weakly_canonical(absolute, ec);
  if (ec) return std::nullopt;
  // weakly_canonical follows the links of the part that exists; a link whose
  // target is missing ends that part and stays in the result as a name.
  fs::path prefix;
  for (const auto& part : p) {
    prefix /= part;
    if (fs::is_symlink(fs::symlink_status(prefix, ec))) return std::nullopt;
  }
  return p.string();
}

bool pathInside(const std::string& path, const std::string& dir) {
  const fs::path p(path);
  const fs::path d(dir);
  auto pi = p.begin();
  for (auto di = d.begin(); di != d.end(); ++di, ++pi) {
    // A trailing '/' of `dir` is an empty last element.
    if (di->empty() && std::next(di) == d.end()) break;
    if (pi == p.end() || *pi != *di) return false;
  }
  return true;
}

int openServerFile(const std::string& path, int flags, mode_t mode, std::string& why) {
  const std::vector<std::string> dirs = serverFileRoots();
  if (dirs.empty()) {
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    if (fd < 0) why = std::strerror(errno);
    return fd;
  }
  std::string list;
  for (const std::string& dir : dirs) list += (list.empty() ? "" : ", ") + dir;
  const std::optional<std::string> resolved = resolveServerPath(path);
  if (!resolved) {
    why = fmt::format(
        "its path goes through a symbolic link that points nowhere or a directory rtsqld cannot "
        "read, so it cannot be told to lie inside the directories rtsqld allows ({})",
        list);
    return -1;
  }
  for (const std::string& dir : dirs) {
    if (!pathInside(*resolved, dir)) continue;
    Fd root(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (root.get() < 0) {
      why = fmt::format("the directory \"{}\" cannot be opened: {}", dir, std::strerror(errno));
      return -1;
    }
    const std::string relative = fs::path(*resolved).lexically_relative(dir).string();
    const int fd = openBeneath(root.get(), relative, flags, mode);
    if (fd >= 0) return fd;
    if (errno == ELOOP || errno == EXDEV) {
      why = fmt::format(
          "a symbolic link is on its way inside \"{}\", and rtsqld follows none there when it "
          "opens a file (it could lead out of the directory)",
          dir);
    } else {
      why = std::strerror(errno);
    }
    return -1;
  }
  why = fmt::format("it is outside the directories rtsqld allows ({}; links and '..' followed)",
                    list);
  return -1;
}

bool readServerFile(const std::string& path, size_t maxBytes, std::string& out, std::string& why) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  Fd fd(openServerFile(path, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0, why));
  if (fd.get() < 0) return false;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    why = std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    why = "it is not a regular file";
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) > maxBytes) {
    why = fmt::format("it is {} bytes, over the {} it may have", st.st_size, maxBytes);
    return false;
  }
  out.clear();
  out.reserve(static_cast<size_t>(st.st_size));
  char buffer[65536];
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      why = std::strerror(errno);
      return false;
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > maxBytes) {
      why = fmt::format("it grew past the {} bytes it may have", maxBytes);
      return false;
    }
    out.append(buffer, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace rtsql
