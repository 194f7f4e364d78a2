// A flow's dialect markers: the settings that say how a flow reads what rtsql
// has since come to read as Spark does — ANSI mode (common/ansi_mode.h), a
// number literal with a point (planner/decimal_literals.h), an avro or
// protobuf float (planner/format_floats.h) and a TIMESTAMP literal
// (planner/timestamp_literals.h). They share one life: a flow records each
// when it is created, "on" unless its session SET it (server/durability.cpp),
// and one stored before a marker existed is replayed with it "off", reading as
// it did then, so its output types and state stay what they were
// (server/catalog_replay.cpp). What each changes stays in its own header,
// beside the binder or decoder it steers; a new marker is one more line here.
#pragma once

#include <array>

#include "common/ansi_mode.h"
#include "planner/decimal_literals.h"
#include "planner/format_floats.h"
#include "planner/timestamp_literals.h"

namespace rtsql {

inline constexpr std::array<const char*, 4> kFlowDialectMarkers = {
    kAnsiModeSetting, kDecimalLiteralsSetting, kFormatFloatsSetting, kTimestampLiteralsSetting};

// A marker's value for what a flow reads today, and for what one stored
// before the marker existed read.
inline constexpr const char* kDialectNow = "on";
inline constexpr const char* kDialectBefore = "off";

}  // namespace rtsql
