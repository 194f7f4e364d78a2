// CREATE / DROP / INSERT of sources, sinks, tables, functions and processors,
// and DROP of any object (ddl.cpp). ALTER (alter.h) makes its new definitions
// of a source or sink with the same checks as CREATE.
#pragma once

#include "server/engine_context.h"

namespace rtsql {

class ObjectDdl {
 public:
  explicit ObjectDdl(EngineContext& ctx) : ctx_(ctx) {}

  void createSource(EngineSession& s, const ast::CreateSource& stmt, ResultWriter& out);
  void createSink(EngineSession& s, const ast::CreateSink& stmt, ResultWriter& out);
  void createTable(EngineSession& s, const ast::CreateTable& stmt, ResultWriter& out);
  void insert(EngineSession& s, const ast::Insert& stmt, ResultWriter& out);
  void createFunction(EngineSession& s, const ast::CreateFunction& stmt, ResultWriter& out);
  void createProcessor(EngineSession& s, const ast::CreateProcessor& stmt, ResultWriter& out);
  void drop(EngineSession& s, const ast::Drop& stmt, ResultWriter& out);
  // The definitions CREATE SOURCE / SINK make of their statements, checked;
  // ALTER makes them of the statement with its new options.
  SourceDef defineSource(const EngineSession& s, const ast::CreateSource& stmt);
  SinkDef defineSink(const EngineSession& s, const ast::CreateSink& stmt);

 private:
  EngineContext& ctx_;
};

}  // namespace rtsql
