// SHOW CREATE (show_create.cpp): the statement that makes an object as it is now.
#pragma once

#include "server/engine_context.h"

namespace rtsql {

class ShowCreate {
 public:
  explicit ShowCreate(EngineContext& ctx) : ctx_(ctx) {}

  void showCreate(EngineSession& s, const ast::ShowCreate& stmt, ResultWriter& out);
  static const std::vector<ResultColumn> kShowCreateColumns;

 private:
  std::string currentCreateText(ast::ObjectKind kind, const std::string& name,
                                const Catalog& catalog, bool reveal, bool* maskedAny) const;

  EngineContext& ctx_;
};

}  // namespace rtsql
