// Transaction blocks and cursors (block_statements.cpp): BEGIN, COMMIT,
// ROLLBACK, savepoints of a block, DECLARE / FETCH / CLOSE; and the check
// every statement passes in a block (what a block cannot undo is refused).
#pragma once

#include "server/engine_context.h"

namespace rtsql {

class AlterStatements;
class CatalogStoreReplay;
class FlowReplace;

class BlockStatements {
 public:
  BlockStatements(EngineContext& ctx, FlowReplace& replace, AlterStatements& alter,
                  CatalogStoreReplay& replay)
      : ctx_(ctx), replace_(replace), alter_(alter), replay_(replay) {}

  // Runs before every statement: in a block, it refuses what a block cannot
  // undo and says whether the statement is one of the block's DDL, recorded
  // when it succeeds.
  bool admitInBlock(EngineSession& s, const ast::Statement& stmt);
  void blockStatement(EngineSession& s, const ast::BlockStatement& stmt, ResultWriter& out);
  std::vector<ResultColumn> blockColumns(EngineSession& s, const ast::BlockStatement& stmt);

 private:
  void commitBlock(EngineSession& s, const std::vector<std::string>& statements, ResultWriter& out);
  void endBlock(EngineSession& s, bool committed);
  void declareCursor(EngineSession& s, const ast::BlockStatement& stmt, const BlockCommand& cmd,
                     ResultWriter& out);

  EngineContext& ctx_;
  FlowReplace& replace_;
  AlterStatements& alter_;
  CatalogStoreReplay& replay_;
};

}  // namespace rtsql
