// A flow's savepoints on disk (server/savepoints.cpp has the statements):
// <flow dir>/savepoints/<name>/ holds checkpoint.meta, the state snapshot and
// plan.txt, the EXPLAIN text of the plan that wrote it. Shared by STOP FLOW
// ... WITH SAVEPOINT, START FLOW ... FROM SAVEPOINT and CREATE OR REPLACE
// FLOW ... FROM SAVEPOINT (server/flow_replace.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "executor/checkpoint.h"

namespace rtsql {

struct Savepoint {
  std::string flow;
  std::string name;
  CheckpointInfo info;
  std::string plan;  // the EXPLAIN text of the plan it was taken of
};

// Throws 42602 at `pos` unless `name` is 1 to 64 letters, digits, '_' or '-'
// (not first): a savepoint never names a path outside its flow's directory.
void validateSavepointName(const std::string& name, size_t pos);

// The savepoint in `dir` (a directory under <flow dir>/savepoints), or
// nullopt when it holds none.
std::optional<Savepoint> readSavepoint(const std::string& dir, const std::string& flow);

// Writes the savepoint's copy of `checkpoint` and `plan` to `dir`, durably
// (every file, then the rename, then the directories above fsynced) before
// it returns. Throws 58030.
void writeSavepoint(const CheckpointInfo& checkpoint, const std::string& plan,
                    const std::string& dir);

// Makes the savepoint the newest checkpoint of the flow whose checkpoints are
// in `checkpointsDir`, written as any checkpoint is (whole or not at all), at
// an epoch after every one there; a pending reset is cleared, as a first
// checkpoint after it would. Returns that epoch.
uint64_t installSavepoint(const Savepoint& sp, const std::string& checkpointsDir);

}  // namespace rtsql
