// Cutting the logical tree into physical stages. A scan starts a source stage;
// stateless operators fuse into the stage that produces their input (into every
// branch of a UNION ALL); a stateful operator starts a new stage with
// `shuffle.partitions` tasks whose input stages end in a shuffle by the
// operator's keys. Stages are numbered in the order they are created, so a
// stage's inputs always have smaller ids.
#include <fmt/format.h>

#include <algorithm>

#include "planner/logical_plan.h"

namespace rtsql::planner_detail {

namespace {

// A source stage reads with min(maxPartitions, partitions) tasks: more tasks
// than partitions would sit idle holding slots. 'maxPartitions' was read at
// CREATE SOURCE (SourceOptions::maxPartitions).
int sourceTasks(const SourceDef& source, const PlanContext& ctx, int* partitionsOut) {
  int partitions = ctx.sourcePartitions ? ctx.sourcePartitions(source) : 0;
  *partitionsOut = std::max(partitions, 0);
  const int maxPartitions = source.parsed ? source.parsed->maxPartitions : 0;
  if (maxPartitions > 0) {
    if (partitions > 0) return std::min(maxPartitions, partitions);
    return maxPartitions;
  }
  return partitions > 0 ? partitions : 1;
}

class StageCutter {
 public:
  StageCutter(const PlanContext& ctx, PhysicalPlan& plan) : ctx_(ctx), plan_(plan) {}

  // Returns the stages whose rows are `node`'s rows (several below a union).
  std::vector<int> cut(const NodePtr& node) {
    switch (node->kind) {
      case Node::Kind::Scan:
        return {scanStage(*node)};
      case Node::Kind::Operator: {
        if (node->op.stateful()) return {shuffleStage(*node)};
        std::vector<int> open = cut(node->inputs.at(0));
        for (int s : open) {
          StageSpec& stage = plan_.stages[static_cast<size_t>(s)];
          OperatorSpec op = node->op;
          op.base().id = nextOperatorId_++;
          stage.operators.push_back(std::move(op));
          stage.outputSchema = node->schema;
        }
        return open;
      }
      case Node::Kind::Union: {
        std::vector<int> open;
        for (const auto& input : node->inputs) {
          std::vector<int> branch = cut(input);
          open.insert(open.end(), branch.begin(), branch.end());
        }
        return open;
      }
    }
    throw InternalError("unknown logical node");
  }

 private:
  int scanStage(const Node& node) {
    const SourceDef& src = *node.source;
    ScanSpec scan;
    scan.name = src.name;
    scan.connector = src.connector;
    scan.format = src.format;
    scan.options = src.options;
    scan.parsed = src.parsed;
    scan.traits = src.traits;
    scan.schema = src.schema;
    if (src.watermark) {
      scan.eventTimeColumn = src.watermark->column;
      scan.watermarkDelayMicros = src.watermark->delayMicros;
    }
    scan.idleTimeoutMicros = sourceIdleTimeoutMicros(src.options);
    StageSpec stage;
    stage.id = static_cast<int>(plan_.stages.size());
    stage.tasks = sourceTasks(src, ctx_, &scan.partitions);
    stage.scan = static_cast<int>(plan_.scans.size());
    stage.outputSchema = node.schema;
    plan_.scans.push_back(std::move(scan));
    plan_.stages.push_back(std::move(stage));
    return plan_.stages.back().id;
  }

  int shuffleStage(const Node& node) {
    std::vector<std::vector<int>> inputs;
    for (const auto& input : node.inputs) inputs.push_back(cut(input));
    StageSpec stage;
    stage.id = static_cast<int>(plan_.stages.size());
    stage.inputs = static_cast<int>(node.inputs.size());
    // Without keys every row goes to one partition (a global aggregate):
    // more tasks would only hold slots.
    bool keyed = false;
    for (const auto& keys : node.shuffleKeys) keyed = keyed || !keys.empty();
    stage.tasks = keyed ? plan_.shufflePartitions : 1;
    OperatorSpec op = node.op;
    op.base().id = nextOperatorId_++;
    stage.operators.push_back(std::move(op));
    stage.outputSchema = node.schema;
    for (size_t i = 0; i < inputs.size(); ++i) {
      for (int s : inputs[i]) {
        StageOutput& out = plan_.stages[static_cast<size_t>(s)].output;
        out.kind = StageOutput::Kind::Shuffle;
        out.targetStage = stage.id;
        out.targetInput = static_cast<int>(i);
        out.keys = node.shuffleKeys.at(i);
      }
    }
    plan_.stages.push_back(std::move(stage));
    return plan_.stages.back().id;
  }

  const PlanContext& ctx_;
  PhysicalPlan& plan_;
  int nextOperatorId_ = 0;
};

}  // namespace

void cutStages(const NodePtr& root, const PlanContext& ctx, PhysicalPlan& plan) {
  StageCutter cutter(ctx, plan);
  for (int s : cutter.cut(root)) {
    plan.stages[static_cast<size_t>(s)].output = StageOutput{};  // Sink
  }
  if (plan.scans.empty()) throw InternalError("a plan without a scan");
  plan.sink.input = root->schema;
}

}  // namespace rtsql::planner_detail
