// SET (set_statement.h).
#include "server/set_statement.h"

#include <fmt/format.h>

#include "common/ansi_mode.h"
#include "common/time_zone.h"
#include "parser/string_literals.h"
#include "server/session_settings.h"
#include "server/statement_timeout.h"
#include "server/views/view_reads.h"

namespace rtsql {

namespace {

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
  const SessionSetting* s = findSessionSetting(key);
  return s ? &s->byDefault : nullptr;
}

void SetStatement::set(EngineSession& s, const ast::Set& stmt, ResultWriter& out) {
  const SessionSetting* setting = findSessionSetting(stmt.key);
  if (!setting) {
    throw SqlError(sqlstate::kUndefinedObject,
                   fmt::format("unrecognized configuration parameter \"{}\"", stmt.key), stmt.keyPos,
                   "known parameters: shuffle.partitions");
  }
  if (iequals(setting->name, "shuffle.partitions")) {
    Options probe({OptionEntry{setting->name, stmt.value, stmt.keyPos, stmt.keyPos}});
    probe.getInt(setting->name, 8, 1, 4096);  // validates
  }
  if (iequals(setting->name, "statement_timeout"))
    parseStatementTimeoutMs(stmt.value, stmt.keyPos);  // validates
  if (iequals(setting->name, "timezone")) findTimeZone(stmt.value, stmt.keyPos);  // validates
  // Kept as on or off whichever spelling set it (true, 1...).
  std::string value = stmt.value;
  if (iequals(setting->name, kAnsiModeSetting))
    value = parseAnsiMode(stmt.value, stmt.key, stmt.keyPos) ? "on" : "off";
  const bool literals = iequals(setting->name, kEscapedStringLiteralsSetting);
  if (literals) value = onOff(stmt.value, stmt.key, stmt.keyPos) ? "on" : "off";
  if (iequals(setting->name, "rtsql.bounded_max_rows")) {
    Options probe({OptionEntry{setting->name, stmt.value, stmt.keyPos, stmt.keyPos}});
    probe.getInt(setting->name, 1000000, 1, kBoundedMaxRowsLimit);  // validates
  }
  if (iequals(setting->name, "rtsql.bounded_max_bytes")) {
    Options probe({OptionEntry{setting->name, stmt.value, stmt.keyPos, stmt.keyPos}});
    probe.getInt(setting->name, 1 << 30, 1024, kBoundedMaxBytesLimit);  // validates
  }
  if (iequals(setting->name, "rtsql.fetch_wait"))
    parseStatementTimeoutMs(stmt.value, stmt.keyPos);  // validates
  if (iequals(setting->name, kViewSnapshotSetting)) checkViewRead(stmt.value, stmt.keyPos);
  if (iequals(setting->name, kViewReadSetting)) checkViewCopy(stmt.value, stmt.keyPos);
  if (iequals(setting->name, "rtsql.dry_run")) {
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
  s.settings.set(setting->name, value);
  if (s.block.active() && !stmt.local) s.sessionSettings.set(setting->name, value);
  if (iequals(setting->name, "timezone")) out.parameterStatus("TimeZone", stmt.value);
  // PostgreSQL's name for what a driver must do with a backslash it quotes.
  if (literals) out.parameterStatus("standard_conforming_strings", value);
  out.complete("SET");
}

}  // namespace rtsql
