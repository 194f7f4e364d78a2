// What a row of a changelog means to the operator or sink that reads it.
//
// An append stream holds inserts only. A stream that carries retractions
// (planner/changelog.h) also holds deletes and updates; an update travels as
// two rows, the old value (UpdateBefore, a retraction of it) then the new one
// (UpdateAfter), so that an operator keeping derived state can take the old
// value out before it puts the new one in. The kind travels with the row in
// its RecordContext, through the operators of a stage and across the shuffle.
#pragma once

#include <cstdint>

namespace rtsql {

enum class RowKind : uint8_t {
  Insert = 0,
  UpdateBefore = 1,
  UpdateAfter = 2,
  Delete = 3,
};

// Insert and UpdateAfter add their row to the result; UpdateBefore and Delete
// take it away.
inline constexpr bool addsRow(RowKind k) {
  return k == RowKind::Insert || k == RowKind::UpdateAfter;
}
inline constexpr bool retractsRow(RowKind k) {
  return !addsRow(k);
}

// "+I", "-U", "+U", "-D": how EXPLAIN, live queries and debug output print a kind.
inline constexpr const char* rowKindSymbol(RowKind k) {
  switch (k) {
    case RowKind::Insert:
      return "+I";
    case RowKind::UpdateBefore:
      return "-U";
    case RowKind::UpdateAfter:
      return "+U";
    case RowKind::Delete:
      return "-D";
  }
  return "?";
}

}  // namespace rtsql
