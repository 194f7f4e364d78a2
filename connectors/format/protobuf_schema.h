// Protobuf message types as rtsql sees them: the message named by
// 'protobuf.message' in the FileDescriptorSet file named by
// 'protobuf.descriptor' (what `protoc --include_imports --descriptor_set_out`
// writes), or a message of .proto text (a schema registry's, or a sink's
// generated one: proto_text.h), the SQL columns it gives, and a plan per
// message type that the protobuf decoder and encoder walk
// (protobuf_codec.cpp). libprotobuf reads and checks the descriptors; the
// wire format itself is rtsql's.
//
// Types, protobuf to SQL: bool BOOLEAN; int32, sint32, sfixed32 INT; uint32,
// fixed32 BIGINT (their values reach 2^32 - 1); int64, sint64, sfixed64,
// uint64, fixed64 BIGINT (an unsigned value above BIGINT's range is a decode
// error); float, double DOUBLE; string STRING; bytes BINARY; enum STRING (the
// value's name); google.protobuf.Timestamp TIMESTAMP; any other message
// STRUCT; repeated ARRAY. A field with presence (a message, proto3 `optional`,
// a oneof member, any proto2 singular field) that is unset is NULL; a proto3
// scalar without presence that is unset is its default (0, "", false, the
// enum's first value). map fields, groups and recursive messages are refused
// (0A000).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/options.h"
#include "common/schema.h"
#include "common/value.h"
#include "connectors/format/proto_text.h"

namespace google::protobuf {
class DescriptorPool;
class Descriptor;
class EnumDescriptor;
}  // namespace google::protobuf

namespace rtsql::format {

struct ProtoMessagePlan;

// One field of a message, with what decoding and encoding need.
struct ProtoFieldPlan {
  // Protobuf's field types (descriptor.proto's FieldDescriptorProto.Type).
  enum class Kind {
    Double,
    Float,
    Int64,
    Uint64,
    Int32,
    Fixed64,
    Fixed32,
    Bool,
    String,
    Message,
    Bytes,
    Uint32,
    Enum,
    Sfixed32,
    Sfixed64,
    Sint32,
    Sint64,
    Timestamp  // a google.protobuf.Timestamp message
  };
  std::string name;
  int number = 0;
  Kind kind = Kind::Int32;
  bool repeated = false;
  bool presence = false;                      // unset is NULL (else the default below)
  int oneof = -1;                             // index of its real oneof in the message, or -1
  const ProtoMessagePlan* message = nullptr;  // Message's type
  const google::protobuf::EnumDescriptor* enumType = nullptr;  // Enum's type
  DataTypePtr type;    // the SQL type (ARRAY of the item's when repeated)
  Value defaultValue;  // an unset field without presence
};

struct ProtoMessagePlan {
  std::string name;                    // full name
  std::vector<ProtoFieldPlan> fields;  // in declaration order
  // Field number to index in `fields` (-1: unknown) for numbers below its
  // size; larger numbers are looked up by a search of `fields`.
  std::vector<int> byNumber;
  bool hasRepeated = false;
  int oneofs = 0;

  const ProtoFieldPlan* find(int number) const;
  int indexOf(std::string_view name) const;  // case-insensitive, -1 when none
};

// A parsed descriptor set and the plans of the messages reachable from the
// chosen one, which owns them.
class ProtobufSchema {
 public:
  // The schema of `message` in the descriptor set `set` (its bytes). Throws
  // SqlError 22023 at `setPos` when `set` is not a valid FileDescriptorSet,
  // 42704 at `messagePos` when it holds no message of that name, 0A000 at
  // `messagePos` for a field rtsql cannot map (map, group, recursion).
  static std::shared_ptr<const ProtobufSchema> parse(std::string_view set,
                                                     const std::string& message, size_t setPos,
                                                     size_t messagePos);

  // The schema the options name ('protobuf.descriptor', 'protobuf.message').
  // `atCreate`: CREATE SOURCE / SINK reads the file and keeps its bytes for
  // the tasks of this server; a task uses the bytes CREATE read, or reads the
  // file when no CREATE of this server did. A missing or unreadable file is
  // 58030 naming the path; relative paths are relative to the server's
  // working directory, as for file tables.
  static std::shared_ptr<const ProtobufSchema> fromOptions(const Options& options, size_t stmtPos,
                                                           bool atCreate);

  // The schema of `message`, a message of `pool`. Throws 0A000 at `pos` for a
  // field rtsql cannot map, as parse() does.
  static std::shared_ptr<const ProtobufSchema> ofMessage(
      std::shared_ptr<const google::protobuf::DescriptorPool> pool,
      const google::protobuf::Descriptor& message, size_t pos);

  // The schema of `message` (a full name; empty: the file's first message)
  // in the .proto `text` called `name` with its `imports` (buildProtoFiles).
  // Throws 22023 at `textPos` when the text does not build, naming `what`
  // (e.g. "the latest schema of subject \"t-value\""), 42704 at `messagePos`
  // when it has no such message, 0A000 as ofMessage.
  static std::shared_ptr<const ProtobufSchema> fromProtoText(
      std::string_view text, const std::string& name, const std::vector<ProtoImport>& imports,
      const std::string& message, const std::string& what, size_t textPos, size_t messagePos);

  ~ProtobufSchema();
  const ProtoMessagePlan& root() const { return *root_; }

 private:
  ProtobufSchema();
  std::shared_ptr<const google::protobuf::DescriptorPool> pool_;
  std::vector<std::unique_ptr<ProtoMessagePlan>> plans_;
  const ProtoMessagePlan* root_ = nullptr;
  friend class ProtoPlanBuilder;
};

// The bytes of the descriptor set file `relative` beneath the directory
// `dir` (from_protobuf's descriptor path, beneath the server's data
// directory), opened as openBeneath() opens (no '..', no absolute path, no
// symbolic link: 22023 at `pos`), at most 64 MiB (54000); 58030 when it
// cannot be read.
std::string readDescriptorBeneath(const std::string& dir, const std::string& relative,
                                  size_t pos);

// The columns of a source reading `schema`'s message: one per field, in
// order. With `declared` columns (non-empty), each must name a field (42703)
// and have its SQL type (42804), at the column; the source reads only those.
Schema protobufSourceColumns(const ProtobufSchema& schema, const Schema& declared,
                             const std::vector<size_t>& declaredPos, size_t messagePos);

// Checks that a sink writing `columns` (hidden ones left out) as `schema`'s
// message can: each column names a field (42703) of a type the column's
// values fit (42804) (see docs/connectors.md, "protobuf"), at the column's
// entry of `positions` (parallel to `columns`; npos when none).
void checkProtobufSinkColumns(const ProtobufSchema& schema, const Schema& columns,
                              const std::vector<size_t>& positions = {});

}  // namespace rtsql::format
