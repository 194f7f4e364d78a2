// CREATE / ALTER / DROP USER and SHOW USERS (user_ddl.cpp) over the users
// file (server/users.h).
#pragma once

#include "server/engine_context.h"

namespace rtsql {

class UserDdl {
 public:
  explicit UserDdl(EngineContext& ctx) : ctx_(ctx) {}

  void userStatement(EngineSession& s, const ast::UserStatement& stmt, ResultWriter& out);
  static std::vector<ResultColumn> userColumns(const ast::UserStatement& stmt);

 private:
  EngineContext& ctx_;
};

}  // namespace rtsql
