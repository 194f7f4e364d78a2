// How a number literal with a point binds: a DECIMAL, as Spark reads it
// (1.5 is DECIMAL(2, 1)), or a DOUBLE, as releases before that read it. A
// flow records which when it is created (server/durability.cpp), and one
// recorded before (no such setting) is planned with DOUBLEs
// (server/catalog_replay.cpp), so its output types and state stay what they
// were.
#pragma once

namespace rtsql {

// The setting a flow records: "on" for DECIMALs, "off" for DOUBLEs.
inline constexpr const char* kDecimalLiteralsSetting = "rtsql.decimal_literals";

// Installs how this thread's binders read such a literal for the life of the
// scope: a DECIMAL (the default) or, `decimal` false, a DOUBLE.
class DecimalLiteralScope {
 public:
  explicit DecimalLiteralScope(bool decimal);
  ~DecimalLiteralScope();
  DecimalLiteralScope(const DecimalLiteralScope&) = delete;
  DecimalLiteralScope& operator=(const DecimalLiteralScope&) = delete;

 private:
  bool previous_;
};

}  // namespace rtsql
