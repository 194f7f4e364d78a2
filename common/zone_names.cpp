// Time-zone names from ICU's CLDR data (see zone_names.h).
//
// ICU is Debian's libicu (libicu-dev). java.time's CLDR provider picks a
// region's names as ICU's TimeZoneNames does: the region's own names where
// CLDR has them (Europe/London's British Summer Time), else those of its
// metazone (Europe/Berlin is Europe_Central: Central European Summer Time).
// Java names a region by its metazone of today for any instant, so the
// metazone is looked up at the present time; whether the standard or the
// daylight name applies is the tz database's business (TimeZone::isDaylight).
#include "common/zone_names.h"

#include <unicode/calendar.h>
#include <unicode/locid.h>
#include <unicode/tznames.h>
#include <unicode/unistr.h>

#include <map>
#include <memory>
#include <mutex>

namespace rtsql {

namespace {

std::string nameOf(const icu::TimeZoneNames& names, const icu::UnicodeString& id,
                   UTimeZoneNameType type, UDate now) {
  icu::UnicodeString name;
  names.getDisplayName(id, type, now, name);
  std::string out;
  name.toUTF8String(out);
  return out;
}

ZoneNames lookUp(std::string_view id) {
  ZoneNames out;
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::TimeZoneNames> names(
      icu::TimeZoneNames::createInstance(icu::Locale::getUS(), status));
  if (U_FAILURE(status) || !names) return out;  // no ICU data: the tz abbreviations stand in
  const auto zone =
      icu::UnicodeString::fromUTF8(icu::StringPiece(id.data(), static_cast<int32_t>(id.size())));
  const UDate now = icu::Calendar::getNow();
  out.shortStandard = nameOf(*names, zone, UTZNM_SHORT_STANDARD, now);
  out.shortDaylight = nameOf(*names, zone, UTZNM_SHORT_DAYLIGHT, now);
  out.longStandard = nameOf(*names, zone, UTZNM_LONG_STANDARD, now);
  out.longDaylight = nameOf(*names, zone, UTZNM_LONG_DAYLIGHT, now);
  return out;
}

}  // namespace

const ZoneNames& cldrZoneNames(std::string_view id) {
  static std::mutex mu;
  // Regions are few (the tz database's ~600) and each is looked up once; the
  // entries live as long as the process, so a reference to one stays valid.
  static std::map<std::string, ZoneNames, std::less<>> cache;
  std::lock_guard lock(mu);
  if (auto it = cache.find(id); it != cache.end()) return it->second;
  return cache.emplace(std::string(id), lookUp(id)).first->second;
}

}  // namespace rtsql
