// SET of a session's settings (set_statement.cpp): the settings a session may
// SET and SHOW, with their defaults, and the checks of their values.
#pragma once

#include "server/engine_context.h"

namespace rtsql {

class SetStatement {
 public:
  explicit SetStatement(EngineContext& ctx) : ctx_(ctx) {}

  void set(EngineSession& s, const ast::Set& stmt, ResultWriter& out);
  // The default of a setting a session may SET (client_encoding, TimeZone,
  // ...), which SHOW answers before any SET; null for any other name.
  static const std::string* settingDefault(const std::string& key);

 private:
  EngineContext& ctx_;
};

}  // namespace rtsql
