// One Avro binary datum of a schema, read into a Value and written from one:
// what from_avro and to_avro (format_functions.cpp) do with each value. The
// datum is checked and read, and written, by the same code (avro_codec.cpp)
// and the same libavro as the avro source's records and the sink's, so a
// value means the same in a column of an avro source and under from_avro.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/value.h"
#include "connectors/format/avro_schema.h"

namespace rtsql::format {

// Not for two threads at once: libavro's value is reused for every datum.
class AvroDatumCodec {
 public:
  // Throws SqlError 22023 when libavro cannot read the schema (AvroSchema
  // read it already, so a schema it takes libavro takes).
  explicit AvroDatumCodec(std::shared_ptr<const AvroSchema> schema);
  ~AvroDatumCodec();
  AvroDatumCodec(const AvroDatumCodec&) = delete;
  AvroDatumCodec& operator=(const AvroDatumCodec&) = delete;

  // The datum `bytes` begin with as a value of `type`, the schema's root's
  // SQL type (AvroSchema::sqlType); bytes after it are left unread, as
  // Spark's from_avro leaves them. False with `error` set (a short reason)
  // when the bytes do not begin with a datum of the schema.
  bool read(std::string_view bytes, const DataType& type, Value& out, std::string& error);
  // `v`, a value of `type`, as a datum of the schema into `out`. False with
  // `error` set when the schema cannot hold it: a NULL where the schema has
  // no null, a text that is none of an enum's symbols, bytes of another size
  // than a fixed's.
  bool write(const Value& v, const DataType& type, std::string& out, std::string& error);

 private:
  struct Impl;
  std::shared_ptr<const AvroSchema> schema_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rtsql::format
