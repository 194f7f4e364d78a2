// fileNameOf: any name, whatever bytes it holds, is one file name that stays
// in its directory, and different names get different file names.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "common/error.h"
#include "common/file_name.h"

using namespace rtsql;

namespace {

// A single, harmless path component: not "", "." or "..", no '/', no NUL,
// short enough for any file system.
bool isSafeComponent(const std::string& s) {
  if (s.empty() || s == "." || s == ".." || s.size() > kMaxFileNameBytes) return false;
  for (char c : s) {
    if (c == '/' || c == '\0') return false;
  }
  return true;
}

}  // namespace

TEST_CASE("plain lower-case names are their own file names") {
  CHECK(fileNameOf("clicks") == "clicks");
  CHECK(fileNameOf("per_user-2") == "per_user-2");
}

TEST_CASE("names that would leave the directory are encoded into one component") {
  CHECK(fileNameOf("..") == "%2E%2E");
  CHECK(fileNameOf(".") == "%2E");
  CHECK(fileNameOf("/") == "%2F");
  CHECK(fileNameOf("/etc") == "%2Fetc");
  CHECK(fileNameOf("/tmp/x") == "%2Ftmp%2Fx");
  CHECK(fileNameOf("a/../../b") == "a%2F%2E%2E%2F%2E%2E%2Fb");
  CHECK(fileNameOf("") == "%");
  CHECK(fileNameOf(std::string("a\0b", 3)) == "a%00b");
  CHECK(fileNameOf("%") == "%25");
  CHECK(fileNameOf("~") == "%7E");
  for (const std::string name : {"..", ".", "/", "/etc", "../../etc/passwd", "\\..\\x", " ", "a b",
                                 "\xC3\xA9t\xC3\xA9", "\xFF\xFE"}) {
    CHECK_MESSAGE(isSafeComponent(fileNameOf(name)), name);
  }
}

TEST_CASE("names that differ only in case get different file names") {
  CHECK(fileNameOf("Foo") == "%46oo");
  CHECK(fileNameOf("Foo") != fileNameOf("foo"));
  CHECK(fileNameOf("\xC3\x89") != fileNameOf("\xC3\xA9"));  // É and é
}

TEST_CASE("different names get different file names") {
  std::set<std::string> seen;
  const std::string names[] = {"a", "A", "a.", "a%2E", "a%", "%", "", std::string(1, '\0'),
                               std::string(2, '\0'), "..", ".", "%2E%2E", "a~", "~"};
  for (const std::string& n : names) CHECK_MESSAGE(seen.insert(fileNameOf(n)).second, n);
}

TEST_CASE("over-long names are cut to a prefix and a hash") {
  const std::string longName(10'000, 'x');
  std::string f = fileNameOf(longName);
  CHECK(isSafeComponent(f));
  CHECK(f.size() <= kMaxFileNameBytes);
  CHECK(f.find('~') != std::string::npos);
  CHECK(f.starts_with("xxxx"));
  CHECK(fileNameOf(longName) == f);  // stable

  // Names that share the kept prefix still differ.
  std::string other = longName;
  other.back() = 'y';
  CHECK(fileNameOf(other) != f);
  CHECK(isSafeComponent(fileNameOf(std::string(10'000, '/'))));
  CHECK(isSafeComponent(fileNameOf(std::string(10'000, '.'))));

  // The boundary: the longest name kept whole, and one byte more.
  CHECK(fileNameOf(std::string(kMaxFileNameBytes, 'a')) == std::string(kMaxFileNameBytes, 'a'));
  std::string cut = fileNameOf(std::string(kMaxFileNameBytes + 1, 'a'));
  CHECK(cut.size() <= kMaxFileNameBytes);
  CHECK(cut != std::string(kMaxFileNameBytes, 'a'));
  // A cut never splits an escape: what precedes the '~' decodes.
  std::string escapes = fileNameOf(std::string(1000, '.'));
  std::string prefix = escapes.substr(0, escapes.find('~'));
  CHECK(prefix.size() % 3 == 0);
}

TEST_CASE("childPath accepts one component and nothing else") {
  CHECK(childPath("/data/flows", "f") == "/data/flows/f");
  CHECK(childPath("/data/flows", fileNameOf("..")) == "/data/flows/%2E%2E");
  CHECK_THROWS_AS(childPath("/data/flows", ".."), InternalError);
  CHECK_THROWS_AS(childPath("/data/flows", "."), InternalError);
  CHECK_THROWS_AS(childPath("/data/flows", ""), InternalError);
  CHECK_THROWS_AS(childPath("/data/flows", "/etc"), InternalError);
  CHECK_THROWS_AS(childPath("/data/flows", "a/b"), InternalError);
  CHECK_THROWS_AS(childPath("/data/flows", std::string("a\0b", 3)), InternalError);
}
