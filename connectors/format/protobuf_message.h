// One protobuf message's bytes read into a STRUCT of its fields, and a STRUCT
// written as one: what from_protobuf and to_protobuf (format_functions.cpp)
// do with each value. The bytes are read and written by the code of the
// protobuf source and sink (protobuf_codec.cpp), so a message means the same
// under from_protobuf as in a protobuf source's columns.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/value.h"
#include "connectors/format/protobuf_schema.h"

namespace rtsql::format {

// Keeps no state between reads: one reader serves any number of threads.
class ProtobufMessageReader {
 public:
  explicit ProtobufMessageReader(std::shared_ptr<const ProtobufSchema> schema);
  // The STRUCT of the message's fields, in order, typed as a protobuf
  // source's columns are.
  const DataTypePtr& type() const { return type_; }
  // The message in `bytes` as a value of type(); false with `error` set (a
  // short reason) when the bytes are not one.
  bool read(std::string_view bytes, Value& out, std::string& error) const;

 private:
  std::shared_ptr<const ProtobufSchema> schema_;
  DataTypePtr type_;
};

// Likewise stateless once made.
class ProtobufMessageWriter {
 public:
  // Writes values of `type`, a STRUCT each of whose fields names a field of
  // the message and has a type that field takes, as a protobuf sink's
  // columns must (42703 / 42804 at `pos` otherwise).
  ProtobufMessageWriter(std::shared_ptr<const ProtobufSchema> schema, const DataType& type,
                        size_t pos);
  ~ProtobufMessageWriter();
  ProtobufMessageWriter(const ProtobufMessageWriter&) = delete;
  ProtobufMessageWriter& operator=(const ProtobufMessageWriter&) = delete;
  // `v` as the message's bytes, its fields in field-number order; a NULL
  // field is not set. Throws SqlError 22023 for what the message has no form
  // for (a NULL item of a repeated field).
  void write(const Value& v, std::string& out) const;

 private:
  struct Plan;
  std::shared_ptr<const ProtobufSchema> schema_;
  std::unique_ptr<Plan> plan_;
};

}  // namespace rtsql::format
