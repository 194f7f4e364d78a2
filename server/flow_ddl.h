// CREATE FLOW (and CREATE MATERIALIZED VIEW), STOP FLOW and START FLOW
// (flow_ddl.cpp). CREATE OR REPLACE of a flow that exists is flow_replace.h's.
#pragma once

#include "server/engine_context.h"

namespace rtsql {

class FlowReplace;

class FlowDdl {
 public:
  FlowDdl(EngineContext& ctx, FlowReplace& replace) : ctx_(ctx), replace_(replace) {}

  void createFlow(EngineSession& s, const ast::CreateFlow& stmt, ResultWriter& out);
  void stopFlow(EngineSession& s, const ast::FlowCommand& stmt, ResultWriter& out);
  void startFlow(EngineSession& s, const ast::FlowCommand& stmt, ResultWriter& out);
  // The catalog's definition of flow `stmt` planned as `plan`: what CREATE
  // FLOW, a dry run's and a block's CREATE, and a replace record.
  static FlowDef flowDefinition(const ast::CreateFlow& stmt, const PhysicalPlan& plan,
                                const Catalog& catalog, const std::string& owner);

 private:
  // CREATE MATERIALIZED VIEW: its name is free among the relations.
  void requireViewName(const EngineSession& s, const ast::CreateFlow& stmt) const;

  EngineContext& ctx_;
  FlowReplace& replace_;
};

}  // namespace rtsql
