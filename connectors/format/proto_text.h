// Protobuf schemas as .proto text, the form a schema registry stores them in
// (schemaType PROTOBUF), both ways: read by libprotoc's parser into a
// DescriptorPool, with the files the text imports (the registry's
// references, and the well-known types libprotobuf carries), and written for
// the message a sink generates from its columns.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/options.h"
#include "common/schema.h"

namespace google::protobuf {
class DescriptorPool;
class Descriptor;
class FileDescriptor;
}  // namespace google::protobuf

namespace rtsql::format {

// A .proto file another one imports: its import path and its text.
struct ProtoImport {
  std::string name;
  std::string text;
};

// Files built from .proto text: the pool that owns them and the file of the
// text itself.
struct ProtoFiles {
  std::shared_ptr<const google::protobuf::DescriptorPool> pool;
  const google::protobuf::FileDescriptor* file = nullptr;
};

// Builds `text` as a file called `name`, and before it every file it
// imports: the well-known types of libprotobuf (google/protobuf/*.proto)
// from libprotobuf's own descriptors, any other from `imports` by its path.
// False with `error` set (the file, line and column at fault) when a text
// does not parse, a file does not build (an undefined type, a duplicate
// field number), an import is in neither place, or imports form a cycle.
// Never throws for what the texts hold.
bool buildProtoFiles(std::string_view text, const std::string& name,
                     const std::vector<ProtoImport>& imports, ProtoFiles& out, std::string& error);

// The message that Confluent's message indexes `path` name in `file`: its
// top-level message path[0], then that one's nested message path[1], ...;
// nullptr when there is none.
const google::protobuf::Descriptor* messageAtIndexes(const google::protobuf::FileDescriptor& file,
                                                     const std::vector<int32_t>& path);

// The .proto text (proto3) of the message a protobuf sink with a schema
// registry writes: message `fullName` ("pkg.Name" declares package pkg) with
// one field per visible column of `columns`, numbered from 1 in column order.
// BOOLEAN is bool, INT int32, BIGINT and INTERVAL (microseconds) int64,
// DOUBLE double, STRING (and a NULL-typed column) string, BINARY bytes,
// TIMESTAMP google.protobuf.Timestamp, ARRAY a repeated field of its items,
// STRUCT a message declared inside its parent and named
// `<field>_<n>` (n counting the sink's nested messages from 1). Scalars are
// proto3 `optional`, so that NULL (unset) and a zero stay apart. Throws
// SqlError at the column's entry of `positions` (parallel to `columns`):
// 22023 for a column or struct field that is not a protobuf name, 0A000 for
// an ARRAY of ARRAYs.
std::string protobufSinkProto(const Schema& columns, const std::string& fullName,
                              const std::vector<size_t>& positions = {});

// The full name of the message a protobuf sink with a schema registry
// writes: 'protobuf.message' when set ("pkg.Name", 22023 at its value unless
// each part is a protobuf identifier), else the sink's name, or "row" when
// that is not an identifier.
std::string protobufSinkMessageName(const Options& options, const std::string& sinkName);

// Whether `name` is a protobuf identifier: letters, digits and _, not
// starting with a digit.
bool isProtoIdentifier(std::string_view name);

}  // namespace rtsql::format
