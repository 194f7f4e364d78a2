// The protobuf decoder and encoder: a record's value is one serialized
// message of the type 'protobuf.message' names (docs/connectors.md,
// "Protobuf"), optionally after Confluent's framing.
//
// With 'schema.registry.url' every value is framed, and the framing names
// the writer's schema (its id) and the message in it (its indexes): a
// source fetches each id's .proto text and the schemas it references once,
// and resolves the message's fields to its columns by name, as the avro
// decoder does; a sink writes the message generated from its columns
// (protobufSinkProto), registered under the topic's subject.
//
// The wire format is walked here, guided by the plans of protobuf_schema.h,
// rather than parsed into a libprotobuf DynamicMessage and read back through
// Reflection: the walk goes straight from the bytes to rtsql's Values (no
// message objects per record), and every length is checked against the bytes
// left before anything is taken, so a hostile length is a decode error and
// never an allocation. It follows protobuf's parsing rules: fields in any
// order, the last of a repeated singular field wins (messages merge),
// repeated scalars packed or not, unknown fields skipped, and a known field
// of an unexpected wire type skipped as unknown.
#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "common/clock.h"
#include "common/error.h"
#include "connectors/format/column_plan.h"
#include "connectors/format/decode_util.h"
#include "connectors/format/float_widening.h"
#include "connectors/format/decoders.h"
#include "connectors/format/protobuf_message.h"
#include "connectors/format/protobuf_schema.h"
#include "connectors/registry.h"
#include "connectors/schema_registry/schema_registry.h"

namespace rtsql::format {

namespace {

using ProtoKind = ProtoFieldPlan::Kind;

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLength = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5
};

// Messages nest at most this deep in a record, groups of unknown fields too
// (protobuf's own parser stops at 100).
constexpr int kMaxDepth = 100;

WireType wireTypeOf(ProtoKind k) {
  switch (k) {
    case ProtoKind::Double:
    case ProtoKind::Fixed64:
    case ProtoKind::Sfixed64:
      return kFixed64;
    case ProtoKind::Float:
    case ProtoKind::Fixed32:
    case ProtoKind::Sfixed32:
      return kFixed32;
    case ProtoKind::String:
    case ProtoKind::Bytes:
    case ProtoKind::Message:
    case ProtoKind::Timestamp:
      return kLength;
    default:
      return kVarint;
  }
}

bool packable(ProtoKind k) {
  return wireTypeOf(k) != kLength;
}

class WireReader {
 public:
  WireReader(const uint8_t* p, size_t len) : p_(p), end_(p + len) {}
  bool atEnd() const { return p_ == end_; }
  size_t left() const { return static_cast<size_t>(end_ - p_); }

  bool varint(uint64_t& out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (p_ == end_) return false;
      const uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        out = v;
        return true;
      }
    }
    return false;  // more than 10 bytes
  }
  bool fixed32(uint32_t& out) {
    if (left() < 4) return false;
    std::memcpy(&out, p_, 4);  // little-endian, as the wire format is
    p_ += 4;
    return true;
  }
  bool fixed64(uint64_t& out) {
    if (left() < 8) return false;
    std::memcpy(&out, p_, 8);
    p_ += 8;
    return true;
  }
  bool bytes(const uint8_t*& start, size_t& len) {
    uint64_t n = 0;
    if (!varint(n) || n > left()) return false;
    start = p_;
    len = static_cast<size_t>(n);
    p_ += len;
    return true;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

class Walker {
 public:
  std::string error;

  // Decodes the message `m` from `len` bytes at `p` into `out`, which holds
  // its fields' values so far (an earlier occurrence being merged), or is
  // empty for a fresh message.
  bool message(const ProtoMessagePlan& m, const uint8_t* p, size_t len, ValueList& out, int depth) {
    if (depth > kMaxDepth) return fail("messages nested more than 100 deep");
    const bool fresh = out.empty();
    if (fresh) {
      out.resize(m.fields.size());
      for (size_t i = 0; i < m.fields.size(); ++i) out[i] = m.fields[i].defaultValue;
    }
    // Repeated fields gather their items here, then become arrays.
    std::vector<ValueList> items;
    if (m.hasRepeated) {
      items.resize(m.fields.size());
      if (!fresh) {
        for (size_t i = 0; i < m.fields.size(); ++i)
          if (m.fields[i].repeated && !out[i].isNull()) items[i] = out[i].asList();
      }
    }
    WireReader r(p, len);
    while (!r.atEnd()) {
      uint64_t tag = 0;
      if (!r.varint(tag)) return fail("a field tag beyond the end of the value");
      const uint64_t number = tag >> 3;
      const auto wire = static_cast<uint32_t>(tag & 7);
      if (number == 0 || number > 536870911) return fail("a field number out of range");
      const ProtoFieldPlan* f = m.find(static_cast<int>(number));
      if (f) {
        const size_t i = static_cast<size_t>(f - m.fields.data());
        const WireType expected = wireTypeOf(f->kind);
        if (f->repeated && wire == kLength && packable(f->kind)) {
          const uint8_t* start = nullptr;
          size_t n = 0;
          if (!r.bytes(start, n))
            return fail(fmt::format("field {}: a packed length beyond the value", f->name));
          WireReader packed(start, n);
          while (!packed.atEnd()) {
            Value v;
            if (!scalar(*f, packed, v)) return false;
            items[i].push_back(std::move(v));
          }
          continue;
        }
        if (wire == expected) {
          Value* slot = &out[i];
          Value item;
          if (f->repeated) slot = &item;
          if (!value(*f, r, *slot, depth)) return false;
          if (f->repeated) {
            items[i].push_back(std::move(item));
          } else if (f->oneof >= 0) {
            // Setting one member of a oneof clears the others.
            for (size_t j = 0; j < m.fields.size(); ++j)
              if (j != i && m.fields[j].oneof == f->oneof) out[j] = Value();
          }
          continue;
        }
      }
      if (!skip(r, wire, static_cast<uint32_t>(number), depth)) return false;
    }
    if (m.hasRepeated) {
      for (size_t i = 0; i < m.fields.size(); ++i)
        if (m.fields[i].repeated) out[i] = Value::array(std::move(items[i]));
    }
    return true;
  }

 private:
  bool fail(std::string why) {
    if (error.empty()) error = std::move(why);
    return false;
  }
  bool truncated(const ProtoFieldPlan& f) {
    return fail(fmt::format("field {}: beyond the end of the value", f.name));
  }

  // One value of `f` (an item when repeated) of its own wire type; `out`
  // holds an earlier occurrence of a singular message, which this one merges into.
  bool value(const ProtoFieldPlan& f, WireReader& r, Value& out, int depth) {
    switch (f.kind) {
      case ProtoKind::String:
      case ProtoKind::Bytes: {
        const uint8_t* p = nullptr;
        size_t n = 0;
        if (!r.bytes(p, n)) return truncated(f);
        const std::string_view s(reinterpret_cast<const char*>(p), n);
        if (f.kind == ProtoKind::String) {
          // protobuf requires UTF-8 in a string field, and so does STRING.
          if (!simdjson::validate_utf8(s.data(), s.size())) {
            return fail(fmt::format("field {}: a string that is not valid UTF-8", f.name));
          }
          out.setString(s);
        } else {
          out.setBinary(s);
        }
        return true;
      }
      case ProtoKind::Message: {
        const uint8_t* p = nullptr;
        size_t n = 0;
        if (!r.bytes(p, n)) return truncated(f);
        ValueList fields;
        if (!out.isNull() && !f.repeated) fields = out.asList();
        if (!message(*f.message, p, n, fields, depth + 1)) return false;
        out = Value::structure(std::move(fields));
        return true;
      }
      case ProtoKind::Timestamp: {
        const uint8_t* p = nullptr;
        size_t n = 0;
        if (!r.bytes(p, n)) return truncated(f);
        return timestamp(f, p, n, out, depth);
      }
      default:
        return scalar(f, r, out);
    }
  }

  // google.protobuf.Timestamp: seconds (1, int64) and nanos (2, int32) since
  // the epoch, as microseconds; finer digits are dropped (TIMESTAMP holds
  // microseconds).
  bool timestamp(const ProtoFieldPlan& f, const uint8_t* p, size_t n, Value& out, int depth) {
    int64_t seconds = 0;
    int64_t nanos = 0;
    WireReader r(p, n);
    while (!r.atEnd()) {
      uint64_t tag = 0;
      if (!r.varint(tag)) return truncated(f);
      const uint64_t number = tag >> 3;
      const auto wire = static_cast<uint32_t>(tag & 7);
      if (number == 0 || number > 536870911) return fail("a field number out of range");
      if ((number == 1 || number == 2) && wire == kVarint) {
        uint64_t v = 0;
        if (!r.varint(v)) return truncated(f);
        if (number == 1) {
          seconds = static_cast<int64_t>(v);
        } else {
          nanos = static_cast<int32_t>(static_cast<uint32_t>(v));
        }
        continue;
      }
      if (!skip(r, wire, static_cast<uint32_t>(number), depth + 1)) return false;
    }
    int64_t micros = 0;
    if (nanos < 0 || nanos > 999'999'999 ||
        __builtin_mul_overflow(seconds, int64_t{1'000'000}, &micros) ||
        __builtin_add_overflow(micros, nanos / 1000, &micros)) {
      return fail(fmt::format("field {}: a Timestamp out of TIMESTAMP's range", f.name));
    }
    out = Value::timestamp(micros);
    return true;
  }

  bool scalar(const ProtoFieldPlan& f, WireReader& r, Value& out) {
    uint64_t v = 0;
    uint32_t v32 = 0;
    switch (wireTypeOf(f.kind)) {
      case kVarint:
        if (!r.varint(v)) return truncated(f);
        break;
      case kFixed64:
        if (!r.fixed64(v)) return truncated(f);
        break;
      case kFixed32:
        if (!r.fixed32(v32)) return truncated(f);
        v = v32;
        break;
      default:
        return fail(fmt::format("field {}: not a scalar", f.name));
    }
    switch (f.kind) {
      case ProtoKind::Bool:
        out = Value::boolean(v != 0);
        return true;
      case ProtoKind::Int32:
      case ProtoKind::Sfixed32:
        out = Value::integer(static_cast<int32_t>(static_cast<uint32_t>(v)));
        return true;
      case ProtoKind::Sint32: {
        const auto u = static_cast<uint32_t>(v);
        out = Value::integer(static_cast<int32_t>(u >> 1) ^ -static_cast<int32_t>(u & 1));
        return true;
      }
      case ProtoKind::Uint32:
      case ProtoKind::Fixed32:
        out = Value::bigint(static_cast<uint32_t>(v));
        return true;
      case ProtoKind::Int64:
      case ProtoKind::Sfixed64:
        out = Value::bigint(static_cast<int64_t>(v));
        return true;
      case ProtoKind::Sint64:
        out = Value::bigint(static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1));
        return true;
      case ProtoKind::Uint64:
      case ProtoKind::Fixed64:
        if (v > static_cast<uint64_t>(INT64_MAX)) {
          return fail(fmt::format("field {}: {} is beyond BIGINT's range", f.name, v));
        }
        out = Value::bigint(static_cast<int64_t>(v));
        return true;
      case ProtoKind::Double: {
        double d = 0;
        std::memcpy(&d, &v, 8);
        out = Value::float64(d);
        return true;
      }
      case ProtoKind::Float: {
        float x = 0;
        std::memcpy(&x, &v32, 4);
        out = Value::float32(x);
        return true;
      }
      case ProtoKind::Enum: {
        const int32_t n = static_cast<int32_t>(static_cast<uint32_t>(v));
        // An open (proto3) enum keeps numbers it has no name for: the number,
        // as text, stands for them.
        const google::protobuf::EnumValueDescriptor* e = f.enumType->FindValueByNumber(n);
        out = Value::string(e ? e->name() : std::to_string(n));
        return true;
      }
      default:
        return fail(fmt::format("field {}: not a scalar", f.name));
    }
  }

  // Skips a field this walk does not read.
  bool skip(WireReader& r, uint32_t wire, uint32_t number, int depth) {
    uint64_t v = 0;
    uint32_t v32 = 0;
    const uint8_t* p = nullptr;
    size_t n = 0;
    switch (wire) {
      case kVarint:
        if (!r.varint(v)) break;
        return true;
      case kFixed64:
        if (!r.fixed64(v)) break;
        return true;
      case kFixed32:
        if (!r.fixed32(v32)) break;
        return true;
      case kLength:
        if (!r.bytes(p, n)) break;
        return true;
      case kStartGroup:
        if (depth > kMaxDepth) return fail("groups nested more than 100 deep");
        for (;;) {
          uint64_t tag = 0;
          if (!r.varint(tag)) break;
          const auto w = static_cast<uint32_t>(tag & 7);
          if (w == kEndGroup) {
            if ((tag >> 3) != number) return fail("a group ends with another group's tag");
            return true;
          }
          if (!skip(r, w, static_cast<uint32_t>(tag >> 3), depth + 1)) return false;
        }
        break;
      default:
        return fail(
            fmt::format("field {}: wire type {} is not a protobuf wire type", number, wire));
    }
    return fail(fmt::format("field {}: beyond the end of the value", number));
  }
};

class ProtobufDecoder final : public RecordDecoder {
 public:
  ProtobufDecoder(const Schema& schema, const Options& options, bool confluent)
      : confluent_(confluent),
        columns_(plannedColumns(schema)) {
    if (schema_registry::hasRegistry(options)) {
      registry_ =
          schema_registry::SchemaRegistryClient::shared(schema_registry::registryConfig(options));
      return;
    }
    inline_ = std::make_unique<Plan>();
    inline_->schema = ProtobufSchema::fromOptions(options, SqlError::npos, false);
    const ProtoMessagePlan& root = inline_->schema->root();
    for (const PlannedColumn& c : columns_) {
      Field f;
      f.meta = c.meta;
      if (f.meta == MetaKind::None) {
        f.index = root.indexOf(c.name);
        // The file may have changed since CREATE SOURCE checked the columns.
        const DataTypePtr fieldType =
            f.index < 0 ? nullptr : root.fields[static_cast<size_t>(f.index)].type;
        // A DOUBLE column over a float reads it as a DOUBLE (a source or a
        // flow from before floats read as FLOAT).
        f.widenFloats = fieldType && floatsWidened(*fieldType, *c.type);
        if (!fieldType || (!fieldType->equals(*c.type) && !f.widenFloats)) {
          throw SqlError(sqlstate::kDatatypeMismatch,
                         fmt::format("column \"{}\" of type {} is no longer a field of that type "
                                     "in protobuf message {}: the descriptor file changed",
                                     c.name, c.type->toString(), root.name),
                         SqlError::npos, "create the source again to read the new message");
        }
      }
      inline_->fields.push_back(f);
    }
  }

  bool decode(const RecordView& rec, Row& row, std::string& error) override {
    if (!rec.value) {
      error = "the record has no value (a tombstone)";
      return false;
    }
    const char* data = rec.value;
    size_t len = rec.valueLen;
    const Plan* plan = inline_.get();
    if (registry_ || confluent_) {
      int32_t id = 0;
      size_t used = 0;
      if (!schema_registry::readFraming(data, len, id, error)) return false;
      data += schema_registry::kFramingBytes;
      len -= schema_registry::kFramingBytes;
      if (!schema_registry::readMessageIndexes(data, len, path_, used, error)) return false;
      data += used;
      len -= used;
      // Without a registry the inline message is read, whatever the framing names.
      if (registry_) {
        plan = planOf(id, path_, error);
        if (!plan) return false;
      }
    }
    if (!plan->unreadable.empty()) {
      error = plan->unreadable;
      return false;
    }
    const ProtoMessagePlan& root = plan->schema->root();
    Walker walker;
    message_.clear();
    if (!walker.message(root, reinterpret_cast<const uint8_t*>(data), len, message_, 0)) {
      error = fmt::format("not a protobuf message {}{}: {}", root.name, plan->idText, walker.error);
      return false;
    }
    resetRow(row, plan->fields.size());
    for (size_t i = 0; i < plan->fields.size(); ++i) {
      const Field& f = plan->fields[i];
      if (f.meta != MetaKind::None) {
        row[i] = metaValue(f.meta, rec);
      } else if (f.index >= 0) {
        row[i] = std::move(message_[static_cast<size_t>(f.index)]);
        if (registry_) widenWriterValue(row[i], *columns_[i].type);
        if (f.widenFloats) widenFloats(row[i], *columns_[i].type);
      }
    }
    return true;
  }

 private:
  struct Field {
    MetaKind meta = MetaKind::None;
    int index = -1;  // the message's field; -1 (a writer's message without it): NULL
    bool widenFloats = false;  // a DOUBLE column over a float (floatsWidened)
  };
  // A message and how it gives the columns (idText: " (schema id N)").
  using Plan = ColumnPlan<ProtobufSchema, Field>;

  // The plan of the message at `path` in the writer's schema `id`, the
  // schema fetched (with its references) the first time; nullptr with
  // `error` set when it cannot be had.
  const Plan* planOf(int32_t id, const std::vector<int32_t>& path, std::string& error) {
    std::string key = std::to_string(id);
    for (int32_t i : path) key += fmt::format(",{}", i);
    if (const Plan* known = plans_.find(key)) return known;
    const ProtoFiles* files = filesOf(id, error);
    if (!files) return nullptr;
    const google::protobuf::Descriptor* message = messageAtIndexes(*files->file, path);
    if (!message) {
      error = fmt::format("message indexes [{}] name no message of the writer's schema (id {})",
                          fmt::join(path, ", "), id);
      return nullptr;
    }
    auto plan = std::make_unique<Plan>();
    plan->idText = fmt::format(" (schema id {})", id);
    try {
      plan->schema = ProtobufSchema::ofMessage(files->pool, *message, SqlError::npos);
    } catch (const SqlError& e) {
      plan->unreadable = fmt::format("the writer's message {}{}: {}", message->full_name(),
                                     plan->idText, e.message());
    }
    for (const PlannedColumn& c : columns_) {
      Field f;
      f.meta = c.meta;
      if (f.meta == MetaKind::None && plan->schema) {
        const ProtoMessagePlan& root = plan->schema->root();
        f.index = root.indexOf(c.name);
        if (f.index >= 0) {
          const DataType& writer = *root.fields[static_cast<size_t>(f.index)].type;
          f.widenFloats = floatsWidened(writer, *c.type);
          if (!writerTypeFills(writer, *c.type) && plan->unreadable.empty()) {
            plan->unreadable = unfillableColumn(
                c,
                fmt::format("field {} of the writer's message {}{}",
                            root.fields[static_cast<size_t>(f.index)].name, root.name,
                            plan->idText),
                writer);
          }
        }
      }
      plan->fields.push_back(f);
    }
    return plans_.add(std::move(key), std::move(plan));
  }

  // The writer's files of schema `id`, fetched and built the first time.
  const ProtoFiles* filesOf(int32_t id, std::string& error) {
    if (auto it = files_.find(id); it != files_.end()) return &it->second;
    const int64_t now = monotonicMicros();
    if (failures_.recent(id, now, error)) return nullptr;
    schema_registry::RegistryError why;
    ProtoFiles files;
    auto writer = registry_->schemaById(id, why);
    std::optional<std::vector<schema_registry::NamedSchema>> referenced;
    if (writer && writer->type != "PROTOBUF") {
      why = {schema_registry::RegistryError::Kind::Refused,
             fmt::format("schema id {} is a {} schema, not a PROTOBUF one", id, writer->type)};
    } else if (writer) {
      referenced = registry_->referencedSchemas(*writer, why);
    }
    if (referenced) {
      std::vector<ProtoImport> imports;
      for (auto& r : *referenced) imports.push_back({std::move(r.name), std::move(r.text)});
      std::string parseError;
      if (buildProtoFiles(writer->text, fmt::format("schema-{}.proto", id), imports, files,
                          parseError)) {
        if (files_.size() >= kMaxWriterPlans) files_.clear();
        return &files_.emplace(id, std::move(files)).first->second;
      }
      why = {schema_registry::RegistryError::Kind::Refused,
             fmt::format("the writer's schema (id {}) from the schema registry is not a protobuf "
                         "schema rtsql can read: {}",
                         id, parseError)};
    }
    error = failures_.remember(id, why, now);
    return nullptr;
  }

  bool confluent_;
  std::vector<PlannedColumn> columns_;
  std::unique_ptr<Plan> inline_;
  std::shared_ptr<schema_registry::SchemaRegistryClient> registry_;
  std::unordered_map<int32_t, ProtoFiles> files_;
  PlanCache<std::string, Plan> plans_;
  schema_registry::FailedSchemaIds failures_;
  std::vector<int32_t> path_;
  ValueList message_;
};

// --- encoding ---

void putVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void putTag(std::string& out, int number, WireType wire) {
  putVarint(out, (static_cast<uint64_t>(number) << 3) | wire);
}

void putFixed32(std::string& out, uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  out.append(b, 4);
}

void putFixed64(std::string& out, uint64_t v) {
  char b[8];
  std::memcpy(b, &v, 8);
  out.append(b, 8);
}

[[noreturn]] void outOfRange(const ProtoFieldPlan& f, const Value& v) {
  throw SqlError(
      sqlstate::kNumericOutOfRange,
      fmt::format("value {} is out of the range of protobuf field {}", v.asInt(), f.name));
}

// Appends length-delimited `body`, written by `write`, after its length.
template <typename Write>
void putLengthDelimited(std::string& out, Write&& write) {
  // Messages are short: reserve one byte of length and move the body when
  // its length takes more.
  const size_t at = out.size();
  out += '\0';
  write();
  const size_t len = out.size() - at - 1;
  if (len < 0x80) {
    out[at] = static_cast<char>(len);
    return;
  }
  std::string prefix;
  putVarint(prefix, len);
  out.replace(at, 1, prefix);
}

// One value of `f` (an item when repeated), without its tag.
void putScalar(std::string& out, const ProtoFieldPlan& f, const Value& v) {
  switch (f.kind) {
    case ProtoKind::Bool:
      putVarint(out, v.asBool() ? 1 : 0);
      return;
    case ProtoKind::Int32:
    case ProtoKind::Int64:
      // Negative int32s are sign-extended to 10 bytes, as protobuf writes them.
      if (f.kind == ProtoKind::Int32 && (v.asInt() < INT32_MIN || v.asInt() > INT32_MAX))
        outOfRange(f, v);
      putVarint(out, static_cast<uint64_t>(v.asInt()));
      return;
    case ProtoKind::Sint32:
    case ProtoKind::Sint64: {
      const int64_t x = v.asInt();
      if (f.kind == ProtoKind::Sint32 && (x < INT32_MIN || x > INT32_MAX)) outOfRange(f, v);
      putVarint(out, (static_cast<uint64_t>(x) << 1) ^ static_cast<uint64_t>(x >> 63));
      return;
    }
    case ProtoKind::Uint32:
      if (v.asInt() < 0 || v.asInt() > UINT32_MAX) outOfRange(f, v);
      putVarint(out, static_cast<uint64_t>(v.asInt()));
      return;
    case ProtoKind::Uint64:
      if (v.asInt() < 0) outOfRange(f, v);
      putVarint(out, static_cast<uint64_t>(v.asInt()));
      return;
    case ProtoKind::Fixed32:
      if (v.asInt() < 0 || v.asInt() > UINT32_MAX) outOfRange(f, v);
      putFixed32(out, static_cast<uint32_t>(v.asInt()));
      return;
    case ProtoKind::Sfixed32:
      if (v.asInt() < INT32_MIN || v.asInt() > INT32_MAX) outOfRange(f, v);
      putFixed32(out, static_cast<uint32_t>(static_cast<int32_t>(v.asInt())));
      return;
    case ProtoKind::Fixed64:
      if (v.asInt() < 0) outOfRange(f, v);
      putFixed64(out, static_cast<uint64_t>(v.asInt()));
      return;
    case ProtoKind::Sfixed64:
      putFixed64(out, static_cast<uint64_t>(v.asInt()));
      return;
    case ProtoKind::Double: {
      const double d = v.asDouble();
      uint64_t bits = 0;
      std::memcpy(&bits, &d, 8);
      putFixed64(out, bits);
      return;
    }
    case ProtoKind::Float: {
      const auto x = static_cast<float>(v.asDouble());
      uint32_t bits = 0;
      std::memcpy(&bits, &x, 4);
      putFixed32(out, bits);
      return;
    }
    case ProtoKind::Enum: {
      const auto* e = f.enumType->FindValueByName(v.asString());
      if (!e) {
        throw SqlError(sqlstate::kInvalidParameterValue,
                       fmt::format("\"{}\" is not a value of enum {} (protobuf field {})",
                                   v.asString(), f.enumType->full_name(), f.name));
      }
      putVarint(out, static_cast<uint64_t>(static_cast<int64_t>(e->number())));
      return;
    }
    case ProtoKind::String:
    case ProtoKind::Bytes: {
      const std::string& s = v.asString();
      putVarint(out, s.size());
      out += s;
      return;
    }
    case ProtoKind::Timestamp:
      putLengthDelimited(out, [&] {
        const int64_t micros = v.asInt();
        int64_t seconds = micros / 1'000'000;
        int64_t rest = micros % 1'000'000;
        if (rest < 0) {
          rest += 1'000'000;
          --seconds;
        }
        if (seconds != 0) {
          putTag(out, 1, kVarint);
          putVarint(out, static_cast<uint64_t>(seconds));
        }
        if (rest != 0) {
          putTag(out, 2, kVarint);
          putVarint(out, static_cast<uint64_t>(rest * 1000));
        }
      });
      return;
    case ProtoKind::Message:
      // A STRUCT is written by the encoder, which knows its fields' fields.
      return;
  }
}

bool isDefault(const ProtoFieldPlan& f, const Value& v) {
  switch (f.kind) {
    case ProtoKind::Bool:
      return !v.asBool();
    case ProtoKind::Double:
    case ProtoKind::Float: {
      // Only +0.0 is omitted: -0.0 is written, as protobuf does.
      const double d = v.asDouble();
      uint64_t bits = 0;
      std::memcpy(&bits, &d, 8);
      return bits == 0;
    }
    case ProtoKind::String:
    case ProtoKind::Bytes:
      return v.asString().empty();
    case ProtoKind::Enum:
      return f.defaultValue.isNull() ? false : v.asString() == f.defaultValue.asString();
    case ProtoKind::Message:
    case ProtoKind::Timestamp:
      return false;
    default:
      return v.asInt() == 0;
  }
}

void putField(std::string& out, const ProtoFieldPlan& f, const Value& v) {
  if (v.isNull()) return;  // NULL: the field is not set
  if (f.repeated) {
    const ValueList& items = v.asList();
    if (items.empty()) return;
    for (const Value& item : items) {
      if (item.isNull()) {
        throw SqlError(sqlstate::kInvalidParameterValue,
                       fmt::format("a NULL item of an ARRAY has no form in repeated protobuf "
                                   "field {}",
                                   f.name));
      }
    }
    if (packable(f.kind)) {
      putTag(out, f.number, kLength);
      putLengthDelimited(out, [&] {
        for (const Value& item : items) putScalar(out, f, item);
      });
      return;
    }
    for (const Value& item : items) {
      putTag(out, f.number, wireTypeOf(f.kind));
      putScalar(out, f, item);
    }
    return;
  }
  // A field without presence at its default is not written, as protobuf does.
  if (!f.presence && isDefault(f, v)) return;
  putTag(out, f.number, wireTypeOf(f.kind));
  putScalar(out, f, v);
}

// How a STRUCT value's fields map onto a message's: fieldOf[i] is the
// message field of the struct's field i; nested structs have their own.
struct StructPlan {
  const ProtoMessagePlan* message = nullptr;
  std::vector<const ProtoFieldPlan*> fieldOf;
  std::vector<std::unique_ptr<StructPlan>> nested;  // per struct field, or null
};

std::unique_ptr<StructPlan> structPlan(const DataType& t, const ProtoFieldPlan& f) {
  const DataType* type = &t;
  if (type->id == TypeId::Array) type = type->element.get();
  if (type->id != TypeId::Struct || f.kind != ProtoKind::Message) return nullptr;
  auto plan = std::make_unique<StructPlan>();
  plan->message = f.message;
  for (const StructField& sf : type->fields) {
    const ProtoFieldPlan* sub =
        &f.message->fields[static_cast<size_t>(f.message->indexOf(sf.name))];
    plan->fieldOf.push_back(sub);
    plan->nested.push_back(structPlan(*sf.type, *sub));
  }
  return plan;
}

void putColumn(std::string& out, const ProtoFieldPlan& f, const Value& v,
               const StructPlan* sp);

void putStruct(std::string& out, const StructPlan& plan, const Value& v) {
  const ValueList& fields = v.asList();
  for (size_t i = 0; i < fields.size() && i < plan.fieldOf.size(); ++i)
    putColumn(out, *plan.fieldOf[i], fields[i], plan.nested[i].get());
}

void putColumn(std::string& out, const ProtoFieldPlan& f, const Value& v,
               const StructPlan* sp) {
  if (f.kind != ProtoKind::Message || v.isNull()) {
    putField(out, f, v);
    return;
  }
  auto one = [&](const Value& item) {
    putTag(out, f.number, kLength);
    putLengthDelimited(out, [&] { putStruct(out, *sp, item); });
  };
  if (!f.repeated) {
    one(v);
    return;
  }
  for (const Value& item : v.asList()) {
    if (item.isNull()) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("a NULL item of an ARRAY has no form in repeated protobuf "
                                 "field {}",
                                 f.name));
    }
    one(item);
  }
}

class ProtobufEncoder final : public RecordEncoder {
 public:
  explicit ProtobufEncoder(const SinkSpec& sink)
      : schema_(sink.input), keyColumn_(sink.keyColumn), keyColumns_(sink.keyColumns) {
    if (schema_registry::hasRegistry(sink.options)) {
      // CREATE FLOW checked the message and that the subject takes it;
      // registering it again (each start, each task) answers the same id.
      const std::string message = protobufSinkMessageName(sink.options, sink.name);
      const std::string text = protobufSinkProto(sink.input, message);
      proto_ = ProtobufSchema::fromProtoText(text, message + ".proto", {}, message,
                                             fmt::format("sink \"{}\"'s message", sink.name),
                                             SqlError::npos, SqlError::npos);
      schema_registry::appendFraming(prefix_, registerSinkSchema(sink, text, "PROTOBUF"));
      schema_registry::appendMessageIndexes(prefix_, {0});
    } else {
      proto_ = ProtobufSchema::fromOptions(sink.options, SqlError::npos, false);
      if (sinkOptionsOf(sink).protobufConfluent) {
        // Schema id 0 (no registry), the first message.
        schema_registry::appendFraming(prefix_, 0);
        schema_registry::appendMessageIndexes(prefix_, {0});
      }
    }
    if (keyColumn_ >= 0) keyColumns_.clear();
    checkProtobufSinkColumns(*proto_, schema_);
    // Fields are written in field-number order, as protobuf writes them.
    const ProtoMessagePlan& root = proto_->root();
    for (size_t c = 0; c < schema_.size(); ++c) {
      if (schema_.columns[c].hidden) continue;
      const int f = root.indexOf(schema_.columns[c].name);
      plan_.push_back({&root.fields[static_cast<size_t>(f)], c, nullptr});
      plan_.back().structPlan = structPlan(*schema_.columns[c].type, *plan_.back().field);
    }
    std::sort(plan_.begin(), plan_.end(),
              [](const Column_& a, const Column_& b) { return a.field->number < b.field->number; });
  }

  void encode(const Row& row, EncodedRecord& out) override {
    out.headers.clear();
    out.topic.clear();
    out.hasValue = true;
    out.value.assign(prefix_);
    static const Value kNull;
    for (const Column_& c : plan_) {
      const Value& v = c.column < row.size() ? row[c.column] : kNull;
      putColumn(out.value, *c.field, v, c.structPlan.get());
    }
    encodeKey(row, schema_, keyColumn_, keyColumns_, out);
  }

 private:
  struct Column_ {
    const ProtoFieldPlan* field;
    size_t column;
    std::shared_ptr<StructPlan> structPlan;
  };

  Schema schema_;
  int keyColumn_;
  std::vector<int> keyColumns_;
  std::shared_ptr<const ProtobufSchema> proto_;
  std::string prefix_;  // the framing every value starts with, or empty
  std::vector<Column_> plan_;
};

}  // namespace

bool protobufConfluentFraming(const Options& options) {
  return iequals(options.getString("protobuf.framing", "none"), "confluent");
}

std::unique_ptr<RecordDecoder> makeProtobufDecoder(const Schema& schema, const Options& options,
                                                   const DecodeOptions& decode) {
  return std::make_unique<ProtobufDecoder>(schema, options, decode.protobufConfluent);
}

std::unique_ptr<RecordEncoder> makeProtobufEncoder(const SinkSpec& sink) {
  return std::make_unique<ProtobufEncoder>(sink);
}

ProtobufMessageReader::ProtobufMessageReader(std::shared_ptr<const ProtobufSchema> schema)
    : schema_(std::move(schema)) {
  std::vector<StructField> fields;
  for (const ProtoFieldPlan& f : schema_->root().fields) fields.push_back({f.name, f.type});
  type_ = DataType::structOf(std::move(fields));
}

bool ProtobufMessageReader::read(std::string_view bytes, Value& out, std::string& error) const {
  const ProtoMessagePlan& root = schema_->root();
  Walker walker;
  ValueList fields;
  if (!walker.message(root, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), fields,
                      0)) {
    error = fmt::format("not a protobuf message {}: {}", root.name, walker.error);
    return false;
  }
  out = Value::structure(std::move(fields));
  return true;
}

struct ProtobufMessageWriter::Plan {
  struct Field {
    const ProtoFieldPlan* field;
    size_t index;  // in the STRUCT
    std::shared_ptr<StructPlan> structPlan;
  };
  std::vector<Field> fields;  // in field-number order
};

ProtobufMessageWriter::ProtobufMessageWriter(std::shared_ptr<const ProtobufSchema> schema,
                                             const DataType& type, size_t pos)
    : schema_(std::move(schema)), plan_(std::make_unique<Plan>()) {
  Schema columns;
  for (const StructField& f : type.fields) columns.columns.push_back({f.name, f.type, false});
  checkProtobufSinkColumns(*schema_, columns, std::vector<size_t>(columns.size(), pos));
  const ProtoMessagePlan& root = schema_->root();
  for (size_t i = 0; i < type.fields.size(); ++i) {
    const ProtoFieldPlan& f = root.fields[static_cast<size_t>(root.indexOf(type.fields[i].name))];
    plan_->fields.push_back({&f, i, structPlan(*type.fields[i].type, f)});
  }
  std::sort(plan_->fields.begin(), plan_->fields.end(),
            [](const Plan::Field& a, const Plan::Field& b) {
              return a.field->number < b.field->number;
            });
}

ProtobufMessageWriter::~ProtobufMessageWriter() = default;

void ProtobufMessageWriter::write(const Value& v, std::string& out) const {
  out.clear();
  if (v.isNull()) return;
  const ValueList& values = v.asList();
  for (const Plan::Field& f : plan_->fields) {
    if (f.index < values.size()) putColumn(out, *f.field, values[f.index], f.structPlan.get());
  }
}

void checkProtobufSinkRegistry(const SinkSpec& sink, const std::vector<size_t>& positions) {
  const std::string message = protobufSinkMessageName(sink.options, sink.name);
  const std::string text = protobufSinkProto(sink.input, message, positions);
  size_t pos = SqlError::npos;
  for (size_t p : positions) pos = std::min(pos, p);
  // The generated text builds (a JSON name clash of two columns is what
  // could stop it), before the registry sees it.
  ProtobufSchema::fromProtoText(text, message + ".proto", {}, message,
                                fmt::format("sink \"{}\"'s message", sink.name), pos, pos);
  checkSinkSchemaCompatible(
      sink, text, "PROTOBUF", pos,
      fmt::format("the sink writes a message {} of the query's columns, numbered in order: give "
                  "the columns the names and types of the subject's schema, in its order, or "
                  "write to another topic",
                  message));
}

}  // namespace rtsql::format
