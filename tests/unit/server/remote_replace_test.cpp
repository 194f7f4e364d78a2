// The request a node writes into a flow's catalog record when it asks the
// flow's node to replace it (server/remote_replace.h): back as it was
// written, and anything else in the setting (another node's damage, a value
// of an earlier format) read as no request rather than run.
#include "server/remote_replace.h"

#include <doctest/doctest.h>

using namespace rtsql;

TEST_CASE("a replace request reads back as it was written, statement bytes and all") {
  ReplaceRequest req{"00ff12ab34cd56ef",
                     "CREATE OR REPLACE FLOW f INTO s AS SELECT k, count(*) AS n FROM ev\n"
                     "WHERE note = 'a:b\\n7:' GROUP BY k",
                     "alice",
                     {{"shuffle.partitions", "4"}, {"timezone", "Europe/Paris"}}};
  std::optional<ReplaceRequest> back = parseReplaceRequest(formatReplaceRequest(req));
  REQUIRE(back);
  CHECK(back->id == req.id);
  CHECK(back->sql == req.sql);
  CHECK(back->user == req.user);
  CHECK(back->settings == req.settings);

  std::vector<std::pair<std::string, std::string>> settings = {
      {"shuffle.partitions", "2"}, {kReplaceRequestSetting, formatReplaceRequest(req)}};
  REQUIRE(replaceRequestOf(settings));
  CHECK(replaceRequestOf(settings)->id == req.id);
  CHECK_FALSE(replaceRequestOf({{"shuffle.partitions", "2"}}));
}

TEST_CASE("a setting that is not a request is none") {
  for (const char* text : {"", "garbage", "rtsql-catalog 1\n", "5:hello"}) {
    CHECK_FALSE(parseReplaceRequest(text));
    CHECK_FALSE(replaceRequestOf({{kReplaceRequestSetting, text}}));
  }
  // A catalog file of another record, or of two requests, is not one either.
  ReplaceRequest req{"id1", "CREATE OR REPLACE FLOW f INTO s AS SELECT 1", "", {}};
  std::string one = formatReplaceRequest(req);
  CatalogRecord flow;
  flow.kind = "flow";
  flow.name = "f";
  flow.sql = "CREATE FLOW f INTO s AS SELECT 1";
  CHECK_FALSE(parseReplaceRequest(formatCatalogFile({flow})));
  CatalogRecord r;
  r.kind = "replace";
  r.name = "id1";
  CHECK_FALSE(parseReplaceRequest(formatCatalogFile({r, r})));
  // Cut anywhere, it is refused (the file's length and checksum).
  for (size_t n = 0; n < one.size(); n += 7) CHECK_FALSE(parseReplaceRequest(one.substr(0, n)));
}
