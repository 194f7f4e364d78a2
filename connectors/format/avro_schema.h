// Avro schemas as rtsql sees them: the record schema of a source's
// 'avro.schema' read into a tree that keeps what Debian's libavro (avro-c)
// drops (logical types), the SQL columns it gives, and the schema a sink
// writes for its columns. The binary encoding itself is libavro's
// (avro_decoder.cpp, avro_encoder.cpp).
//
// Types, Avro to SQL: boolean BOOLEAN; int INT (logical date: TIMESTAMP at
// midnight UTC); long BIGINT (timestamp-millis, timestamp-micros and their
// local- forms: TIMESTAMP); float FLOAT (a flow recorded before reads it as
// DOUBLE, planner/format_floats.h); double DOUBLE; string, enum STRING; bytes,
// fixed BINARY; array ARRAY; record STRUCT; a union of null and one type that
// type, nullable. map, decimal and other unions are refused (0A000).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/schema.h"

namespace rtsql::format {

struct AvroNode {
  enum class Kind {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Record,
    Enum,
    Array,
    Map,
    Union,
    Fixed
  };
  Kind kind = Kind::Null;
  std::string logical;  // the logicalType attribute, or empty
  std::string name;     // a record's, enum's or fixed's full name
  std::vector<std::pair<std::string, const AvroNode*>> fields;  // a record's, in order
  std::vector<std::string> symbols;                             // an enum's
  size_t size = 0;                                              // a fixed's bytes
  const AvroNode* items = nullptr;                              // an array's or map's values
  std::vector<const AvroNode*> branches;                        // a union's
};

// A parsed schema: the tree (nodes owned here; named types shared by their
// references) and its JSON text, which libavro parses again for each codec.
class AvroSchema {
 public:
  // Parses `json`; throws SqlError 22023 at `pos` with the reason when it is not
  // a valid Avro schema (libavro's check and this one's), 0A000 when it uses a
  // type rtsql cannot map. A source's schema must be a record.
  static std::shared_ptr<const AvroSchema> parse(std::string_view json, size_t pos);

  const AvroNode& root() const { return *root_; }
  const std::string& json() const { return json_; }

  // The SQL type of `node` (see the table above); a nullable union gives its
  // other branch's type. Throws 0A000 at `pos` for what has none.
  // A recursive type (a record reaching itself) has none either.
  static DataTypePtr sqlType(const AvroNode& node, size_t pos, const std::string& path,
                             int depth = 0);
  // The branch of a union of null and one type that is not null, else `node`.
  static const AvroNode& nonNull(const AvroNode& node);

 private:
  std::vector<std::unique_ptr<AvroNode>> nodes_;
  const AvroNode* root_ = nullptr;
  std::string json_;
  friend class AvroSchemaParser;
};

// The columns of a source whose 'avro.schema' is `schema`: one per field of its
// record, in order. With `declared` columns (non-empty), each must name a field
// of the record and have that field's SQL type (42703 / 42804 at the column);
// the source then reads only those.
Schema avroSourceColumns(const AvroSchema& schema, const Schema& declared,
                         const std::vector<size_t>& declaredPos, size_t schemaPos);

// Makes libavro allocate through a bounded allocator (once per process,
// before its first use): a datum's lengths and counts are the writer's, and
// libavro allocates a string's claimed length before reading it. No single
// allocation may exceed 256 MiB (four times the largest value rtsql keeps),
// so a hostile length is a decode error, not a giant allocation.
void useBoundedAvroAllocator();

// The Avro schema (JSON) a sink writes for `columns` (hidden ones left out): a
// record `name` with one field per column, each a union of null and the
// column's type with default null; TIMESTAMP is long timestamp-micros, INTERVAL
// long (microseconds), STRUCT a record named after its path. Throws 22023 when
// a column's name is not a valid Avro name.
std::string avroSinkSchema(const Schema& columns, const std::string& name);

// The Avro schema (JSON) to_avro writes a value of `type` with when it is
// given none, Spark's for a nullable value: a union of the type and null (in
// that order) at the top and at every field, item and map value. Throws 22023
// when a struct field's name is not a valid Avro name.
std::string avroValueSchema(const DataType& type);

}  // namespace rtsql::format
