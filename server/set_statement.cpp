// SET (set_statement.h).
#include "server/set_statement.h"

#include <fmt/format.h>

#include "common/ansi_mode.h"
#include "common/time_zone.h"
#include "parser/string_literals.h"
#include "server/statement_timeout.h"
#include "server/views/view_reads.h"

namespace rtsql {

// Settings a session may SET and SHOW, with their defaults. The PostgreSQL ones
// are there because drivers set them on connect.
namespace {
const std::vector<std::pair<std::string, std::string>> kSettings = {
    {"shuffle.partitions", "8"},
    {"application_name", ""},
    {"client_encoding", "UTF8"},
    {"datestyle", "ISO, MDY"},
    {"timezone", "UTC"},
    {"extra_float_digits", "1"},
    {"search_path", "public"},
    {"rtsql.dry_run", "off"},
    {"statement_timeout", "0"},
    {"rtsql.bounded_max_rows", "1000000"},
    {"rtsql.fetch_wait", "5000"},  // how long FETCH waits for a cursor's rows (server/cursor.h)
    {kViewSnapshotSetting, "committed"},  // what a read of a view sees (server/views/view_reads.h)
    {kAnsiModeSetting, "on"},  // Spark 4's ANSI mode (common/ansi_mode.h)
    {kEscapedStringLiteralsSetting, "off"},  // backslashes as written (parser/string_literals.h)
};

const std::pair<std::string, std::string>* findSetting(const std::string& key) {
  // Spark's name for ANSI mode is the same setting.
  if (iequals(key, kSparkAnsiSetting)) return findSetting(kAnsiModeSetting);
  if (iequals(key, kSparkEscapedStringLiteralsSetting))
    return findSetting(kEscapedStringLiteralsSetting);
  for (const auto& s : kSettings) {
    if (iequals(s.first, key)) return &s;
  }
  return nullptr;
}

// A boolean setting's value in any of PostgreSQL's spellings; 22023 otherwise.
bool onOff(const std::string& value, const std::string& key, size_t pos) {
  const std::string v = toLower(value);
  if (v == "on" || v == "true" || v == "1") return true;
  if (v == "off" || v == "false" || v == "0") return false;
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("invalid value '{}' for {}", value, key), pos, "on or off");
}

}  // namespace

const std::string* SetStatement::settingDefault(const std::string& key) {
  const std::pair<std::string, std::string>* s = findSetting(key);
  return s ? &s->second : nullptr;
}

void SetStatement::set(EngineSession& s, const ast::Set& stmt, ResultWriter& out) {
  const auto* setting = findSetting(stmt.key);
  if (!setting) {
    throw SqlError(sqlstate::kUndefinedObject,
                   fmt::format("unrecognized configuration parameter \"{}\"", stmt.key), stmt.keyPos,
                   "known parameters: shuffle.partitions");
  }
  if (iequals(setting->first, "shuffle.partitions")) {
    Options probe({OptionEntry{setting->first, stmt.value, stmt.keyPos, stmt.keyPos}});
    probe.getInt(setting->first, 8, 1, 4096);  // validates
  }
  if (iequals(setting->first, "statement_timeout")) parseStatementTimeoutMs(stmt.value, stmt.keyPos);  // validates
  if (iequals(setting->first, "timezone")) findTimeZone(stmt.value, stmt.keyPos);  // validates
  // Kept as on or off whichever spelling set it (true, 1...).
  std::string value = stmt.value;
  if (iequals(setting->first, kAnsiModeSetting))
    value = parseAnsiMode(stmt.value, stmt.key, stmt.keyPos) ? "on" : "off";
  const bool literals = iequals(setting->first, kEscapedStringLiteralsSetting);
  if (literals) value = onOff(stmt.value, stmt.key, stmt.keyPos) ? "on" : "off";
  if (iequals(setting->first, "rtsql.bounded_max_rows")) {
    Options probe({OptionEntry{setting->first, stmt.value, stmt.keyPos, stmt.keyPos}});
    probe.getInt(setting->first, 1000000, 1, int64_t{1} << 40);  // validates
  }
  if (iequals(setting->first, "rtsql.fetch_wait")) parseStatementTimeoutMs(stmt.value, stmt.keyPos);  // validates
  if (iequals(setting->first, kViewSnapshotSetting)) checkViewRead(stmt.value, stmt.keyPos);
  if (iequals(setting->first, "rtsql.dry_run")) {
    std::string v = toLower(stmt.value);
    bool on = v == "on" || v == "true" || v == "1";
    if (!on && v != "off" && v != "false" && v != "0") {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("invalid value '{}' for rtsql.dry_run", stmt.value), stmt.keyPos,
                     "on or off");
    }
    // Turning it on copies the catalog as it is now; off drops the copy.
    if (on && !s.shadow) s.shadow = std::make_unique<Catalog>(ctx_.catalog);
    if (!on) s.shadow.reset();
  }
  if (stmt.local && !s.block.active()) {
    // As in PostgreSQL: checked, and then without effect.
    out.warning(sqlstate::kNoActiveSqlTransaction, "SET LOCAL can only be used in transaction blocks");
    out.complete("SET");
    return;
  }
  s.settings.set(setting->first, value);
  if (s.block.active() && !stmt.local) s.sessionSettings.set(setting->first, value);
  if (iequals(setting->first, "timezone")) out.parameterStatus("TimeZone", stmt.value);
  // PostgreSQL's name for what a driver must do with a backslash it quotes.
  if (literals) out.parameterStatus("standard_conforming_strings", value);
  out.complete("SET");
}

}  // namespace rtsql
