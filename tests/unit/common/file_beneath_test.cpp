// openBeneath and openServerFile: a file a statement named is opened below
// its --files-dir directory, and a symbolic link swapped in at the file or at
// a directory on its way, or a '..', never leads the open out of it. Both
// ways of opening are covered: openat2(2) and the per-component fallback.
#include "common/file_beneath.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

using namespace rtsql;

namespace fs = std::filesystem;

namespace {

// A fresh directory holding `inside` (the allowed one) and `outside`,
// removed at the end of the test; the server's file roots are reset too.
struct Dirs {
  fs::path base;
  fs::path inside;
  fs::path outside;
  Dirs() {
    static int n = 0;
    base = fs::temp_directory_path() /
           ("rtsql-beneath-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    fs::remove_all(base);
    inside = base / "inside";
    outside = base / "outside";
    fs::create_directories(inside / "sub");
    fs::create_directories(outside / "sub");
    write(outside / "secret", "outside\n");
    write(outside / "sub" / "secret", "outside\n");
  }
  ~Dirs() {
    setServerFileRoots({});
    std::error_code ec;
    fs::remove_all(base, ec);
  }
  static void write(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

using OpenFn = int (*)(int, std::string_view, int, mode_t);

// Opens `relative` below `dir` for appending with `open`; returns the fd or
// -errno.
int openIn(OpenFn open, const fs::path& dir, const std::string& relative) {
  const int dirFd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(dirFd >= 0);
  const int fd = open(dirFd, relative, O_WRONLY | O_APPEND | O_CREAT, 0644);
  const int err = errno;
  ::close(dirFd);
  if (fd < 0) return -err;
  ::close(fd);
  return fd;
}

}  // namespace

TEST_CASE("openBeneath refuses links and '..', with openat2 and step by step") {
  for (OpenFn open : {&openBeneath, &openBeneathStepwise}) {
    CAPTURE((open == &openBeneath ? "openBeneath" : "openBeneathStepwise"));
    Dirs d;
    // A plain file and one in a subdirectory open and are created.
    CHECK(openIn(open, d.inside, "out.jsonl") >= 0);
    CHECK(fs::exists(d.inside / "out.jsonl"));
    CHECK(openIn(open, d.inside, "sub/out.jsonl") >= 0);
    CHECK(openIn(open, d.inside, "./sub//out.jsonl") >= 0);

    // The last component swapped for a link to a file outside.
    fs::remove(d.inside / "out.jsonl");
    fs::create_symlink(d.outside / "secret", d.inside / "out.jsonl");
    CHECK(openIn(open, d.inside, "out.jsonl") == -ELOOP);
    // A link that points nowhere: the file would be created outside.
    fs::create_symlink(d.outside / "new", d.inside / "dangling");
    CHECK(openIn(open, d.inside, "dangling") == -ELOOP);
    CHECK_FALSE(fs::exists(d.outside / "new"));

    // A directory on the way swapped for a link to a directory outside.
    fs::remove_all(d.inside / "sub");
    fs::create_directory_symlink(d.outside / "sub", d.inside / "sub");
    CHECK(openIn(open, d.inside, "sub/secret") == -ELOOP);
    CHECK(openIn(open, d.inside, "sub/fresh") == -ELOOP);
    CHECK_FALSE(fs::exists(d.outside / "sub" / "fresh"));

    // A link that stays inside is refused as well: no link is followed.
    fs::create_directories(d.inside / "real");
    fs::create_directory_symlink(d.inside / "real", d.inside / "alias");
    CHECK(openIn(open, d.inside, "alias/x") == -ELOOP);

    // '..' and absolute paths, even when they would end up inside.
    CHECK(openIn(open, d.inside, "../outside/secret") == -EXDEV);
    CHECK(openIn(open, d.inside, "real/../x") == -EXDEV);
    CHECK(openIn(open, d.inside, (d.outside / "secret").string()) == -EXDEV);

    CHECK(Dirs::read(d.outside / "secret") == "outside\n");
    CHECK(Dirs::read(d.outside / "sub" / "secret") == "outside\n");
  }
}

TEST_CASE("openServerFile opens beneath the server's file roots") {
  Dirs d;
  const std::string root = fs::canonical(d.inside).string();
  std::string why;

  // Without roots, any file opens as it is named, links followed.
  fs::create_symlink(d.outside / "secret", d.inside / "link");
  int fd = openServerFile((d.inside / "link").string(), O_RDONLY, 0, why);
  CHECK(fd >= 0);
  if (fd >= 0) ::close(fd);

  setServerFileRoots({root});
  // A file inside opens; one created inside lands there.
  fd = openServerFile((d.inside / "sub" / "a.jsonl").string(), O_WRONLY | O_CREAT | O_APPEND, 0644,
                      why);
  CHECK(fd >= 0);
  if (fd >= 0) ::close(fd);
  CHECK(fs::exists(d.inside / "sub" / "a.jsonl"));

  // A link out of the directory, a path outside, and '..' out of it.
  for (const fs::path& p : {d.inside / "link", d.outside / "secret",
                            d.inside / ".." / "outside" / "secret"}) {
    CAPTURE(p.string());
    why.clear();
    CHECK(openServerFile(p.string(), O_WRONLY | O_APPEND, 0, why) == -1);
    CHECK(why.find("outside the directories rtsqld allows") != std::string::npos);
  }
  // A link that points nowhere.
  fs::create_symlink(d.outside / "new", d.inside / "dangling");
  CHECK(openServerFile((d.inside / "dangling").string(), O_WRONLY | O_CREAT, 0644, why) == -1);
  CHECK_FALSE(fs::exists(d.outside / "new"));
  CHECK(Dirs::read(d.outside / "secret") == "outside\n");

  // readServerFile: a regular file inside, within its bound.
  Dirs::write(d.inside / "t.csv", "a,b\n");
  std::string text;
  CHECK(readServerFile((d.inside / "t.csv").string(), 100, text, why));
  CHECK(text == "a,b\n");
  CHECK_FALSE(readServerFile((d.inside / "t.csv").string(), 2, text, why));
  CHECK(why.find("over the 2") != std::string::npos);
  // A FIFO is refused without waiting for a writer.
  REQUIRE(::mkfifo((d.inside / "fifo").c_str(), 0600) == 0);
  CHECK_FALSE(readServerFile((d.inside / "fifo").string(), 100, text, why));
  CHECK(why == "it is not a regular file");
}
