// from_avro and to_avro (see format_functions.h).
//
// from_avro(binary, jsonFormatSchema [, options]) reads each value as one
// Avro binary datum of the schema into the schema's SQL type (the mapping of
// the avro source, avro_schema.h); to_avro(value [, jsonFormatSchema]) writes
// a value as one datum, of the given schema or, without one, of Spark's
// schema for a nullable value of its type (avroValueSchema); NULL is NULL. The schema is a
// constant, read once when the call is bound, with the bounds every Avro
// schema rtsql reads has (depth, size); a schema that is not one is 22023 at
// the call. A value that is not a datum of the schema raises 22023 (Spark's
// MALFORMED_RECORD_IN_PARSING) in the default mode FAILFAST, so that a flow's
// 'on.error' policy takes the record; options map('mode', 'PERMISSIVE')
// gives NULL instead.
//
// from_protobuf(binary, messageName, descriptor [, options]) reads each value
// as one message of the descriptor set's message into a STRUCT of its fields
// (the mapping of the protobuf source, protobuf_schema.h), to_protobuf(struct,
// messageName, descriptor) writes a STRUCT as one. The descriptor set is a
// constant: its bytes (a BINARY, X'...') or the path of its file beneath the
// server's data directory, read once when the call is bound.
#include "connectors/format/format_functions.h"

#include <fmt/format.h>

#include <mutex>
#include <vector>

#include "common/error.h"
#include "common/expr.h"
#include "common/layer_functions.h"
#include "common/schema.h"
#include "connectors/format/avro_datum.h"
#include "connectors/format/avro_schema.h"
#include "connectors/format/protobuf_message.h"
#include "connectors/format/protobuf_schema.h"

namespace rtsql::format {

namespace {

// Codecs of one schema for the threads that evaluate a call at once: each
// evaluation takes one (a new one when none is free) and gives it back, so
// the libavro value it reuses is never shared.
class CodecPool {
 public:
  explicit CodecPool(std::shared_ptr<const AvroSchema> schema) : schema_(std::move(schema)) {
    free_.push_back(std::make_unique<AvroDatumCodec>(schema_));
  }

  class Lease {
   public:
    Lease(CodecPool& pool, std::unique_ptr<AvroDatumCodec> codec)
        : pool_(pool), codec_(std::move(codec)) {}
    ~Lease() { pool_.giveBack(std::move(codec_)); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    AvroDatumCodec& operator*() { return *codec_; }

   private:
    CodecPool& pool_;
    std::unique_ptr<AvroDatumCodec> codec_;
  };

  Lease take() {
    {
      std::lock_guard lock(mu_);
      if (!free_.empty()) {
        auto codec = std::move(free_.back());
        free_.pop_back();
        return Lease(*this, std::move(codec));
      }
    }
    return Lease(*this, std::make_unique<AvroDatumCodec>(schema_));
  }
  const AvroSchema& schema() const { return *schema_; }
  const std::shared_ptr<const AvroSchema>& shared() const { return schema_; }

 private:
  void giveBack(std::unique_ptr<AvroDatumCodec> codec) {
    std::lock_guard lock(mu_);
    free_.push_back(std::move(codec));
  }

  std::shared_ptr<const AvroSchema> schema_;
  std::mutex mu_;
  std::vector<std::unique_ptr<AvroDatumCodec>> free_;
};

// A constant argument's value (NULL included); 42804 at `pos` when the
// argument is not a constant.
Value constantArgument(const std::string& fn, const ExprPtr& arg, const char* what, size_t pos,
                       const char* hint) {
  if (!arg->isConstant()) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("the {} of {} must be a constant", what, fn), pos, hint);
  }
  return arg->eval(Row{});
}

// The Avro schema argument: a constant, non-NULL string, read as an Avro
// schema (22023 at `pos` when it is not one).
std::shared_ptr<const AvroSchema> schemaArgument(const std::string& fn, const ExprPtr& arg,
                                                 size_t pos) {
  static const char* kHint = R"(write the schema as a string literal: '{"type": "int"}')";
  const Value text = constantArgument(fn, arg, "Avro schema", pos, kHint);
  if (text.isNull() || text.type() != TypeId::String) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("the Avro schema of {} must be a string (JSON)", fn), pos, kHint);
  }
  try {
    return AvroSchema::parse(text.asString(), pos);
  } catch (const SqlError& e) {
    // Its reasons name a source's option: here the schema is the argument's.
    std::string message = e.message();
    static constexpr std::string_view kOption = "'avro.schema'";
    if (message.starts_with(kOption))
      message = fmt::format("the Avro schema of {}{}", fn, message.substr(kOption.size()));
    throw SqlError(e.sqlstate(), message, pos, kHint);
  }
}

// from_avro's options: a constant MAP<STRING, STRING> of which rtsql reads
// 'mode' (FAILFAST, the default, or PERMISSIVE); Spark's other options, which
// concern Java's Avro library, are taken and change nothing. True for
// PERMISSIVE.
bool permissiveMode(const std::string& fn, const ExprPtr& arg, size_t pos) {
  static const char* kHint = "write map('mode', 'PERMISSIVE')";
  const Value options = constantArgument(fn, arg, "options", pos, kHint);
  if (arg->type()->id != TypeId::Map) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("the options of {} must be a MAP<STRING, STRING>, not {}", fn,
                               arg->type()->toString()),
                   pos, kHint);
  }
  bool permissive = false;
  if (options.isNull()) return permissive;
  const ValueList& items = options.asList();
  for (size_t i = 0; i + 1 < items.size(); i += 2) {
    if (items[i].isNull() || items[i].toString() != "mode") continue;
    const std::string mode = items[i + 1].isNull() ? "" : items[i + 1].toString();
    if (iequals(mode, "PERMISSIVE")) {
      permissive = true;
    } else if (iequals(mode, "FAILFAST")) {
      permissive = false;
    } else {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("{} does not take mode '{}'", fn, mode), pos,
                     "'mode' is FAILFAST (an error, the default) or PERMISSIVE (NULL)");
    }
  }
  return permissive;
}

// What the four functions share: the value they read or write, evaluated per
// row, and their constant schema and options arguments, kept for EXPLAIN.
class FormatCallExpr : public Expr {
 public:
  FormatCallExpr(DataTypePtr type, const char* name, ExprPtr input, std::vector<ExprPtr> rest)
      : Expr(std::move(type)), name_(name), input_(std::move(input)), rest_(std::move(rest)) {}
  std::string toString() const override {
    std::string s = std::string(name_) + "(" + input_->toString();
    for (const auto& a : rest_) s += ", " + a->toString();
    return s + ")";
  }
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    fn(*input_);
    for (const auto& a : rest_) fn(*a);
  }

 protected:
  // withChildren's children: the input first, then the rest.
  static ExprPtr takeInput(std::vector<ExprPtr>& children) {
    ExprPtr input = std::move(children.front());
    children.erase(children.begin());
    return input;
  }

  const char* name_;
  ExprPtr input_;
  std::vector<ExprPtr> rest_;
};

class FromAvroExpr final : public FormatCallExpr {
 public:
  FromAvroExpr(DataTypePtr type, ExprPtr data, std::shared_ptr<CodecPool> pool,
               std::vector<ExprPtr> rest, bool permissive)
      : FormatCallExpr(std::move(type), "from_avro", std::move(data), std::move(rest)),
        pool_(std::move(pool)),
        permissive_(permissive) {}

  Value eval(const Row& row) const override {
    Value scratch;
    const Value& bytes = input_->evalRef(row, scratch);
    if (bytes.isNull()) return Value();
    Value out;
    std::string error;
    bool ok;
    {
      auto codec = pool_->take();
      ok = (*codec).read(bytes.asString(), *type(), out, error);
    }
    if (ok) return out;
    if (permissive_) return Value();
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("from_avro: malformed record: {}", error), SqlError::npos,
                   "the value is not an Avro datum of the schema; options map('mode', "
                   "'PERMISSIVE') read it as NULL");
  }
  ExprPtr withChildren(std::vector<ExprPtr> children) const override {
    ExprPtr data = takeInput(children);
    return std::make_shared<FromAvroExpr>(type(), std::move(data), pool_, std::move(children),
                                          permissive_);
  }

 private:
  std::shared_ptr<CodecPool> pool_;
  bool permissive_;
};

class ToAvroExpr final : public FormatCallExpr {
 public:
  ToAvroExpr(ExprPtr value, std::shared_ptr<CodecPool> pool, std::vector<ExprPtr> rest)
      : FormatCallExpr(DataType::of(TypeId::Binary), "to_avro", std::move(value), std::move(rest)),
        pool_(std::move(pool)) {}

  Value eval(const Row& row) const override {
    Value scratch;
    const Value& v = input_->evalRef(row, scratch);
    // NULL in, NULL out, as Spark's to_avro.
    if (v.isNull()) return Value();
    std::string bytes;
    std::string error;
    bool ok;
    {
      auto codec = pool_->take();
      ok = (*codec).write(v, *input_->type(), bytes, error);
    }
    if (!ok) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("to_avro: the value does not fit the Avro schema: {}", error),
                     SqlError::npos, "give to_avro a schema whose types hold the value's");
    }
    return Value::binary(std::move(bytes));
  }
  ExprPtr withChildren(std::vector<ExprPtr> children) const override {
    ExprPtr value = takeInput(children);
    return std::make_shared<ToAvroExpr>(std::move(value), pool_, std::move(children));
  }

 private:
  std::shared_ptr<CodecPool> pool_;
};

ExprPtr buildFromAvro(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  const TypeId dataType = args[0]->type()->id;
  if (dataType != TypeId::Binary && dataType != TypeId::Null) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("{} reads BINARY, not {}", name, args[0]->type()->toString()), pos,
                   "CAST(... AS BINARY), or read a BINARY column");
  }
  auto schema = schemaArgument(name, args[1], pos);
  const bool permissive = args.size() > 2 && permissiveMode(name, args[2], pos);
  DataTypePtr type = AvroSchema::sqlType(schema->root(), pos, "");
  std::vector<ExprPtr> rest(args.begin() + 1, args.end());
  return std::make_shared<FromAvroExpr>(std::move(type), args[0],
                                        std::make_shared<CodecPool>(std::move(schema)),
                                        std::move(rest), permissive);
}

ExprPtr buildToAvro(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  ExprPtr value = args[0];
  std::shared_ptr<const AvroSchema> schema;
  if (args.size() > 1) {
    schema = schemaArgument(name, args[1], pos);
    // The value must have the schema's SQL type: what from_avro of the
    // schema gives back (a NULL of any type is cast to it).
    DataTypePtr type = AvroSchema::sqlType(schema->root(), pos, "");
    if (value->type()->id == TypeId::Null) {
      value = makeCast(value, type, pos);
    } else if (!value->type()->equals(*type)) {
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("{} cannot write {} as the Avro schema's {}", name,
                                 value->type()->toString(), type->toString()),
                     pos, fmt::format("CAST the value AS {}", type->toString()));
    }
  } else {
    if (value->type()->id == TypeId::Null)
      value = makeCast(value, DataType::of(TypeId::String), pos);
    try {
      schema = AvroSchema::parse(avroValueSchema(*value->type()), pos);
    } catch (const SqlError& e) {
      throw SqlError(e.sqlstate(), fmt::format("{}: {}", name, e.message()), pos, e.hint());
    }
  }
  std::vector<ExprPtr> rest(args.begin() + 1, args.end());
  return std::make_shared<ToAvroExpr>(std::move(value),
                                      std::make_shared<CodecPool>(std::move(schema)),
                                      std::move(rest));
}

// The directory from_protobuf and to_protobuf read a descriptor file
// beneath: the data directory of the server (installFormatFunctions).
std::mutex& dataDirMu() {
  static std::mutex mu;
  return mu;
}
std::string& dataDir() {
  static std::string dir;
  return dir;
}

// The message name argument: a constant, non-NULL string.
std::string messageArgument(const std::string& fn, const ExprPtr& arg, size_t pos) {
  static const char* kHint = "write the message's full name as a string literal: 'shop.Order'";
  const Value name = constantArgument(fn, arg, "message name", pos, kHint);
  if (name.isNull() || name.type() != TypeId::String) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("the message name of {} must be a string", fn), pos, kHint);
  }
  return name.asString();
}

// The descriptor set argument: its bytes (a constant BINARY), or the path of
// its file beneath the data directory (a constant STRING); then the schema of
// `message` in it (22023 / 42704 / 0A000 at `pos`, ProtobufSchema::parse).
std::shared_ptr<const ProtobufSchema> descriptorArgument(const std::string& fn,
                                                         const ExprPtr& arg,
                                                         const std::string& message,
                                                         size_t pos) {
  static const char* kHint =
      "give the descriptor set protoc writes (--include_imports --descriptor_set_out=FILE) as "
      "X'...', or its path inside the server's data directory";
  const Value desc = constantArgument(fn, arg, "descriptor set", pos, kHint);
  if (desc.isNull() || (desc.type() != TypeId::String && desc.type() != TypeId::Binary)) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("the descriptor set of {} must be a BINARY or a file path", fn),
                   pos, kHint);
  }
  std::string bytes;
  if (desc.type() == TypeId::Binary) {
    bytes = desc.asString();
  } else {
    std::string dir;
    {
      std::lock_guard lock(dataDirMu());
      dir = dataDir();
    }
    if (dir.empty()) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("{} reads a descriptor file only in a server", fn), pos, kHint);
    }
    bytes = readDescriptorBeneath(dir, desc.asString(), pos);
  }
  return ProtobufSchema::parse(bytes, message, pos, pos);
}

class FromProtobufExpr final : public FormatCallExpr {
 public:
  FromProtobufExpr(ExprPtr data, std::shared_ptr<const ProtobufMessageReader> reader,
                   std::vector<ExprPtr> rest, bool permissive)
      : FormatCallExpr(reader->type(), "from_protobuf", std::move(data), std::move(rest)),
        reader_(std::move(reader)),
        permissive_(permissive) {}

  Value eval(const Row& row) const override {
    Value scratch;
    const Value& bytes = input_->evalRef(row, scratch);
    if (bytes.isNull()) return Value();
    Value out;
    std::string error;
    if (reader_->read(bytes.asString(), out, error)) return out;
    if (permissive_) return Value();
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("from_protobuf: malformed record: {}", error), SqlError::npos,
                   "the value is not a message of the descriptor's type; options map('mode', "
                   "'PERMISSIVE') read it as NULL");
  }
  ExprPtr withChildren(std::vector<ExprPtr> children) const override {
    ExprPtr data = takeInput(children);
    return std::make_shared<FromProtobufExpr>(std::move(data), reader_, std::move(children),
                                              permissive_);
  }

 private:
  std::shared_ptr<const ProtobufMessageReader> reader_;
  bool permissive_;
};

class ToProtobufExpr final : public FormatCallExpr {
 public:
  ToProtobufExpr(ExprPtr value, std::shared_ptr<const ProtobufMessageWriter> writer,
                 std::vector<ExprPtr> rest)
      : FormatCallExpr(DataType::of(TypeId::Binary), "to_protobuf", std::move(value), std::move(rest)),
        writer_(std::move(writer)) {}

  Value eval(const Row& row) const override {
    Value scratch;
    const Value& v = input_->evalRef(row, scratch);
    if (v.isNull()) return Value();
    std::string bytes;
    writer_->write(v, bytes);
    return Value::binary(std::move(bytes));
  }
  ExprPtr withChildren(std::vector<ExprPtr> children) const override {
    ExprPtr value = takeInput(children);
    return std::make_shared<ToProtobufExpr>(std::move(value), writer_, std::move(children));
  }

 private:
  std::shared_ptr<const ProtobufMessageWriter> writer_;
};

ExprPtr buildFromProtobuf(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  const TypeId dataType = args[0]->type()->id;
  if (dataType != TypeId::Binary && dataType != TypeId::Null) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("{} reads BINARY, not {}", name, args[0]->type()->toString()), pos,
                   "CAST(... AS BINARY), or read a BINARY column");
  }
  const std::string message = messageArgument(name, args[1], pos);
  auto schema = descriptorArgument(name, args[2], message, pos);
  const bool permissive = args.size() > 3 && permissiveMode(name, args[3], pos);
  std::vector<ExprPtr> rest(args.begin() + 1, args.end());
  return std::make_shared<FromProtobufExpr>(
      args[0], std::make_shared<const ProtobufMessageReader>(std::move(schema)), std::move(rest),
      permissive);
}

ExprPtr buildToProtobuf(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args[0]->type()->id != TypeId::Struct) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("{} writes a STRUCT, not {}", name, args[0]->type()->toString()),
                   pos, "named_struct('field', value, ...) with the message's field names");
  }
  const std::string message = messageArgument(name, args[1], pos);
  auto schema = descriptorArgument(name, args[2], message, pos);
  auto writer = std::make_shared<const ProtobufMessageWriter>(schema, *args[0]->type(), pos);
  std::vector<ExprPtr> rest(args.begin() + 1, args.end());
  return std::make_shared<ToProtobufExpr>(args[0], std::move(writer), std::move(rest));
}

}  // namespace

void installFormatFunctions(const std::string& dataDirectory) {
  {
    std::lock_guard lock(dataDirMu());
    dataDir() = dataDirectory;
  }
  static std::once_flag once;
  std::call_once(once, [] {
    addLayerFunction("from_avro", 2, 3, buildFromAvro);
    addLayerFunction("to_avro", 1, 2, buildToAvro);
    addLayerFunction("from_protobuf", 3, 4, buildFromProtobuf);
    addLayerFunction("to_protobuf", 3, 4, buildToProtobuf);
  });
}

}  // namespace rtsql::format
