// floatsWidened and widenFloats (see float_widening.h).
#include "connectors/format/float_widening.h"

#include "common/schema.h"

namespace rtsql::format {

namespace {

// Whether `column` is `field` with FLOATs widened; `widened` says whether one was.
bool sameButFloats(const DataType& field, const DataType& column, bool& widened) {
  if (field.id == TypeId::Float && column.id == TypeId::Double) {
    widened = true;
    return true;
  }
  if (field.id != column.id) return false;
  if (field.id == TypeId::Array)
    return field.element && column.element &&
           sameButFloats(*field.element, *column.element, widened);
  if (field.id == TypeId::Struct) {
    if (field.fields.size() != column.fields.size()) return false;
    for (size_t i = 0; i < field.fields.size(); ++i) {
      if (!iequals(field.fields[i].name, column.fields[i].name) ||
          !sameButFloats(*field.fields[i].type, *column.fields[i].type, widened))
        return false;
    }
    return true;
  }
  return field.equals(column);
}

}  // namespace

bool floatsWidened(const DataType& field, const DataType& column) {
  bool widened = false;
  return sameButFloats(field, column, widened) && widened;
}

void widenFloats(Value& v, const DataType& column) {
  if (v.isNull()) return;
  if (column.id == TypeId::Double && v.type() == TypeId::Float) {
    v = Value::float64(v.asDouble());
  } else if (column.id == TypeId::Array && column.element) {
    ValueList items = v.asList();
    for (Value& item : items) widenFloats(item, *column.element);
    v = Value::array(std::move(items));
  } else if (column.id == TypeId::Struct) {
    ValueList fields = v.asList();
    for (size_t i = 0; i < fields.size() && i < column.fields.size(); ++i)
      widenFloats(fields[i], *column.fields[i].type);
    v = Value::structure(std::move(fields));
  }
}

}  // namespace rtsql::format
