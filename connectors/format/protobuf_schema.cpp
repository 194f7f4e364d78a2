// ProtobufSchema (see protobuf_schema.h): the descriptor set read by
// libprotobuf, the plans the codec walks, the SQL columns of a message and the
// checks of a sink's columns against one.
#include "connectors/format/protobuf_schema.h"

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/descriptor_database.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "common/error.h"
#include "common/file_beneath.h"
#include "connectors/format/decode_util.h"
#include "connectors/format/float_widening.h"

namespace rtsql::format {

namespace gp = google::protobuf;
using ProtoKind = ProtoFieldPlan::Kind;

namespace {

constexpr const char* kSetHint =
    "give the file protoc writes with --include_imports --descriptor_set_out=FILE x.proto";

[[noreturn]] void notASet(size_t pos, const std::string& why) {
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("'protobuf.descriptor' is not a valid FileDescriptorSet: {}", why),
                 pos, kSetHint);
}

class CollectErrors : public gp::DescriptorPool::ErrorCollector {
 public:
  void AddError(const std::string& filename, const std::string& element, const gp::Message*,
                ErrorLocation, const std::string& message) override {
    if (first.empty()) first = fmt::format("{}: {}: {}", filename, element, message);
  }
  std::string first;
};

ProtoKind kindOf(const gp::FieldDescriptor& f) {
  switch (f.type()) {
    case gp::FieldDescriptor::TYPE_DOUBLE:
      return ProtoKind::Double;
    case gp::FieldDescriptor::TYPE_FLOAT:
      return ProtoKind::Float;
    case gp::FieldDescriptor::TYPE_INT64:
      return ProtoKind::Int64;
    case gp::FieldDescriptor::TYPE_UINT64:
      return ProtoKind::Uint64;
    case gp::FieldDescriptor::TYPE_INT32:
      return ProtoKind::Int32;
    case gp::FieldDescriptor::TYPE_FIXED64:
      return ProtoKind::Fixed64;
    case gp::FieldDescriptor::TYPE_FIXED32:
      return ProtoKind::Fixed32;
    case gp::FieldDescriptor::TYPE_BOOL:
      return ProtoKind::Bool;
    case gp::FieldDescriptor::TYPE_STRING:
      return ProtoKind::String;
    case gp::FieldDescriptor::TYPE_GROUP:
      return ProtoKind::Message;
    case gp::FieldDescriptor::TYPE_MESSAGE:
      return f.message_type()->full_name() == "google.protobuf.Timestamp" ? ProtoKind::Timestamp
                                                                          : ProtoKind::Message;
    case gp::FieldDescriptor::TYPE_BYTES:
      return ProtoKind::Bytes;
    case gp::FieldDescriptor::TYPE_UINT32:
      return ProtoKind::Uint32;
    case gp::FieldDescriptor::TYPE_ENUM:
      return ProtoKind::Enum;
    case gp::FieldDescriptor::TYPE_SFIXED32:
      return ProtoKind::Sfixed32;
    case gp::FieldDescriptor::TYPE_SFIXED64:
      return ProtoKind::Sfixed64;
    case gp::FieldDescriptor::TYPE_SINT32:
      return ProtoKind::Sint32;
    case gp::FieldDescriptor::TYPE_SINT64:
      return ProtoKind::Sint64;
  }
  return ProtoKind::Bytes;
}

TypeId scalarType(ProtoKind k) {
  switch (k) {
    case ProtoKind::Bool:
      return TypeId::Boolean;
    case ProtoKind::Int32:
    case ProtoKind::Sint32:
    case ProtoKind::Sfixed32:
      return TypeId::Int;
    case ProtoKind::Double:
      return TypeId::Double;
    case ProtoKind::Float:
      return TypeId::Float;
    case ProtoKind::String:
    case ProtoKind::Enum:
      return TypeId::String;
    case ProtoKind::Bytes:
      return TypeId::Binary;
    case ProtoKind::Timestamp:
      return TypeId::Timestamp;
    default:
      return TypeId::BigInt;
  }
}

// The value of an unset field without presence: what protobuf's getter gives.
Value defaultOf(const gp::FieldDescriptor& f, ProtoKind k) {
  switch (k) {
    case ProtoKind::Bool:
      return Value::boolean(f.default_value_bool());
    case ProtoKind::Int32:
    case ProtoKind::Sint32:
    case ProtoKind::Sfixed32:
      return Value::integer(f.default_value_int32());
    case ProtoKind::Int64:
    case ProtoKind::Sint64:
    case ProtoKind::Sfixed64:
      return Value::bigint(f.default_value_int64());
    case ProtoKind::Uint32:
    case ProtoKind::Fixed32:
      return Value::bigint(f.default_value_uint32());
    case ProtoKind::Uint64:
    case ProtoKind::Fixed64:
      return Value::bigint(
          static_cast<int64_t>(std::min<uint64_t>(f.default_value_uint64(), INT64_MAX)));
    case ProtoKind::Double:
      return Value::float64(f.default_value_double());
    case ProtoKind::Float:
      return Value::float32(f.default_value_float());
    case ProtoKind::String:
      return Value::string(f.default_value_string());
    case ProtoKind::Bytes:
      return Value::binary(f.default_value_string());
    case ProtoKind::Enum:
      return f.default_value_enum() ? Value::string(f.default_value_enum()->name()) : Value();
    default:
      return Value();
  }
}

// The byte cache of descriptor files: what CREATE read, per path.
std::mutex& cacheMu() {
  static std::mutex mu;
  return mu;
}
std::map<std::string, std::shared_ptr<const std::string>>& cache() {
  static std::map<std::string, std::shared_ptr<const std::string>> files;
  return files;
}

// A descriptor set is a few kilobytes; anything near this is not one.
constexpr uintmax_t kMaxDescriptorBytes = 64u << 20;

std::shared_ptr<const std::string> readDescriptorFile(const std::string& path, size_t pos) {
  // Only a regular file of bounded size is read: a device (/dev/zero) or a
  // FIFO would be read without end, holding the statement and growing memory.
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status)) {
    if (!std::filesystem::is_regular_file(status)) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("protobuf descriptor file \"{}\" is not a regular file", path),
                     pos, kSetHint);
    }
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxDescriptorBytes) {
      throw SqlError(sqlstate::kProgramLimitExceeded,
                     fmt::format("protobuf descriptor file \"{}\" is {} bytes, over the {} MiB "
                                 "a descriptor set may have",
                                 path, size, kMaxDescriptorBytes >> 20),
                     pos, kSetHint);
    }
  }
  // Beneath --files-dir (common/file_beneath.h), as every file a statement names.
  std::string bytes;
  std::string why;
  if (!readServerFile(path, kMaxDescriptorBytes, bytes, why)) {
    throw SqlError(sqlstate::kIoError,
                   fmt::format("could not read protobuf descriptor file \"{}\": {}", path, why),
                   pos);
  }
  return std::make_shared<const std::string>(std::move(bytes));
}

}  // namespace

std::string readDescriptorBeneath(const std::string& dir, const std::string& relative,
                                  size_t pos) {
  static const char* kHint =
      "name the descriptor set by its path inside the server's data directory (no '..', no "
      "symbolic link), or give its bytes as a BINARY literal X'...'";
  const int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd < 0) {
    throw SqlError(sqlstate::kIoError,
                   fmt::format("could not open the server's data directory: {}",
                               std::strerror(errno)),
                   pos);
  }
  const int fd = openBeneath(dirFd, relative, O_RDONLY);
  const int openErrno = errno;
  ::close(dirFd);
  if (fd < 0) {
    const bool outside = openErrno == EXDEV || openErrno == ELOOP;
    throw SqlError(outside ? sqlstate::kInvalidParameterValue : sqlstate::kIoError,
                   fmt::format("could not read protobuf descriptor file \"{}\" in the data "
                               "directory: {}",
                               relative,
                               outside ? "it is not beneath the data directory"
                                       : std::strerror(openErrno)),
                   pos, kHint);
  }
  std::string bytes;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (ok && static_cast<uintmax_t>(st.st_size) > kMaxDescriptorBytes) {
    ::close(fd);
    throw SqlError(sqlstate::kProgramLimitExceeded,
                   fmt::format("protobuf descriptor file \"{}\" is {} bytes, over the {} MiB "
                               "a descriptor set may have",
                               relative, static_cast<uintmax_t>(st.st_size),
                               kMaxDescriptorBytes >> 20),
                   pos, kSetHint);
  }
  char buf[65536];
  while (ok) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    bytes.append(buf, static_cast<size_t>(n));
    ok = bytes.size() <= kMaxDescriptorBytes;
  }
  ::close(fd);
  if (!ok) {
    throw SqlError(sqlstate::kIoError,
                   fmt::format("could not read protobuf descriptor file \"{}\": not a regular "
                               "file of at most {} MiB",
                               relative, kMaxDescriptorBytes >> 20),
                   pos, kHint);
  }
  return bytes;
}

const ProtoFieldPlan* ProtoMessagePlan::find(int number) const {
  if (number >= 0 && static_cast<size_t>(number) < byNumber.size()) {
    const int i = byNumber[static_cast<size_t>(number)];
    return i < 0 ? nullptr : &fields[static_cast<size_t>(i)];
  }
  for (const auto& f : fields)
    if (f.number == number) return &f;
  return nullptr;
}

int ProtoMessagePlan::indexOf(std::string_view fieldName) const {
  for (size_t i = 0; i < fields.size(); ++i)
    if (iequals(fields[i].name, fieldName)) return static_cast<int>(i);
  return -1;
}

// Makes the plans of a message and every message it reaches, once each. A
// message on the path being built that is reached again is recursive, which
// no SQL type can hold.
class ProtoPlanBuilder {
 public:
  ProtoPlanBuilder(ProtobufSchema& out, size_t pos) : out_(out), pos_(pos) {}

  const ProtoMessagePlan* build(const gp::Descriptor& d, const std::string& path) {
    auto done = built_.find(&d);
    if (done != built_.end()) return done->second;
    if (std::find(building_.begin(), building_.end(), &d) != building_.end()) {
      refuse(path, fmt::format("message {} holds itself (a recursive message)", d.full_name()),
             "rtsql's types are finite: read a message whose fields do not reach it again");
    }
    building_.push_back(&d);
    out_.plans_.push_back(std::make_unique<ProtoMessagePlan>());
    ProtoMessagePlan& plan = *out_.plans_.back();
    plan.name = d.full_name();
    plan.oneofs = d.real_oneof_decl_count();
    int maxSmall = 0;
    for (int i = 0; i < d.field_count(); ++i) {
      const gp::FieldDescriptor& f = *d.field(i);
      const std::string fpath = path.empty() ? f.name() : path + "." + f.name();
      if (f.is_map()) {
        refuse(fpath, "a map field", "rtsql has no MAP type yet");
      }
      if (f.type() == gp::FieldDescriptor::TYPE_GROUP) {
        refuse(fpath, "a group (proto2)", "declare the group's fields as a nested message");
      }
      ProtoFieldPlan p;
      p.name = f.name();
      p.number = f.number();
      p.kind = kindOf(f);
      p.repeated = f.is_repeated();
      p.presence = !p.repeated && f.has_presence();
      p.oneof = f.real_containing_oneof() ? f.real_containing_oneof()->index() : -1;
      DataTypePtr item;
      if (p.kind == ProtoKind::Message) {
        p.message = build(*f.message_type(), fpath);
        std::vector<StructField> fields;
        for (const auto& sub : p.message->fields) fields.push_back({sub.name, sub.type});
        item = DataType::structOf(std::move(fields));
      } else {
        if (p.kind == ProtoKind::Enum) p.enumType = f.enum_type();
        item = DataType::of(scalarType(p.kind));
      }
      p.type = p.repeated ? DataType::arrayOf(item) : item;
      if (p.repeated) {
        p.defaultValue = Value::array({});
        plan.hasRepeated = true;
      } else if (!p.presence) {
        p.defaultValue = defaultOf(f, p.kind);
      }
      if (p.number < 1024) maxSmall = std::max(maxSmall, p.number);
      plan.fields.push_back(std::move(p));
    }
    plan.byNumber.assign(static_cast<size_t>(maxSmall) + 1, -1);
    for (size_t i = 0; i < plan.fields.size(); ++i) {
      if (plan.fields[i].number <= maxSmall)
        plan.byNumber[static_cast<size_t>(plan.fields[i].number)] = static_cast<int>(i);
    }
    building_.pop_back();
    built_[&d] = &plan;
    return &plan;
  }

 private:
  [[noreturn]] void refuse(const std::string& path, const std::string& what, const char* hint) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("protobuf field {}: {} has no SQL type in rtsql", path, what), pos_,
                   hint);
  }

  ProtobufSchema& out_;
  size_t pos_;
  std::map<const gp::Descriptor*, const ProtoMessagePlan*> built_;
  std::vector<const gp::Descriptor*> building_;
};

ProtobufSchema::ProtobufSchema() = default;
ProtobufSchema::~ProtobufSchema() = default;

std::shared_ptr<const ProtobufSchema> ProtobufSchema::parse(std::string_view set,
                                                            const std::string& message,
                                                            size_t setPos, size_t messagePos) {
  gp::FileDescriptorSet files;
  if (set.size() > static_cast<size_t>(INT32_MAX) ||
      !files.ParseFromArray(set.data(), static_cast<int>(set.size()))) {
    notASet(setPos, "the file does not parse as one");
  }
  if (files.file_size() == 0) notASet(setPos, "it holds no files");
  auto pool = std::make_shared<gp::DescriptorPool>();
  // Files are built in the set's order; protoc writes a file's imports
  // before it, and a file whose import is missing is refused.
  CollectErrors errors;
  for (const gp::FileDescriptorProto& file : files.file()) {
    if (pool->FindFileByName(file.name())) continue;
    if (!pool->BuildFileCollectingErrors(file, &errors)) {
      notASet(setPos, errors.first.empty() ? fmt::format("file {} does not build", file.name())
                                           : errors.first);
    }
  }
  const gp::Descriptor* d = pool->FindMessageTypeByName(message);
  if (!d) {
    std::vector<std::string> names;
    for (const gp::FileDescriptorProto& file : files.file()) {
      for (const auto& m : file.message_type()) {
        if (names.size() < 8)
          names.push_back(file.package().empty() ? m.name() : file.package() + "." + m.name());
      }
    }
    throw SqlError(sqlstate::kUndefinedObject,
                   fmt::format("the descriptor set has no message \"{}\"", message), messagePos,
                   names.empty() ? std::string("give a message's full name, package included")
                                 : fmt::format("give a message's full name, package included: {}",
                                               fmt::join(names, ", ")));
  }
  return ofMessage(std::move(pool), *d, messagePos);
}

std::shared_ptr<const ProtobufSchema> ProtobufSchema::ofMessage(
    std::shared_ptr<const gp::DescriptorPool> pool, const gp::Descriptor& message, size_t pos) {
  std::shared_ptr<ProtobufSchema> schema(new ProtobufSchema());
  schema->pool_ = std::move(pool);
  ProtoPlanBuilder builder(*schema, pos);
  schema->root_ = builder.build(message, "");
  return schema;
}

std::shared_ptr<const ProtobufSchema> ProtobufSchema::fromProtoText(
    std::string_view text, const std::string& name, const std::vector<ProtoImport>& imports,
    const std::string& message, const std::string& what, size_t textPos, size_t messagePos) {
  ProtoFiles files;
  std::string why;
  if (!buildProtoFiles(text, name, imports, files, why)) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("{} is not a protobuf schema rtsql can read: {}", what, why),
                   textPos,
                   "register a .proto file that protoc compiles, with its imports as references");
  }
  const gp::Descriptor* d =
      message.empty()
          ? (files.file->message_type_count() > 0 ? files.file->message_type(0) : nullptr)
          : files.pool->FindMessageTypeByName(message);
  if (!d) {
    std::vector<std::string> names;
    for (int i = 0; i < files.file->message_type_count() && names.size() < 8; ++i)
      names.push_back(files.file->message_type(i)->full_name());
    throw SqlError(sqlstate::kUndefinedObject,
                   message.empty() ? fmt::format("{} declares no message", what)
                                   : fmt::format("{} has no message \"{}\"", what, message),
                   message.empty() ? textPos : messagePos,
                   names.empty() ? std::string("register a schema that declares the message")
                                 : fmt::format("give a message's full name, package included: {}",
                                               fmt::join(names, ", ")));
  }
  return ofMessage(files.pool, *d, messagePos);
}

std::shared_ptr<const ProtobufSchema> ProtobufSchema::fromOptions(const Options& options,
                                                                  size_t stmtPos, bool atCreate) {
  const OptionEntry& file = options.require("protobuf.descriptor", stmtPos);
  const OptionEntry& message = options.require("protobuf.message", stmtPos);
  const size_t filePos = file.valuePos != SqlError::npos ? file.valuePos : stmtPos;
  const size_t messagePos = message.valuePos != SqlError::npos ? message.valuePos : stmtPos;
  std::shared_ptr<const std::string> bytes;
  if (!atCreate) {
    std::lock_guard lock(cacheMu());
    auto it = cache().find(file.value);
    if (it != cache().end()) bytes = it->second;
  }
  if (!bytes) {
    bytes = readDescriptorFile(file.value, filePos);
    std::lock_guard lock(cacheMu());
    cache()[file.value] = bytes;
  }
  return parse(*bytes, message.value, filePos, messagePos);
}

Schema protobufSourceColumns(const ProtobufSchema& schema, const Schema& declared,
                             const std::vector<size_t>& declaredPos, size_t messagePos) {
  const ProtoMessagePlan& root = schema.root();
  Schema out;
  if (declared.columns.empty()) {
    for (const auto& f : root.fields) out.columns.push_back(Column{f.name, f.type, false});
    return out;
  }
  for (size_t i = 0; i < declared.columns.size(); ++i) {
    const Column& c = declared.columns[i];
    const size_t pos = i < declaredPos.size() ? declaredPos[i] : messagePos;
    const int f = root.indexOf(c.name);
    if (f < 0) {
      throw SqlError(
          sqlstate::kUndefinedColumn,
          fmt::format("column \"{}\" is not a field of protobuf message {}", c.name, root.name),
          pos, "declare only fields of the message, or no columns to read them all");
    }
    const DataType& t = *root.fields[static_cast<size_t>(f)].type;
    // A DOUBLE over a float is how sources were declared before floats read
    // as FLOAT: such a column goes on reading the float as a DOUBLE.
    if (!t.equals(*c.type) && !floatsWidened(t, *c.type)) {
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("column \"{}\" is declared {}, but its protobuf field reads as {}",
                                 c.name, c.type->toString(), t.toString()),
                     pos, "declare the column with the field's type, then CAST it in the flow");
    }
    out.columns.push_back(c);
  }
  return out;
}

namespace {

// Whether values of SQL type `t` can be written as field `f` (its item when
// `item`): the type a source reads the field as, or an INT into a field read
// as BIGINT, or a DOUBLE into a float; a STRUCT's fields must each name a
// field of the message.
bool fits(const DataType& t, const ProtoFieldPlan& f, bool item, std::string& why,
          const std::string& path) {
  if (f.repeated && !item) {
    if (t.id != TypeId::Array) {
      why = fmt::format("field {} is repeated: it takes an ARRAY", path);
      return false;
    }
    return fits(*t.element, f, true, why, path + "[]");
  }
  if (t.id == TypeId::Null) return true;
  if (f.kind == ProtoKind::Message) {
    if (t.id != TypeId::Struct) {
      why = fmt::format("field {} is message {}: it takes a STRUCT", path, f.message->name);
      return false;
    }
    for (const StructField& sf : t.fields) {
      const int i = f.message->indexOf(sf.name);
      if (i < 0) {
        why = fmt::format("message {} has no field \"{}\"", f.message->name, sf.name);
        return false;
      }
      if (!fits(*sf.type, f.message->fields[static_cast<size_t>(i)], false, why,
                path + "." + sf.name))
        return false;
    }
    return true;
  }
  const TypeId want = scalarType(f.kind);
  if (t.id == want) return true;
  if (t.id == TypeId::Int && want == TypeId::BigInt) return true;
  // TINYINT and SMALLINT into an int32 or int64, FLOAT into a float or a
  // double.
  if ((t.id == TypeId::TinyInt || t.id == TypeId::SmallInt) && (want == TypeId::Int || want == TypeId::BigInt))
    return true;
  if (t.id == TypeId::Float && want == TypeId::Double) return true;
  // A DOUBLE into a float (rounded), as before floats read as FLOAT.
  if (t.id == TypeId::Double && want == TypeId::Float) return true;
  // An INTERVAL is its microseconds, as avro sinks write it; a YEAR-MONTH
  // INTERVAL its months.
  if (t.id == TypeId::Interval && want == TypeId::BigInt) return true;
  if (t.id == TypeId::YearMonthInterval && (want == TypeId::Int || want == TypeId::BigInt)) return true;
  why =
      fmt::format("field {} takes {}, not {}", path, DataType::of(want)->toString(), t.toString());
  return false;
}

}  // namespace

void checkProtobufSinkColumns(const ProtobufSchema& schema, const Schema& columns,
                              const std::vector<size_t>& positions) {
  const ProtoMessagePlan& root = schema.root();
  for (size_t i = 0; i < columns.columns.size(); ++i) {
    const Column& c = columns.columns[i];
    const size_t pos = i < positions.size() ? positions[i] : SqlError::npos;
    if (c.hidden) continue;
    const int f = root.indexOf(c.name);
    if (f < 0) {
      throw SqlError(
          sqlstate::kUndefinedColumn,
          fmt::format("column \"{}\" is not a field of protobuf message {}", c.name, root.name),
          pos, "write only columns named after the message's fields (use AS)");
    }
    std::string why;
    if (!fits(*c.type, root.fields[static_cast<size_t>(f)], false, why, c.name)) {
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("column \"{}\" is {}, which protobuf message {} cannot hold: {}",
                                 c.name, c.type->toString(), root.name, why),
                     pos, "CAST the column to the field's type");
    }
  }
}

}  // namespace rtsql::format
