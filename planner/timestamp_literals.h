// How a TIMESTAMP literal binds: a wall clock in the session time zone (a
// flow's own zone, its option 'timezone'), as Spark reads it, or in UTC, as
// releases before that read it. A flow records which when it is created
// (server/durability.cpp), and one recorded before (no such setting) is
// planned reading them in UTC (server/catalog_replay.cpp), so what it
// computes stays what it was.
#pragma once

namespace rtsql {

// The setting a flow records: "on" for the session zone, "off" for UTC.
inline constexpr const char* kTimestampLiteralsSetting = "rtsql.zoned_timestamp_literals";

// Installs how this thread's binders read a TIMESTAMP literal for the life of
// the scope: in the session zone (the default) or, `zoned` false, in UTC.
class TimestampLiteralScope {
 public:
  explicit TimestampLiteralScope(bool zoned);
  ~TimestampLiteralScope();
  TimestampLiteralScope(const TimestampLiteralScope&) = delete;
  TimestampLiteralScope& operator=(const TimestampLiteralScope&) = delete;

 private:
  bool previous_;
};

}  // namespace rtsql
