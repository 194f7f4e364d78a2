// How the records of one writer's schema give a source's columns: the plan
// the Avro and protobuf decoders share. Such a decoder meets writers'
// schemas (its inline one, or one per id the schema registry names); for
// each it plans once which of the writer's fields fills which column, which
// columns are the record's hidden metadata, and why the writer's records
// give no row at all, then reads every record of that writer by the plan.
// How a field is read stays the codec's own (its `Field`: Avro's node and
// writer's type, protobuf's field number).
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/schema.h"
#include "common/types.h"
#include "connectors/format/decode_util.h"

namespace rtsql::format {

// A source's column as a decoder fills it.
struct PlannedColumn {
  std::string name;
  DataTypePtr type;
  MetaKind meta = MetaKind::None;  // which metadata a hidden column holds
};

// The columns of `schema`, in order.
inline std::vector<PlannedColumn> plannedColumns(const Schema& schema) {
  std::vector<PlannedColumn> out;
  out.reserve(schema.columns.size());
  for (const Column& c : schema.columns) {
    out.push_back(PlannedColumn{c.name, c.type, c.hidden ? metaKindOf(c) : MetaKind::None});
  }
  return out;
}

// The plan of one writer's schema: `fields` has the codec's `Field` of each
// column, in the columns' order.
template <class WriterSchema, class Field>
struct ColumnPlan {
  std::shared_ptr<const WriterSchema> schema;
  std::vector<Field> fields;
  std::string idText;      // " (id N)" for a registry's schema, for messages
  std::string unreadable;  // why this writer's records give no row, or empty
};

// Why column `c` cannot take the values of the writer's field that `field`
// names ("field 'x' of the writer's schema (id 3)"), which read as `writer`
// (writerTypeFills() said no).
inline std::string unfillableColumn(const PlannedColumn& c, const std::string& field,
                                    const DataType& writer) {
  return fmt::format("column \"{}\" is {}, but {} reads as {}", c.name, c.type->toString(), field,
                     writer.toString());
}

// How many writers' plans (and protobuf's files) a decoder keeps: a hostile
// stream may name any schema id.
inline constexpr size_t kMaxWriterPlans = 64;

// The plans of the writers a decoder met, by key (a schema id; with
// protobuf, the message indexes too). Once kMaxWriterPlans are kept they are
// forgotten all at once, to be planned again as records name them.
template <class Key, class Plan>
class PlanCache {
 public:
  const Plan* find(const Key& key) const {
    auto it = plans_.find(key);
    return it == plans_.end() ? nullptr : it->second.get();
  }
  const Plan* add(Key key, std::unique_ptr<Plan> plan) {
    if (plans_.size() >= kMaxWriterPlans) plans_.clear();
    return plans_.emplace(std::move(key), std::move(plan)).first->second.get();
  }

 private:
  std::unordered_map<Key, std::unique_ptr<Plan>> plans_;
};

}  // namespace rtsql::format
