// Stateful processors: what CREATE PROCESSOR defines and the checks made when
// it is created. A processor is a Python class (common/functions/
// common/python/processor.h) that TRANSFORM(input PARTITION BY keys USING PROCESSOR
// name WITH (...)) in FROM runs per partition key, with state of its own
// (the Transform operator, executor/operators/transform.cpp). docs/udf.md
// describes them for users.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/python/processor.h"
#include "common/schema.h"
#include "parser/ast.h"

namespace rtsql {

struct ProcessorDef {
  std::string name;  // as declared
  Schema returns;    // the RETURNS columns
  std::string language = "python";
  std::shared_ptr<const PythonProcessor> python;
  std::string bodyText;  // the code between the $$
  std::string sql;       // the CREATE PROCESSOR statement, for durability
  // The user who created it, as a function's (planner/user_function.h).
  std::string owner;
};

// Checks a CREATE PROCESSOR and compiles its class: LANGUAGE must be PYTHON
// (0A000 otherwise), RETURNS names distinct columns (42701), and the body must
// compile and define the class (42P13 with Python's message).
ProcessorDef defineProcessor(const ast::CreateProcessor& stmt);

// The processors that TRANSFORM items of `query` use (subqueries included),
// lower-cased, each once: a flow keeps this list so that they cannot be
// dropped or replaced under it.
std::vector<std::string> processorsUsed(const ast::Query& query);

}  // namespace rtsql
