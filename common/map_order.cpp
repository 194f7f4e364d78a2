// containsMap (see map_order.h).
#include "common/map_order.h"

#include <fmt/format.h>

#include "common/error.h"

namespace rtsql {

bool containsMap(const DataType& type) {
  if (type.id == TypeId::Map) return true;
  if (type.element && containsMap(*type.element)) return true;
  for (const StructField& f : type.fields)
    if (f.type && containsMap(*f.type)) return true;
  return false;
}

void refuseMapValues(const DataType& type, std::string_view what, size_t pos,
                     std::string_view hint) {
  if (!containsMap(type)) return;
  throw SqlError(sqlstate::kDatatypeMismatch,
                 fmt::format("{} cannot compare {} values: a MAP has no order or equality", what,
                             type.toString()),
                 pos, std::string(hint));
}

}  // namespace rtsql
