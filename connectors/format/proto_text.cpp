// .proto text both ways (see proto_text.h): libprotoc's Parser reads each
// file into a FileDescriptorProto, and a DescriptorPool of rtsql's own builds
// them, imports first; the text of a sink's message is written here.
#include "connectors/format/proto_text.h"

#include <fmt/format.h>
#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "common/error.h"
#include "connectors/format/schema_text.h"
#include "planner/planner.h"

namespace rtsql::format {

namespace gp = google::protobuf;

namespace {

// The parser's first error, as "file:line:column: message".
class TextErrors : public gp::io::ErrorCollector {
 public:
  explicit TextErrors(const std::string& file) : file_(file) {}
  void AddError(int line, gp::io::ColumnNumber column, const std::string& message) override {
    if (first.empty()) first = fmt::format("{}:{}:{}: {}", file_, line + 1, column + 1, message);
  }
  std::string first;

 private:
  const std::string& file_;
};

// The pool's first error, as "file: element: message".
class BuildErrors : public gp::DescriptorPool::ErrorCollector {
 public:
  void AddError(const std::string& filename, const std::string& element, const gp::Message*,
                ErrorLocation, const std::string& message) override {
    if (first.empty()) {
      first = element.empty() ? fmt::format("{}: {}", filename, message)
                              : fmt::format("{}: {}: {}", filename, element, message);
    }
  }
  std::string first;
};

bool parseText(std::string_view text, const std::string& name, gp::FileDescriptorProto& out,
               std::string& error) {
  // Bounded before libprotoc's parser, which recurses per nested message.
  if (std::string problem = schemaTextProblem(text, SchemaTextSyntax::Proto); !problem.empty()) {
    error = fmt::format("{}: {}", name, problem);
    return false;
  }
  gp::io::ArrayInputStream in(text.data(), static_cast<int>(text.size()));
  TextErrors errors(name);
  gp::io::Tokenizer tokenizer(&in, &errors);
  gp::compiler::Parser parser;
  parser.RecordErrorsTo(&errors);
  const bool ok = parser.Parse(&tokenizer, &out);
  if (!ok || !errors.first.empty()) {
    error = errors.first.empty() ? fmt::format("{}: does not parse as a .proto file", name)
                                 : errors.first;
    return false;
  }
  out.set_name(name);
  return true;
}

// A well-known type's file as libprotobuf itself carries it, or nullptr.
const gp::FileDescriptor* wellKnown(const std::string& path) {
  if (path.rfind("google/protobuf/", 0) != 0) return nullptr;
  return gp::DescriptorPool::generated_pool()->FindFileByName(path);
}

}  // namespace

bool buildProtoFiles(std::string_view text, const std::string& name,
                     const std::vector<ProtoImport>& imports, ProtoFiles& out, std::string& error) {
  auto pool = std::make_shared<gp::DescriptorPool>();
  std::map<std::string, std::string_view> byName;
  for (const ProtoImport& i : imports) byName.emplace(i.name, i.text);
  // The files being built, for an import cycle; each file is built once, so
  // the recursion is as deep as the imports are many.
  std::set<std::string> building;
  std::function<bool(const gp::FileDescriptorProto&)> build =
      [&](const gp::FileDescriptorProto& file) {
        building.insert(file.name());
        for (const std::string& dep : file.dependency()) {
          if (pool->FindFileByName(dep)) continue;
          if (building.count(dep)) {
            error = fmt::format("{}: imports \"{}\", which imports it again (an import cycle)",
                                file.name(), dep);
            return false;
          }
          gp::FileDescriptorProto imported;
          if (const gp::FileDescriptor* known = wellKnown(dep)) {
            known->CopyTo(&imported);
          } else if (auto it = byName.find(dep); it != byName.end()) {
            if (!parseText(it->second, dep, imported, error)) return false;
          } else {
            error = fmt::format(
                "{}: imports \"{}\", which is neither one of the schema's references nor a "
                "well-known type",
                file.name(), dep);
            return false;
          }
          if (!build(imported)) return false;
        }
        BuildErrors errors;
        if (!pool->BuildFileCollectingErrors(file, &errors)) {
          error =
              errors.first.empty() ? fmt::format("{}: does not build", file.name()) : errors.first;
          return false;
        }
        building.erase(file.name());
        return true;
      };
  gp::FileDescriptorProto root;
  if (!parseText(text, name, root, error) || !build(root)) return false;
  out.file = pool->FindFileByName(name);
  out.pool = std::move(pool);
  return out.file != nullptr;
}

const gp::Descriptor* messageAtIndexes(const gp::FileDescriptor& file,
                                       const std::vector<int32_t>& path) {
  if (path.empty() || path[0] < 0 || path[0] >= file.message_type_count()) return nullptr;
  const gp::Descriptor* d = file.message_type(path[0]);
  for (size_t i = 1; i < path.size(); ++i) {
    if (path[i] < 0 || path[i] >= d->nested_type_count()) return nullptr;
    d = d->nested_type(path[i]);
  }
  return d;
}

bool isProtoIdentifier(std::string_view name) {
  // The same rule as Avro's names.
  return isAvroName(name);
}

std::string protobufSinkMessageName(const Options& options, const std::string& sinkName) {
  const OptionEntry* e = options.find("protobuf.message");
  if (!e) return isProtoIdentifier(sinkName) ? sinkName : "row";
  size_t start = 0;
  for (;;) {
    const size_t dot = e->value.find('.', start);
    const std::string_view part =
        std::string_view(e->value).substr(start, dot == std::string::npos ? dot : dot - start);
    if (!isProtoIdentifier(part)) {
      throw SqlError(
          sqlstate::kInvalidParameterValue,
          fmt::format("'protobuf.message' \"{}\" is not a message's full name", e->value),
          e->valuePos,
          "a sink's message is named like shop.Order: a package (optional) and a "
          "name, of letters, digits and _ not starting with a digit");
    }
    if (dot == std::string::npos) return e->value;
    start = dot + 1;
  }
}

namespace {

// Writes the messages of a sink's columns.
class SinkProtoWriter {
 public:
  struct Field {
    std::string_view name;
    const DataType* type;
    std::string_view column;  // the column it is, or is inside of
    size_t pos;               // that column's position
    bool isColumn;            // a column itself, not a field of a STRUCT
  };

  bool usesTimestamp = false;

  void message(std::string& out, const std::string& name, const std::vector<Field>& fields,
               int indent) {
    const std::string pad(static_cast<size_t>(indent), ' ');
    out += fmt::format("{}message {} {{\n", pad, name);
    std::set<std::string_view> taken;
    for (const Field& f : fields) taken.insert(f.name);
    // Nested messages go after the fields, each named after its field.
    std::vector<std::pair<std::string, const Field*>> nested;
    for (size_t i = 0; i < fields.size(); ++i) {
      const Field& f = fields[i];
      if (!isProtoIdentifier(f.name)) {
        throw SqlError(
            sqlstate::kInvalidParameterValue,
            f.isColumn
                ? fmt::format("column \"{}\" is not a valid protobuf field name: a protobuf sink "
                              "writes each column as a field of its message",
                              f.name)
                : fmt::format("column \"{}\" has field \"{}\", which is not a valid protobuf "
                              "field name",
                              f.column, f.name),
            f.pos,
            "protobuf names are letters, digits and _ not starting with a digit: give the "
            "column an alias");
      }
      const bool repeated = f.type->id == TypeId::Array;
      const DataType& item = repeated ? *f.type->element : *f.type;
      std::string type;
      if (item.id == TypeId::Array) {
        throw SqlError(sqlstate::kFeatureNotSupported,
                       fmt::format("column \"{}\" holds {}: protobuf has no repeated field of "
                                   "repeated values",
                                   f.column, f.type->toString()),
                       f.pos,
                       "write the inner arrays as STRUCT fields, or the column as to_json(...)");
      }
      if (item.id == TypeId::Struct) {
        do {
          type = fmt::format("{}_{}", f.name, ++messages_);
        } while (taken.count(type));
        nested.emplace_back(type, &f);
      } else {
        type = scalarName(item);
      }
      // A message has presence already; a repeated field has none.
      const char* label = repeated                                                    ? "repeated "
                          : item.id == TypeId::Struct || item.id == TypeId::Timestamp ? ""
                                                                                      : "optional ";
      out += fmt::format("{}  {}{} {} = {};\n", pad, label, type, f.name, i + 1);
    }
    for (const auto& [nestedName, parent] : nested) {
      const DataType& t =
          parent->type->id == TypeId::Array ? *parent->type->element : *parent->type;
      std::vector<Field> sub;
      for (const StructField& sf : t.fields)
        sub.push_back({sf.name, sf.type.get(), parent->column, parent->pos, false});
      out += '\n';
      message(out, nestedName, sub, indent + 2);
    }
    out += fmt::format("{}}}\n", pad);
  }

 private:
  std::string scalarName(const DataType& t) {
    switch (t.id) {
      case TypeId::Boolean:
        return "bool";
      case TypeId::Int:
      case TypeId::TinyInt:
      case TypeId::SmallInt:
      case TypeId::YearMonthInterval:  // its months
        return "int32";
      case TypeId::Float:
        return "float";
      case TypeId::BigInt:
      case TypeId::Interval:
        return "int64";
      case TypeId::Double:
        return "double";
      case TypeId::Binary:
        return "bytes";
      case TypeId::Timestamp:
        usesTimestamp = true;
        return "google.protobuf.Timestamp";
      default:
        return "string";
    }
  }

  int messages_ = 0;
};

}  // namespace

std::string protobufSinkProto(const Schema& columns, const std::string& fullName,
                              const std::vector<size_t>& positions) {
  std::string package;
  std::string name = fullName;
  if (const size_t dot = fullName.rfind('.'); dot != std::string::npos) {
    package = fullName.substr(0, dot);
    name = fullName.substr(dot + 1);
  }
  std::vector<SinkProtoWriter::Field> fields;
  for (size_t i = 0; i < columns.columns.size(); ++i) {
    const Column& c = columns.columns[i];
    if (c.hidden) continue;
    fields.push_back(
        {c.name, c.type.get(), c.name, i < positions.size() ? positions[i] : SqlError::npos, true});
  }
  std::string body;
  SinkProtoWriter writer;
  writer.message(body, name, fields, 0);
  std::string out = "syntax = \"proto3\";\n";
  if (!package.empty()) out += fmt::format("package {};\n", package);
  if (writer.usesTimestamp) out += "import \"google/protobuf/timestamp.proto\";\n";
  out += '\n';
  out += body;
  return out;
}

}  // namespace rtsql::format
