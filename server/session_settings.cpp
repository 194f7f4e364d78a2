// The settings a session may SET and SHOW (session_settings.h).
#include "server/session_settings.h"

#include "common/ansi_mode.h"
#include "common/schema.h"
#include "parser/string_literals.h"
#include "server/views/view_forward.h"
#include "server/views/view_reads.h"

namespace rtsql {

const std::vector<SessionSetting>& sessionSettings() {
  using T = SettingTravel;
  // The PostgreSQL ones are there because drivers set them on connect;
  // rtsql writes dates, times and floats one way whatever DateStyle,
  // extra_float_digits and search_path say, so they change no answer.
  static const std::vector<SessionSetting> settings = {
      {"shuffle.partitions", "8", T::Stays},  // how a query is spread, not what it answers
      {"application_name", "", T::Stays},
      {"client_encoding", "UTF8", T::Stays},
      {"datestyle", "ISO, MDY", T::Stays},
      {"timezone", "UTC", T::Answer},
      {"extra_float_digits", "1", T::Stays},
      {"search_path", "public", T::Stays},
      {"rtsql.dry_run", "off", T::Stays},
      {"statement_timeout", "0", T::Deadline},
      {"rtsql.bounded_max_rows", "1000000", T::ResultBound, std::to_string(kBoundedMaxRowsLimit)},
      // A part read for another node is bounded as the bytes it may send.
      {"rtsql.bounded_max_bytes", "1073741824", T::ResultBound,
       std::to_string(kMaxForwardedBytes)},
      // How long FETCH waits for a cursor's rows (server/cursor.h).
      {"rtsql.fetch_wait", "5000", T::Stays},
      // What a read of a view sees (server/views/view_reads.h).
      {kViewSnapshotSetting, "committed", T::Answer},
      // Which copy of a view held elsewhere answers (server/views/
      // view_reads.h): chosen on the node asked, and a holder reads its own.
      {kViewReadSetting, "any", T::Stays},
      // Spark 4's ANSI mode (common/ansi_mode.h).
      {kAnsiModeSetting, "on", T::Answer},
      // Backslashes as written (parser/string_literals.h): the text sent is
      // already in the form every session reads alike.
      {kEscapedStringLiteralsSetting, "off", T::Stays},
  };
  return settings;
}

const SessionSetting* findSessionSetting(std::string_view key) {
  // Spark's names for two of them are the same settings.
  if (iequals(key, kSparkAnsiSetting)) return findSessionSetting(kAnsiModeSetting);
  if (iequals(key, kSparkEscapedStringLiteralsSetting))
    return findSessionSetting(kEscapedStringLiteralsSetting);
  for (const SessionSetting& s : sessionSettings()) {
    if (iequals(s.name, key)) return &s;
  }
  return nullptr;
}

std::vector<CarriedSetting> settingsForRead(const Options& session, bool wholeRead) {
  std::vector<CarriedSetting> out;
  for (const SessionSetting& s : sessionSettings()) {
    if (s.travel == SettingTravel::ResultBound && !wholeRead) {
      out.push_back({s.name, s.unbounded});
      continue;
    }
    const bool carried = s.travel == SettingTravel::Answer || s.travel == SettingTravel::ResultBound;
    if (!carried) continue;
    if (const OptionEntry* e = session.find(s.name)) out.push_back({s.name, e->value});
  }
  return out;
}

}  // namespace rtsql
