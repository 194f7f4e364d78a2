// The Avro decoder and encoder: a record's value is one Avro binary datum of
// the record schema (docs/connectors.md, "Avro"), read and written by Debian's
// libavro with one generic value per task, reused for every record.
//
// Decoding: 'avro.schema' is the writer's schema; each column is the field of
// the same name (the source's columns were checked against the schema at
// CREATE SOURCE); the hidden metadata columns come from the record. With
// 'avro.framing' = 'confluent' a value starts with the magic byte 0 and a
// 4-byte schema id, which is skipped (the schema is the inline one).
// With 'schema.registry.url' every value is framed so, and the id names the
// writer's schema in the registry (connectors/schema_registry/): each id's
// schema is fetched once, and its record's fields are resolved to the
// source's columns by name (a field the writer lacks is NULL; int widens to
// BIGINT and DOUBLE, long to DOUBLE).
// Encoding: the sink's columns as a record of nullable fields
// (avroSinkSchema), TIMESTAMP as timestamp-micros; with 'schema.registry.url'
// that schema is registered under the topic's subject and each value framed
// with its id.
#include <avro.h>
#include <algorithm>
#include <fmt/format.h>
#include <simdjson.h>


#include "common/clock.h"
#include "common/error.h"
#include "connectors/format/avro_datum.h"
#include "connectors/format/avro_schema.h"
#include "connectors/format/column_plan.h"
#include "connectors/format/decode_util.h"
#include "connectors/format/float_widening.h"
#include "connectors/format/decoders.h"
#include "connectors/format/schema_text.h"
#include "connectors/schema_registry/schema_registry.h"

namespace rtsql::format {

namespace {

using AvroKind = AvroNode::Kind;
constexpr int64_t kMicrosPerDay = 86400LL * 1000 * 1000;

// libavro's last error on this thread, which it then forgets: libavro
// prefixes each error to the one before, so the next starts clean.
std::string avroError() {
  std::string why = avro_strerror();
  avro_set_error("%s", "");
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  return why.empty() ? "malformed data" : why;
}

// libavro's schema, value class and one value of it, released together.
class AvroValueHolder {
 public:
  explicit AvroValueHolder(const std::string& json) {
    useBoundedAvroAllocator();
    if (std::string problem = schemaTextProblem(json, SchemaTextSyntax::Json); !problem.empty()) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("libavro cannot read the Avro schema: {}", problem));
    }
    if (avro_schema_from_json_length(json.data(), json.size(), &schema_) != 0) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("libavro cannot read the Avro schema: {}", avroError()));
    }
    iface_ = avro_generic_class_from_schema(schema_);
    if (!iface_ || avro_generic_value_new(iface_, &value_) != 0) {
      release();
      throw SqlError(sqlstate::kInternalError,
                     fmt::format("libavro cannot make a value of the schema: {}", avroError()));
    }
    hasValue_ = true;
  }
  ~AvroValueHolder() { release(); }
  AvroValueHolder(const AvroValueHolder&) = delete;
  AvroValueHolder& operator=(const AvroValueHolder&) = delete;

  avro_value_t& value() { return value_; }

 private:
  void release() {
    if (hasValue_) avro_value_decref(&value_);
    hasValue_ = false;
    if (iface_) avro_value_iface_decref(iface_);
    iface_ = nullptr;
    if (schema_) avro_schema_decref(schema_);
    schema_ = nullptr;
  }

  avro_schema_t schema_ = nullptr;
  avro_value_iface_t* iface_ = nullptr;
  avro_value_t value_{};
  bool hasValue_ = false;
};

// `v` (of schema `n`) as a value of `type`; false with `error` set when libavro
// refuses a read, which a datum it has just read does not give.
bool toValue(avro_value_t& v, const AvroNode& n, const DataType& type, Value& out,
             std::string& error) {
  int rc = 0;
  switch (n.kind) {
    case AvroKind::Union: {
      int d = 0;
      avro_value_t branch;
      rc = avro_value_get_discriminant(&v, &d);
      if (rc == 0) rc = avro_value_get_current_branch(&v, &branch);
      if (rc != 0 || d < 0 || static_cast<size_t>(d) >= n.branches.size()) break;
      return toValue(branch, *n.branches[static_cast<size_t>(d)], type, out, error);
    }
    case AvroKind::Null:
      out = Value();
      return true;
    case AvroKind::Boolean: {
      int b = 0;
      rc = avro_value_get_boolean(&v, &b);
      if (rc == 0) out = Value::boolean(b != 0);
      break;
    }
    case AvroKind::Int: {
      int32_t i = 0;
      rc = avro_value_get_int(&v, &i);
      if (rc != 0) break;
      if (type.id == TypeId::Date) {
        out = Value::date(i);
        return true;
      }
      if (type.id != TypeId::Timestamp) {
        out = Value::integer(i);
        return true;
      }
      int64_t micros = 0;
      if (__builtin_mul_overflow(static_cast<int64_t>(i), kMicrosPerDay, &micros)) {
        error = fmt::format("date {} (days) out of TIMESTAMP's range", i);
        return false;
      }
      out = Value::timestamp(micros);
      return true;
    }
    case AvroKind::Long: {
      int64_t l = 0;
      rc = avro_value_get_long(&v, &l);
      if (rc != 0) break;
      if (type.id != TypeId::Timestamp && type.id != TypeId::TimestampNtz) {
        out = Value::bigint(l);
        return true;
      }
      if (n.logical.find("millis") != std::string::npos) {
        if (l > INT64_MAX / 1000 || l < INT64_MIN / 1000) {
          error = "a timestamp-millis out of TIMESTAMP's range";
          return false;
        }
        l *= 1000;
      }
      out = type.id == TypeId::TimestampNtz ? Value::timestampNtz(l) : Value::timestamp(l);
      return true;
    }
    case AvroKind::Float: {
      float f = 0;
      rc = avro_value_get_float(&v, &f);
      if (rc == 0)
        out = type.id == TypeId::Float ? Value::float32(f) : Value::float64(static_cast<double>(f));
      break;
    }
    case AvroKind::Double: {
      double d = 0;
      rc = avro_value_get_double(&v, &d);
      if (rc == 0) out = Value::float64(d);
      break;
    }
    case AvroKind::String: {
      const char* p = nullptr;
      size_t size = 0;
      rc = avro_value_get_string(&v, &p, &size);
      // libavro's size counts a terminating NUL.
      if (rc == 0) out.setString(std::string_view(p, size > 0 ? size - 1 : 0));
      break;
    }
    case AvroKind::Enum: {
      int s = 0;
      rc = avro_value_get_enum(&v, &s);
      if (rc == 0) {
        if (s < 0 || static_cast<size_t>(s) >= n.symbols.size()) {
          error = fmt::format("enum index {} out of the {} symbols", s, n.symbols.size());
          return false;
        }
        out.setString(n.symbols[static_cast<size_t>(s)]);
      }
      break;
    }
    case AvroKind::Bytes:
    case AvroKind::Fixed: {
      const void* p = nullptr;
      size_t size = 0;
      rc = n.kind == AvroKind::Bytes ? avro_value_get_bytes(&v, &p, &size)
                                 : avro_value_get_fixed(&v, &p, &size);
      if (rc == 0) out.setBinary(std::string_view(static_cast<const char*>(p), size));
      break;
    }
    case AvroKind::Array: {
      size_t size = 0;
      rc = avro_value_get_size(&v, &size);
      if (rc != 0) break;
      ValueList items(size);
      for (size_t i = 0; i < size; ++i) {
        avro_value_t item;
        if (avro_value_get_by_index(&v, i, &item, nullptr) != 0 ||
            !toValue(item, *n.items, *type.element, items[i], error)) {
          if (error.empty()) error = avroError();
          return false;
        }
      }
      out = Value::array(std::move(items));
      return true;
    }
    case AvroKind::Record: {
      ValueList fields(n.fields.size());
      for (size_t i = 0; i < n.fields.size(); ++i) {
        avro_value_t field;
        if (avro_value_get_by_index(&v, i, &field, nullptr) != 0 ||
            !toValue(field, *n.fields[i].second, *type.fields[i].type, fields[i], error)) {
          if (error.empty()) error = avroError();
          return false;
        }
      }
      out = Value::structure(std::move(fields));
      return true;
    }
    case AvroKind::Map:
      error = "a map has no SQL type";
      return false;
  }
  if (rc != 0) {
    error = avroError();
    return false;
  }
  return true;
}

// A datum's bytes are the writer's: before libavro reads them, every length,
// count and index is checked against the bytes left and the schema, so that
// libavro only ever reads a well-formed datum (its error paths allocate what
// a length claims, and some leak). Each item of an array takes at least one
// byte (AvroSchema refuses others), so a count above the bytes left is false.
class DatumCheck {
 public:
  DatumCheck(const char* data, size_t len)
      : p_(reinterpret_cast<const uint8_t*>(data)), end_(p_ + len) {}

  bool datum(const AvroNode& n) {
    switch (n.kind) {
      case AvroKind::Null:
        return true;
      case AvroKind::Boolean:
        return take(1, "a boolean");
      case AvroKind::Int: {
        int64_t v = 0;
        if (!varint(v, "an int")) return false;
        if (v < INT32_MIN || v > INT32_MAX) return fail("an int out of range");
        return true;
      }
      case AvroKind::Long: {
        int64_t v = 0;
        return varint(v, "a long");
      }
      case AvroKind::Float:
        return take(4, "a float");
      case AvroKind::Double:
        return take(8, "a double");
      case AvroKind::Bytes:
      case AvroKind::String: {
        int64_t len = 0;
        if (!varint(len, "a length")) return false;
        if (len < 0) return fail("a negative length");
        const uint8_t* start = p_;
        if (!take(static_cast<uint64_t>(len), n.kind == AvroKind::String ? "a string" : "bytes")) {
          return false;
        }
        // A STRING is UTF-8 everywhere in rtsql; libavro does not check it.
        if (n.kind == AvroKind::String && !simdjson::validate_utf8(reinterpret_cast<const char*>(start),
                                                               static_cast<size_t>(len))) {
          return fail("a string that is not valid UTF-8");
        }
        return true;
      }
      case AvroKind::Fixed:
        return take(n.size, "a fixed");
      case AvroKind::Enum: {
        int64_t i = 0;
        if (!varint(i, "an enum index")) return false;
        if (i < 0 || static_cast<uint64_t>(i) >= n.symbols.size()) {
          return fail(fmt::format("enum index {} of {} symbols", i, n.symbols.size()));
        }
        return true;
      }
      case AvroKind::Union: {
        int64_t i = 0;
        if (!varint(i, "a union index")) return false;
        if (i < 0 || static_cast<uint64_t>(i) >= n.branches.size()) {
          return fail(fmt::format("union index {} of {} branches", i, n.branches.size()));
        }
        return datum(*n.branches[static_cast<size_t>(i)]);
      }
      case AvroKind::Record:
        for (const auto& [name, f] : n.fields)
          if (!datum(*f)) return false;
        return true;
      case AvroKind::Array:
        for (;;) {
          int64_t count = 0;
          if (!varint(count, "an array block count")) return false;
          if (count == 0) return true;
          if (count < 0) {
            // A negative count is followed by the block's size in bytes.
            if (count == INT64_MIN) return fail("an array block count out of range");
            count = -count;
            int64_t size = 0;
            if (!varint(size, "an array block size")) return false;
            if (size < 0 || static_cast<uint64_t>(size) > left())
              return fail("an array block size beyond the value");
          }
          if (static_cast<uint64_t>(count) > left()) return fail("an array count beyond the value");
          for (int64_t i = 0; i < count; ++i)
            if (!datum(*n.items)) return false;
        }
      case AvroKind::Map:
        return fail("a map");
    }
    return fail("an unknown type");
  }

  bool atEnd() const { return p_ == end_; }
  size_t left() const { return static_cast<size_t>(end_ - p_); }
  const std::string& error() const { return error_; }

 private:
  bool fail(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return false;
  }
  bool take(uint64_t n, const char* what) {
    if (n > left()) return fail(fmt::format("{} beyond the end of the value", what));
    p_ += n;
    return true;
  }
  // A zigzag varint of at most 10 bytes.
  bool varint(int64_t& out, const char* what) {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (p_ == end_) return fail(fmt::format("{} beyond the end of the value", what));
      const uint8_t b = *p_++;
      if (shift == 63 && b > 1) return fail(fmt::format("{} longer than 64 bits", what));
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        out = static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
        return true;
      }
    }
    return fail(fmt::format("{} longer than 10 bytes", what));
  }

  const uint8_t* p_;
  const uint8_t* end_;
  std::string error_;
};

class AvroDecoder final : public RecordDecoder {
 public:
  AvroDecoder(const Schema& schema, const Options& options, bool confluent)
      : columns_(plannedColumns(schema)), confluent_(confluent) {
    static const char kNothing = 0;
    reader_ = avro_reader_memory(&kNothing, 0);
    if (schema_registry::hasRegistry(options)) {
      registry_ =
          schema_registry::SchemaRegistryClient::shared(schema_registry::registryConfig(options));
      return;
    }
    inline_ = makePlan(
        AvroSchema::parse(
            options.getString("avro.schema"),
            options.find("avro.schema") ? options.find("avro.schema")->valuePos : SqlError::npos),
        -1);
  }
  ~AvroDecoder() override {
    if (reader_) avro_reader_free(reader_);
  }
  AvroDecoder(const AvroDecoder&) = delete;
  AvroDecoder& operator=(const AvroDecoder&) = delete;

  bool decode(const RecordView& rec, Row& row, std::string& error) override {
    if (!rec.value) {
      error = "the record has no value (a tombstone)";
      return false;
    }
    const char* data = rec.value;
    size_t len = rec.valueLen;
    const Plan* plan = inline_.get();
    if (registry_) {
      int32_t id = 0;
      if (!schema_registry::readFraming(data, len, id, error)) return false;
      data += schema_registry::kFramingBytes;
      len -= schema_registry::kFramingBytes;
      plan = planOf(id, error);
      if (!plan) return false;
    } else if (confluent_) {
      if (len < 5 || data[0] != 0) {
        error = "not a Confluent-framed Avro value (magic byte 0 and a 4-byte schema id)";
        return false;
      }
      data += 5;
      len -= 5;
    }
    if (!plan->unreadable.empty()) {
      error = plan->unreadable;
      return false;
    }
    const AvroSchema& avro = *plan->schema;
    DatumCheck check(data, len);
    if (!check.datum(avro.root())) {
      error = fmt::format("not an Avro datum of the schema{}: {}", plan->idText, check.error());
      return false;
    }
    if (!check.atEnd()) {
      error = fmt::format("{} bytes left after the Avro datum: not a datum of the schema{}",
                          check.left(), plan->idText);
      return false;
    }
    avro_value_t& value = plan->holder->value();
    avro_value_reset(&value);
    avro_reader_memory_set_source(reader_, data, static_cast<int64_t>(len));
    if (avro_value_read(reader_, &value) != 0) {
      error = fmt::format("not an Avro datum of the schema{}: {}", plan->idText, avroError());
      return false;
    }
    resetRow(row, plan->fields.size());
    for (size_t i = 0; i < plan->fields.size(); ++i) {
      const Field& f = plan->fields[i];
      if (f.meta != MetaKind::None) {
        row[i] = metaValue(f.meta, rec);
        continue;
      }
      if (!f.node) continue;
      avro_value_t field;
      if (avro_value_get_by_index(&value, static_cast<size_t>(f.index), &field, nullptr) != 0) {
        error = avroError();
        return false;
      }
      std::string why;
      if (!toValue(field, *f.node, *f.writerType, row[i], why)) {
        error = fmt::format("field '{}': {}",
                            avro.root().fields[static_cast<size_t>(f.index)].first, why);
        return false;
      }
      widenWriterValue(row[i], *f.type);
      if (f.widenFloats) widenFloats(row[i], *f.type);
    }
    return true;
  }

 private:
  struct Field {
    MetaKind meta = MetaKind::None;
    int index = -1;
    const AvroNode* node = nullptr;
    DataTypePtr type;        // the column's
    DataTypePtr writerType;  // the writer's field's, which must fill the column (writerTypeFills)
    bool widenFloats = false;  // a writer's FLOAT inside it read into a DOUBLE (floatsWidened)
  };
  // A writer's schema and how its record gives the columns, with the value
  // its records are read into.
  struct Plan : ColumnPlan<AvroSchema, Field> {
    std::unique_ptr<AvroValueHolder> holder;
  };

  // The plan of `avro` for the columns. An inline schema (`id` < 0) was
  // checked against the columns at CREATE SOURCE; a registry's is resolved
  // here, and a field that cannot fill its column makes every record of the
  // schema a decode error.
  std::unique_ptr<Plan> makePlan(std::shared_ptr<const AvroSchema> avro, int64_t id) {
    auto plan = std::make_unique<Plan>();
    plan->schema = std::move(avro);
    plan->holder = std::make_unique<AvroValueHolder>(plan->schema->json());
    if (id >= 0) plan->idText = fmt::format(" (id {})", id);
    const AvroNode& root = plan->schema->root();
    for (const PlannedColumn& c : columns_) {
      Field f;
      f.meta = c.meta;
      f.type = c.type;
      f.writerType = c.type;
      for (size_t i = 0; i < root.fields.size() && f.meta == MetaKind::None; ++i) {
        if (!iequals(root.fields[i].first, c.name)) continue;
        f.index = static_cast<int>(i);
        f.node = root.fields[i].second;
        if (id < 0) break;
        try {
          f.writerType = AvroSchema::sqlType(*f.node, SqlError::npos, root.fields[i].first);
        } catch (const SqlError& e) {
          plan->unreadable = fmt::format("field '{}' of the writer's schema{}: {}",
                                         root.fields[i].first, plan->idText, e.message());
          break;
        }
        f.widenFloats = floatsWidened(*f.writerType, *c.type);
        if (!writerTypeFills(*f.writerType, *c.type)) {
          plan->unreadable = unfillableColumn(
              c,
              fmt::format("field '{}' of the writer's schema{}", root.fields[i].first,
                          plan->idText),
              *f.writerType);
        }
        break;
      }
      plan->fields.push_back(std::move(f));
    }
    return plan;
  }

  // The plan of the writer's schema `id`, fetched from the registry the first
  // time; nullptr with `error` set when it cannot be had.
  const Plan* planOf(int32_t id, std::string& error) {
    if (const Plan* known = plans_.find(id)) return known;
    const int64_t now = monotonicMicros();
    if (failures_.recent(id, now, error)) return nullptr;
    schema_registry::RegistryError why;
    auto writer = registry_->schemaById(id, why);
    std::unique_ptr<Plan> plan;
    if (writer) {
      try {
        plan = makePlan(AvroSchema::parse(writer->text, SqlError::npos), id);
      } catch (const SqlError& e) {
        why = {schema_registry::RegistryError::Kind::Refused,
               fmt::format("the writer's schema (id {}) from the schema registry: {}", id,
                           e.message())};
      }
    }
    if (!plan) {
      error = failures_.remember(id, why, now);
      return nullptr;
    }
    return plans_.add(id, std::move(plan));
  }

  std::vector<PlannedColumn> columns_;
  bool confluent_;
  std::unique_ptr<Plan> inline_;
  std::shared_ptr<schema_registry::SchemaRegistryClient> registry_;
  PlanCache<int32_t, Plan> plans_;
  schema_registry::FailedSchemaIds failures_;
  avro_reader_t reader_ = nullptr;
};

// Sets `v` (a union of null and the type of `type`, as avroSinkSchema writes
// every field and item) to `x`.
int setNullable(avro_value_t& v, const Value& x, const DataType& type) {
  avro_value_t branch;
  if (x.isNull()) {
    int rc = avro_value_set_branch(&v, 0, &branch);
    return rc != 0 ? rc : avro_value_set_null(&branch);
  }
  int rc = avro_value_set_branch(&v, 1, &branch);
  if (rc != 0) return rc;
  switch (type.id) {
    case TypeId::Boolean:
      return avro_value_set_boolean(&branch, x.asBool() ? 1 : 0);
    case TypeId::Int:
    case TypeId::TinyInt:
    case TypeId::SmallInt:
    case TypeId::YearMonthInterval:  // its months
      return avro_value_set_int(&branch, static_cast<int32_t>(x.asInt()));
    case TypeId::Float:
      return avro_value_set_float(&branch, static_cast<float>(x.asDouble()));
    case TypeId::BigInt:
    case TypeId::Interval:
    case TypeId::Timestamp:
    case TypeId::TimestampNtz:
      return avro_value_set_long(&branch, x.asInt());
    case TypeId::Double:
      return avro_value_set_double(&branch, x.asDouble());
    case TypeId::Decimal: {
      std::string bytes = decimal::toBigEndianBytes(x.asDecimal());
      return avro_value_set_bytes(&branch, bytes.data(), bytes.size());
    }
    case TypeId::Date:
      return avro_value_set_int(&branch, static_cast<int32_t>(x.asInt()));
    case TypeId::Null:
    case TypeId::String: {
      const std::string& s = x.asString();
      // libavro's size counts the terminating NUL that c_str() has.
      return avro_value_set_string_len(&branch, s.c_str(), s.size() + 1);
    }
    case TypeId::Binary: {
      const std::string& s = x.asString();
      return avro_value_set_bytes(&branch, const_cast<char*>(s.data()), s.size());
    }
    case TypeId::Array:
      for (const Value& item : x.asList()) {
        avro_value_t slot;
        rc = avro_value_append(&branch, &slot, nullptr);
        if (rc == 0) rc = setNullable(slot, item, *type.element);
        if (rc != 0) return rc;
      }
      return 0;
    case TypeId::Struct: {
      const ValueList& fields = x.asList();
      for (size_t i = 0; i < type.fields.size() && i < fields.size(); ++i) {
        avro_value_t slot;
        rc = avro_value_get_by_index(&branch, i, &slot, nullptr);
        if (rc == 0) rc = setNullable(slot, fields[i], *type.fields[i].type);
        if (rc != 0) return rc;
      }
      return 0;
    }
    case TypeId::Map: {
      // An Avro map: its names are the keys' text (Avro's map keys are strings).
      const ValueList& items = x.asList();
      const DataType& vt = type.value ? *type.value : *DataType::of(TypeId::Null);
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        avro_value_t slot;
        std::string key = items[i].toString();
        rc = avro_value_add(&branch, key.c_str(), &slot, nullptr, nullptr);
        if (rc == 0) rc = setNullable(slot, items[i + 1], vt);
        if (rc != 0) return rc;
      }
      return 0;
    }
  }
  return 0;
}

class AvroEncoder final : public RecordEncoder {
 public:
  explicit AvroEncoder(const SinkSpec& sink)
      : schema_(sink.input),
        keyColumn_(sink.keyColumn),
        keyColumns_(sink.keyColumns),
        holder_(avroSinkSchema(sink.input, sink.name)) {
    if (keyColumn_ >= 0) keyColumns_.clear();
    for (size_t i = 0; i < schema_.size(); ++i)
      if (!schema_.columns[i].hidden) columns_.push_back(i);
    static char kNothing = 0;
    writer_ = avro_writer_memory(&kNothing, 0);
    if (schema_registry::hasRegistry(sink.options)) {
      // CREATE FLOW checked that the subject takes the schema; registering
      // it again (each start, each task) answers the same id.
      schemaId_ = registerSinkSchema(sink, avroSinkSchema(sink.input, sink.name), "AVRO");
      framing_ = true;
    }
  }
  ~AvroEncoder() override {
    if (writer_) avro_writer_free(writer_);
  }
  AvroEncoder(const AvroEncoder&) = delete;
  AvroEncoder& operator=(const AvroEncoder&) = delete;

  void encode(const Row& row, EncodedRecord& out) override {
    out.headers.clear();
    out.topic.clear();
    out.hasValue = true;
    avro_value_t& value = holder_.value();
    avro_value_reset(&value);
    static const Value kNull;
    for (size_t f = 0; f < columns_.size(); ++f) {
      const size_t c = columns_[f];
      avro_value_t field;
      if (avro_value_get_by_index(&value, f, &field, nullptr) != 0 ||
          setNullable(field, c < row.size() ? row[c] : kNull, *schema_.columns[c].type) != 0) {
        // Every value of the sink's column types has its Avro form: libavro
        // refuses only on memory exhaustion.
        throw SqlError(sqlstate::kInternalError,
                       fmt::format("cannot encode an Avro row: {}", avroError()));
      }
    }
    size_t size = 0;
    avro_value_sizeof(&value, &size);
    out.value.clear();
    if (framing_) schema_registry::appendFraming(out.value, schemaId_);
    const size_t at = out.value.size();
    out.value.resize(at + size);
    avro_writer_memory_set_dest(writer_, out.value.data() + at, static_cast<int64_t>(size));
    if (avro_value_write(writer_, &value) != 0) {
      throw SqlError(sqlstate::kInternalError,
                     fmt::format("cannot write an Avro row: {}", avroError()));
    }
    encodeKey(row, schema_, keyColumn_, keyColumns_, out);
  }

 private:
  Schema schema_;
  int keyColumn_;
  std::vector<int> keyColumns_;
  std::vector<size_t> columns_;
  AvroValueHolder holder_;
  avro_writer_t writer_ = nullptr;
  bool framing_ = false;
  int32_t schemaId_ = 0;
};

// Sets `v` (of schema `n`) to `x`, a value of `type`, the SQL type of `n`
// (AvroSchema::sqlType), for any schema a from_avro reads: unions of null and
// one type in either order, fields that are not nullable. False with `error`
// when the schema cannot hold the value.
bool setDatum(avro_value_t& v, const AvroNode& n, const Value& x, const DataType& type,
              std::string& error) {
  if (n.kind == AvroKind::Union) {
    int nullAt = -1, other = -1;
    for (size_t i = 0; i < n.branches.size(); ++i) {
      if (n.branches[i]->kind == AvroKind::Null) nullAt = nullAt < 0 ? static_cast<int>(i) : nullAt;
      else if (other < 0) other = static_cast<int>(i);
    }
    const int at = x.isNull() ? nullAt : other;
    if (at < 0) {
      error = x.isNull() ? "a NULL where the Avro schema's union has no null"
                         : "a value where the Avro schema's union has only null";
      return false;
    }
    avro_value_t branch;
    if (avro_value_set_branch(&v, at, &branch) != 0) {
      error = avroError();
      return false;
    }
    return setDatum(branch, *n.branches[static_cast<size_t>(at)], x, type, error);
  }
  if (x.isNull() != (n.kind == AvroKind::Null)) {
    error = x.isNull() ? "a NULL where the Avro schema has no null (make the type a union "
                         "with \"null\")"
                       : "a value where the Avro schema has null";
    return false;
  }
  int rc = 0;
  switch (n.kind) {
    case AvroKind::Null:
      rc = avro_value_set_null(&v);
      break;
    case AvroKind::Boolean:
      rc = avro_value_set_boolean(&v, x.asBool() ? 1 : 0);
      break;
    case AvroKind::Int:
      // A DATE is its days, as the logical type date has them.
      rc = avro_value_set_int(&v, static_cast<int32_t>(x.asInt()));
      break;
    case AvroKind::Long: {
      int64_t l = x.asInt();
      // A TIMESTAMP under timestamp-millis is its whole milliseconds.
      if ((type.id == TypeId::Timestamp || type.id == TypeId::TimestampNtz) &&
          n.logical.find("millis") != std::string::npos)
        l = l / 1000 - (l % 1000 < 0 ? 1 : 0);
      rc = avro_value_set_long(&v, l);
      break;
    }
    case AvroKind::Float:
      rc = avro_value_set_float(&v, static_cast<float>(x.asDouble()));
      break;
    case AvroKind::Double:
      rc = avro_value_set_double(&v, x.asDouble());
      break;
    case AvroKind::String: {
      const std::string& text = x.asString();
      // libavro's size counts the terminating NUL that c_str() has.
      rc = avro_value_set_string_len(&v, text.c_str(), text.size() + 1);
      break;
    }
    case AvroKind::Enum: {
      const auto it = std::find(n.symbols.begin(), n.symbols.end(), x.asString());
      if (it == n.symbols.end()) {
        error = fmt::format("'{}' is not a symbol of Avro enum {}", x.asString().substr(0, 64),
                            n.name);
        return false;
      }
      rc = avro_value_set_enum(&v, static_cast<int>(it - n.symbols.begin()));
      break;
    }
    case AvroKind::Bytes: {
      const std::string& bytes = x.asString();
      rc = avro_value_set_bytes(&v, const_cast<char*>(bytes.data()), bytes.size());
      break;
    }
    case AvroKind::Fixed: {
      const std::string& bytes = x.asString();
      if (bytes.size() != n.size) {
        error = fmt::format("{} bytes for Avro fixed {} of {} bytes", bytes.size(), n.name, n.size);
        return false;
      }
      rc = avro_value_set_fixed(&v, const_cast<char*>(bytes.data()), bytes.size());
      break;
    }
    case AvroKind::Array:
      for (const Value& item : x.asList()) {
        avro_value_t slot;
        if (avro_value_append(&v, &slot, nullptr) != 0) {
          error = avroError();
          return false;
        }
        if (!setDatum(slot, *n.items, item, *type.element, error)) return false;
      }
      return true;
    case AvroKind::Record: {
      const ValueList& fields = x.asList();
      for (size_t i = 0; i < n.fields.size() && i < fields.size() && i < type.fields.size(); ++i) {
        avro_value_t slot;
        if (avro_value_get_by_index(&v, i, &slot, nullptr) != 0) {
          error = avroError();
          return false;
        }
        if (!setDatum(slot, *n.fields[i].second, fields[i], *type.fields[i].type, error)) {
          error = fmt::format("field '{}': {}", n.fields[i].first, error);
          return false;
        }
      }
      return true;
    }
    case AvroKind::Map:
      error = "a map has no SQL type";
      return false;
    case AvroKind::Union:
      break;
  }
  if (rc != 0) {
    error = avroError();
    return false;
  }
  return true;
}

}  // namespace

void checkAvroSinkRegistry(const SinkSpec& sink, size_t pos) {
  if (!schema_registry::hasRegistry(sink.options)) return;
  checkSinkSchemaCompatible(
      sink, avroSinkSchema(sink.input, sink.name), "AVRO", pos,
      fmt::format("the sink writes a record \"{}\" of the query's columns, each a nullable "
                  "field: give the columns the names and types of the subject's schema, or "
                  "write to another topic",
                  sink.name));
}

std::unique_ptr<RecordDecoder> makeAvroDecoder(const Schema& schema, const Options& options,
                                               const DecodeOptions& decode) {
  return std::make_unique<AvroDecoder>(schema, options, decode.avroConfluent);
}

std::unique_ptr<RecordEncoder> makeAvroEncoder(const SinkSpec& sink) {
  return std::make_unique<AvroEncoder>(sink);
}

struct AvroDatumCodec::Impl {
  explicit Impl(const std::string& json) : holder(json) {
    static char kNothing = 0;
    reader = avro_reader_memory(&kNothing, 0);
    writer = avro_writer_memory(&kNothing, 0);
  }
  ~Impl() {
    if (reader) avro_reader_free(reader);
    if (writer) avro_writer_free(writer);
  }
  AvroValueHolder holder;
  avro_reader_t reader = nullptr;
  avro_writer_t writer = nullptr;
};

AvroDatumCodec::AvroDatumCodec(std::shared_ptr<const AvroSchema> schema)
    : schema_(std::move(schema)), impl_(std::make_unique<Impl>(schema_->json())) {}

AvroDatumCodec::~AvroDatumCodec() = default;

bool AvroDatumCodec::read(std::string_view bytes, const DataType& type, Value& out,
                          std::string& error) {
  DatumCheck check(bytes.data(), bytes.size());
  if (!check.datum(schema_->root())) {
    error = fmt::format("not an Avro datum of the schema: {}", check.error());
    return false;
  }
  avro_value_t& value = impl_->holder.value();
  avro_value_reset(&value);
  avro_reader_memory_set_source(impl_->reader, bytes.data(), static_cast<int64_t>(bytes.size()));
  if (avro_value_read(impl_->reader, &value) != 0) {
    error = fmt::format("not an Avro datum of the schema: {}", avroError());
    return false;
  }
  return toValue(value, schema_->root(), type, out, error);
}

bool AvroDatumCodec::write(const Value& v, const DataType& type, std::string& out,
                           std::string& error) {
  avro_value_t& value = impl_->holder.value();
  avro_value_reset(&value);
  if (!setDatum(value, schema_->root(), v, type, error)) return false;
  size_t size = 0;
  avro_value_sizeof(&value, &size);
  out.resize(size);
  avro_writer_memory_set_dest(impl_->writer, out.data(), static_cast<int64_t>(size));
  if (avro_value_write(impl_->writer, &value) != 0) {
    error = avroError();
    return false;
  }
  return true;
}

}  // namespace rtsql::format
