// The settings a session may SET, and which of them a read of a view sent to
// another node carries (server/session_settings.h): each one that changes
// what the read answers, so that the holder answers as this node would.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "common/ansi_mode.h"
#include "common/options.h"
#include "parser/string_literals.h"
#include "server/session_settings.h"
#include "server/views/view_forward.h"
#include "server/views/view_reads.h"

using namespace rtsql;

namespace {

std::map<std::string, std::string> byName(const std::vector<CarriedSetting>& carried) {
  std::map<std::string, std::string> out;
  for (const CarriedSetting& c : carried) out[c.name] = c.value;
  return out;
}

// Every setting a session may SET, each with a value other than its default.
Options everySettingSet() {
  Options session;
  for (const SessionSetting& s : sessionSettings()) session.set(s.name, "set:" + s.name);
  return session;
}

}  // namespace

TEST_CASE("session settings: each says how it travels, and a new one must say it too") {
  // A setting added without deciding whether it changes an answer fails
  // here: add it to this list with the travel it needs.
  using T = SettingTravel;
  const std::map<std::string, SettingTravel> expected = {
      {"shuffle.partitions", T::Stays},        {"application_name", T::Stays},
      {"client_encoding", T::Stays},           {"datestyle", T::Stays},
      {"timezone", T::Answer},                 {"extra_float_digits", T::Stays},
      {"search_path", T::Stays},               {"rtsql.dry_run", T::Stays},
      {"statement_timeout", T::Deadline},      {"rtsql.bounded_max_rows", T::ResultBound},
      {"rtsql.fetch_wait", T::Stays},          {kViewSnapshotSetting, T::Answer},
      {kAnsiModeSetting, T::Answer},           {kEscapedStringLiteralsSetting, T::Stays},
      {"rtsql.bounded_max_bytes", T::ResultBound}, {kViewReadSetting, T::Stays},
  };
  std::set<std::string> seen;
  for (const SessionSetting& s : sessionSettings()) {
    INFO(s.name);
    REQUIRE(expected.count(s.name) == 1);
    CHECK(expected.at(s.name) == s.travel);
    CHECK(seen.insert(s.name).second);
  }
  CHECK(seen.size() == expected.size());
}

TEST_CASE("session settings: a read carries every setting that changes its answer") {
  const Options session = everySettingSet();
  const auto part = byName(settingsForRead(session, false));
  // A part of a query run here is read with no bound on its rows: this
  // node bounds the query's result, as when it reads a view it holds.
  CHECK(part == std::map<std::string, std::string>{
                    {"timezone", "set:timezone"},
                    {kViewSnapshotSetting, std::string("set:") + kViewSnapshotSetting},
                    {kAnsiModeSetting, std::string("set:") + kAnsiModeSetting},
                    {"rtsql.bounded_max_rows", std::to_string(kBoundedMaxRowsLimit)},
                    {"rtsql.bounded_max_bytes", std::to_string(kMaxForwardedBytes)}});
  // A whole read's result is the client's: its bound goes as the session has it.
  auto whole = byName(settingsForRead(session, true));
  CHECK(whole.size() == part.size());
  CHECK(whole["rtsql.bounded_max_rows"] == "set:rtsql.bounded_max_rows");
  CHECK(whole["rtsql.bounded_max_bytes"] == "set:rtsql.bounded_max_bytes");
}

TEST_CASE("session settings: a part of a query is read unbounded whatever the session set") {
  // The holder's default would bound it otherwise.
  // What it holds there is bounded as what this node takes of it at most.
  const auto part = byName(settingsForRead(Options(), false));
  CHECK(part == std::map<std::string, std::string>{
                    {"rtsql.bounded_max_rows", std::to_string(kBoundedMaxRowsLimit)},
                    {"rtsql.bounded_max_bytes", std::to_string(kMaxForwardedBytes)}});
  Options low;
  low.set("rtsql.bounded_max_rows", "5");
  CHECK(byName(settingsForRead(low, false))["rtsql.bounded_max_rows"] ==
        std::to_string(kBoundedMaxRowsLimit));
  CHECK(byName(settingsForRead(low, true))["rtsql.bounded_max_rows"] == "5");
}

TEST_CASE("session settings: one the session did not SET is not sent") {
  Options session;
  CHECK(settingsForRead(session, true).empty());
  session.set(kAnsiModeSetting, "off");
  session.set("application_name", "psql");
  session.set("statement_timeout", "5000");
  const std::vector<CarriedSetting> carried = settingsForRead(session, true);
  REQUIRE(carried.size() == 1);
  CHECK(carried[0].name == kAnsiModeSetting);
  CHECK(carried[0].value == "off");
}

TEST_CASE("session settings: found by any case, and by Spark's names") {
  REQUIRE(findSessionSetting("TimeZone"));
  CHECK(findSessionSetting("TimeZone")->name == "timezone");
  CHECK(findSessionSetting("TimeZone")->byDefault == "UTC");
  REQUIRE(findSessionSetting(kSparkAnsiSetting));
  CHECK(findSessionSetting(kSparkAnsiSetting)->name == kAnsiModeSetting);
  REQUIRE(findSessionSetting(kSparkEscapedStringLiteralsSetting));
  CHECK(findSessionSetting(kSparkEscapedStringLiteralsSetting)->name ==
        kEscapedStringLiteralsSetting);
  CHECK(findSessionSetting("no_such_setting") == nullptr);
}
