// ALTER SOURCE | SINK | FLOW (alter.cpp), and the restart of the flows it
// changes (each from its last checkpoint), with the statement lock held;
// also another node's ALTER, read from the cluster's catalog.
#pragma once

#include "server/engine_context.h"

namespace rtsql {

class ObjectDdl;

class AlterStatements {
 public:
  AlterStatements(EngineContext& ctx, ObjectDdl& ddl) : ctx_(ctx), ddl_(ddl) {}

  void alter(EngineSession& s, const ast::Alter& stmt, ResultWriter& out);
  void restartAltered(StatementLock::Guard& lock, const std::vector<std::string>& flows,
                      ResultWriter* out);
  // Another node's ALTER, read from the cluster's catalog: the object's new
  // statement `sql` replaces its definition in place, and the flows that use
  // it go on from their checkpoints. False when the change is not one ALTER
  // makes (the caller then drops and creates the object). Lock held.
  bool adoptAltered(EngineSession& replay, const std::string& kind, const std::string& name,
                    const std::string& sql);

 private:
  EngineContext& ctx_;
  ObjectDdl& ddl_;
};

}  // namespace rtsql
