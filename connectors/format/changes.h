// How a sink writes a stream that is not append-only (common/row_kind.h) as
// records, for the sinks that can say every change (planner/sink_changelog.h):
//
//   'mode' = 'upsert'        each row under the flow's unique key: an insert or
//                            an update as the key and the new row (json), a
//                            delete as a tombstone (the key, no value). The
//                            old row of an update is dropped: the new row that
//                            follows replaces it under the same key; an update
//                            that changes the key (a top-N rank change) first
//                            writes a tombstone under the old key, and an old
//                            row that nothing follows is a delete.
//   format = 'debezium-json' one record per change, as Debezium writes them:
//                            {"before": row|null, "after": row|null, "op": ...}
//                            with op "c" (insert), "u" (update: the old row and
//                            the new one in one record) or "d" (delete); an
//                            update that changes the key is a "d" under the
//                            old key, then a "c" under the new one. An
//                            UpdateBefore is paired with the UpdateAfter that
//                            follows it; one that nothing follows is a delete.
//
// Rows are json objects (visible columns in schema order) and keys are as the
// json format makes them (codec.h); a global aggregate's single row (an empty
// unique key) is written under the key {} in upsert mode.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "common/row_kind.h"
#include "connectors/format/codec.h"

namespace rtsql {

class ChangeEncoder {
 public:
  // Takes each record the encoder completes. The record is reused after.
  using Emit = std::function<void(const EncodedRecord&)>;

  // Null unless the sink writes changes this way (upsert mode or debezium-json).
  static std::unique_ptr<ChangeEncoder> make(const SinkSpec& sink);

  virtual ~ChangeEncoder() = default;
  // Encodes one change. An UpdateBefore may be held until the next call.
  virtual void add(const Row& row, RowKind kind, const Emit& emit) = 0;
  // Writes what is held (an UpdateBefore no UpdateAfter followed, as a delete):
  // when the task is through a batch of rows (SinkWriter::endOfChanges) and at
  // an epoch's end, before the sink flushes.
  virtual void finish(const Emit& emit) = 0;
};

}  // namespace rtsql
