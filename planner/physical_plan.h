// The physical plan of a flow: what the executor runs. It is plain data with
// bound expressions; the executor needs nothing from SQL text to run it.
//
// A plan is a list of stages. Stage 0 reads the source with one task per source
// partition group (`maxPartitions`); every operator of a stage runs fused in the
// same task, one record at a time. A stage ends at a shuffle or at the sink.
// Stateless flows have a single stage: scan -> filter -> project -> sink.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/expr.h"
#include "common/options.h"
#include "common/schema.h"

namespace rtsql {

struct ScanSpec {
  std::string name;       // source name in the catalog
  std::string connector;  // kafka | datagen
  std::string format;     // json | csv | raw
  Options options;
  Schema schema;  // the rows the connector produces (declared + hidden columns)
  int eventTimeColumn = -1;  // watermark column, -1 when none
  int64_t watermarkDelayMicros = 0;
  int partitions = 0;  // source partitions known at plan time, 0 when unknown
};

enum class OperatorKind { Filter, Project };

struct OperatorSpec {
  OperatorKind kind = OperatorKind::Filter;
  ExprPtr predicate;           // Filter
  std::vector<ExprPtr> exprs;  // Project
  Schema output;               // the schema after this operator
  std::string describe() const;  // one line for EXPLAIN
};

struct StageSpec {
  int id = 0;
  int tasks = 1;
  std::vector<OperatorSpec> operators;
};

struct SinkSpec {
  std::string name;
  std::string connector;  // kafka | file
  std::string format;     // json | raw
  Options options;
  Schema input;         // the rows the flow writes
  int keyColumn = -1;   // json: the column used as the Kafka key, -1 for none
  // raw: indexes of the value / key / headers / topic columns in `input`, -1 when absent
  int valueColumn = -1;
  int headersColumn = -1;
  int topicColumn = -1;
};

struct PhysicalPlan {
  std::string flowName;
  ScanSpec scan;
  std::vector<StageSpec> stages;
  SinkSpec sink;
  int64_t checkpointIntervalMicros = 5LL * 60 * 1000 * 1000;
  Options flowOptions;

  int slots() const;           // total tasks over all stages
  std::string explain() const;  // the text EXPLAIN prints
};

}  // namespace rtsql
