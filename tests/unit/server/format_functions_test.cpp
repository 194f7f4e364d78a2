// from_protobuf and to_protobuf with a descriptor set named by its path
// (connectors/format/format_functions.h): the file is read beneath the
// server's data directory, and a path that leaves it is refused. (The
// functions themselves: tests/sql/format_functions.test.)
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "common/hex.h"
#include "server/engine.h"
#include "server_test_util.h"

using namespace rtsql;
using rtsql::testing::RestoredEngine;
using rtsql::testing::ResultCapture;

namespace {

using Fixture = rtsql::testing::EngineFixture<>;

// protoc's descriptor set of: syntax = "proto3"; package t;
// message P { int64 id = 1; string name = 2; repeated float xs = 3; Inner in = 4; }
// message Inner { bool ok = 1; }
constexpr const char* kDescriptorHex =
    "0A80010A07742E70726F746F12017422510A0150120E0A0269641801200128035202696412120A046E616D65"
    "18022001280952046E616D65120E0A0278731803200328025202787312180A02696E18042001280B32082E74"
    "2E496E6E65725202696E22170A05496E6E6572120E0A026F6B18012001280852026F6B620670726F746F33";

}  // namespace

TEST_CASE_FIXTURE(Fixture, "from_protobuf reads a descriptor file beneath the data directory") {
  std::filesystem::create_directories(dataDir() / "schemas");
  {
    std::string bytes;
    REQUIRE(decodeHex(kDescriptorHex, bytes));
    std::ofstream(dataDir() / "schemas" / "t.desc", std::ios::binary) << bytes;
    // The same file outside the data directory.
    std::ofstream(tmp.path / "outside.desc", std::ios::binary) << bytes;
  }
  std::filesystem::create_symlink(tmp.path / "outside.desc", dataDir() / "link.desc");
  RestoredEngine e(options, connectors);
  ResultCapture ok = e.run(
      "SELECT hex(to_protobuf(named_struct('id', CAST(7 AS BIGINT)), 't.P', 'schemas/t.desc')), "
      "CAST(from_protobuf(X'0807', 't.P', 'schemas/t.desc') AS STRING)");
  rtsql::testing::requireOk(ok, "a descriptor beneath the data directory");
  REQUIRE(ok.rows.size() == 1);
  CHECK(ok.rows[0][0] == "0807");
  CHECK(ok.rows[0][1] == "{7, , [], null}");
  const std::string outside = (tmp.path / "outside.desc").string();
  for (const std::string& path :
       {std::string("../outside.desc"), outside, std::string("link.desc")}) {
    ResultCapture r = e.run("SELECT from_protobuf(X'0807', 't.P', '" + path + "')");
    REQUIRE_MESSAGE(r.err, path);
    CHECK_MESSAGE(r.err->sqlstate() == "22023", path, ": ", r.err->message());
    CHECK(r.err->hasPosition());
  }
  ResultCapture missing = e.run("SELECT from_protobuf(X'0807', 't.P', 'schemas/none.desc')");
  REQUIRE(missing.err);
  CHECK(missing.err->sqlstate() == "58030");
}
