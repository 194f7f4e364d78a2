// How an avro or protobuf source's float field reads in a flow: a FLOAT, as
// Spark reads it (the source's column type, connectors/format/), or a DOUBLE,
// as releases before that read it. A flow records which when it is created
// (server/durability.cpp), and one recorded before (no such setting) is
// planned with DOUBLEs (server/catalog_replay.cpp), so its output types and
// state stay what they were.
#pragma once

#include "planner/catalog.h"

namespace rtsql {

// The setting a flow records: "on" for FLOATs, "off" for DOUBLEs.
inline constexpr const char* kFormatFloatsSetting = "rtsql.format_floats";

// `source` as a flow recorded before reads it: an avro or protobuf source
// with its FLOAT columns, and the FLOAT fields and items inside them, DOUBLE
// (the decoders read a float into the column's type); `source` itself for
// any other.
Catalog::SourcePtr withDoubleFormatFloats(const Catalog::SourcePtr& source);

}  // namespace rtsql
