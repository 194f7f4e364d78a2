// Time-zone names as Java prints them: the specific short and long names
// (PDT, Pacific Daylight Time) of a tz region in US English, from the CLDR
// data ICU carries, which is where Java's default locale provider (CLDR), so
// Spark's date_format 'z' and 'zzzz', takes them. Only the names come from
// ICU: offsets and transitions stay the system tz database's (time_zone.h).
#pragma once

#include <string>
#include <string_view>

namespace rtsql {

struct ZoneNames {
  std::string shortStandard, shortDaylight, longStandard, longDaylight;
};

// The CLDR names of the region `id` (Europe/Berlin), each empty where CLDR has
// none (most short names outside the Americas; an id ICU does not know). The
// names are those of the region's metazone today, as Java gives them whatever
// the instant. Thread-safe; looked up once per region.
const ZoneNames& cldrZoneNames(std::string_view id);

}  // namespace rtsql
