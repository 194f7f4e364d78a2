// The columns of a Kinesis source (see columns.h).
#include "connectors/kinesis/columns.h"

#include <fmt/format.h>

#include "common/error.h"

namespace rtsql::kinesis {

namespace {

struct MetaDef {
  const char* raw;
  const char* hidden;
  TypeId type;
  MetaColumn kind;
};

constexpr MetaDef kMeta[] = {
    {"data", nullptr, TypeId::Binary, MetaColumn::Data},
    {"streamName", "_streamName", TypeId::String, MetaColumn::StreamName},
    {"partitionKey", "_partitionKey", TypeId::String, MetaColumn::PartitionKey},
    {"sequenceNumber", "_sequenceNumber", TypeId::String, MetaColumn::SequenceNumber},
    {"approximateArrivalTimestamp", "_approximateArrivalTimestamp", TypeId::Timestamp,
     MetaColumn::ArrivalTimestamp},
    {"shardId", "_shardId", TypeId::String, MetaColumn::ShardId},
};

}  // namespace

MetaColumn metaColumnOf(const Column& column, bool raw) {
  for (const MetaDef& m : kMeta) {
    if (raw && column.name == m.raw) return m.kind;
    if (!raw && column.hidden && m.hidden && column.name == m.hidden) return m.kind;
  }
  return MetaColumn::None;
}

Schema bindKinesisSchema(const ast::CreateSource& stmt, const std::string& format, Schema payload) {
  Schema schema;
  if (format == "raw") {
    if (!stmt.columns.empty()) {
      throw SqlError(sqlstate::kInvalidParameterValue, "format 'raw' has a fixed schema",
                     stmt.columns[0].pos,
                     "drop the column list: the columns are data, streamName, partitionKey, "
                     "sequenceNumber, approximateArrivalTimestamp, shardId");
    }
    for (const MetaDef& m : kMeta)
      schema.columns.push_back(Column{m.raw, DataType::of(m.type), false});
    return schema;
  }
  schema = std::move(payload);
  for (const MetaDef& m : kMeta) {
    if (!m.hidden) continue;
    int clash = schema.find(m.hidden);
    if (clash >= 0) {
      throw SqlError(
          sqlstate::kDuplicateColumn,
          fmt::format("column \"{}\" clashes with the hidden Kinesis metadata column", m.hidden),
          static_cast<size_t>(clash) < stmt.columns.size()
              ? stmt.columns[static_cast<size_t>(clash)].pos
              : stmt.namePos,
          "rename the column: _streamName, _partitionKey, _sequenceNumber, "
          "_approximateArrivalTimestamp and _shardId are reserved");
    }
    schema.columns.push_back(Column{m.hidden, DataType::of(m.type), true});
  }
  return schema;
}

}  // namespace rtsql::kinesis
