// withDoubleFormatFloats (see format_floats.h).
#include "planner/format_floats.h"

namespace rtsql {

namespace {

// `t` with every FLOAT in it DOUBLE; null when it holds none.
DataTypePtr floatsAsDoubles(const DataTypePtr& t) {
  if (!t) return nullptr;
  switch (t->id) {
    case TypeId::Float:
      return DataType::of(TypeId::Double);
    case TypeId::Array: {
      DataTypePtr element = floatsAsDoubles(t->element);
      return element ? DataType::arrayOf(std::move(element)) : nullptr;
    }
    case TypeId::Map: {
      DataTypePtr key = floatsAsDoubles(t->key);
      DataTypePtr value = floatsAsDoubles(t->value);
      if (!key && !value) return nullptr;
      return DataType::mapOf(key ? key : t->key, value ? value : t->value);
    }
    case TypeId::Struct: {
      bool changed = false;
      std::vector<StructField> fields = t->fields;
      for (StructField& f : fields) {
        if (DataTypePtr d = floatsAsDoubles(f.type)) {
          f.type = std::move(d);
          changed = true;
        }
      }
      return changed ? DataType::structOf(std::move(fields)) : nullptr;
    }
    default:
      return nullptr;
  }
}

}  // namespace

Catalog::SourcePtr withDoubleFormatFloats(const Catalog::SourcePtr& source) {
  if (!source || (source->format != "avro" && source->format != "protobuf")) return source;
  std::shared_ptr<SourceDef> copy;
  for (size_t i = 0; i < source->schema.columns.size(); ++i) {
    DataTypePtr d = floatsAsDoubles(source->schema.columns[i].type);
    if (!d) continue;
    if (!copy) copy = std::make_shared<SourceDef>(*source);
    copy->schema.columns[i].type = std::move(d);
  }
  return copy ? copy : source;
}

}  // namespace rtsql
