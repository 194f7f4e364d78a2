// The simple query cycle: Query in; RowDescription, DataRow, CommandComplete and
// EmptyQueryResponse out.
#include <fmt/format.h>

#include "common/error.h"
#include "server/pgwire/messages.h"
#include "server/pgwire/protocol.h"

namespace rtsql::pgwire {

namespace {

// The pg_type.typlen of each type we return; -1 marks a variable-length type.
int16_t typeSize(uint32_t oid) {
  switch (oid) {
    case pgtype::kBool:
      return 1;
    case pgtype::kInt4:
      return 4;
    case pgtype::kInt8:
    case pgtype::kFloat8:
    case pgtype::kTimestamp:
      return 8;
    case pgtype::kInterval:
      return 16;
    default:
      return -1;
  }
}

// RowDescription and DataRow count their columns in a signed 16-bit field.
// The binder allows far fewer columns (planner.h, kMaxSelectListEntries); this
// guard keeps any other producer of a wide result from breaking the framing.
void checkColumnCount(size_t count) {
  constexpr size_t kMaxWireColumns = 32767;
  if (count <= kMaxWireColumns) return;
  throw SqlError(sqlstate::kTooManyColumns,
                 fmt::format("a result of {} columns does not fit the protocol (at most {})", count,
                             kMaxWireColumns));
}

}  // namespace

std::string decodeQuery(std::string_view body) {
  MessageReader in(body);
  std::string sql(in.cstring());
  in.expectEnd();
  return sql;
}

void appendRowDescription(std::string& out, const std::vector<ResultColumn>& columns,
                          const std::vector<int16_t>& formats) {
  checkColumnCount(columns.size());
  MessageBuilder m(out, 'T');
  m.int16(static_cast<int16_t>(columns.size()));
  for (size_t i = 0; i < columns.size(); ++i) {
    const ResultColumn& col = columns[i];
    m.cstring(col.name);
    m.int32(0);  // not a table column
    m.int16(0);  // attribute number
    m.int32(static_cast<int32_t>(col.typeOid));
    m.int16(typeSize(col.typeOid));
    m.int32(-1);  // no type modifier
    m.int16(i < formats.size() ? formats[i] : int16_t{0});
  }
  m.finish();
}

void appendDataRow(std::string& out, const std::vector<std::optional<std::string>>& values) {
  checkColumnCount(values.size());
  MessageBuilder m(out, 'D');
  m.int16(static_cast<int16_t>(values.size()));
  for (const auto& v : values) {
    if (!v) {
      m.int32(-1);
      continue;
    }
    m.int32(static_cast<int32_t>(v->size()));
    m.bytes(*v);
  }
  m.finish();
}

void appendCommandComplete(std::string& out, std::string_view commandTag) {
  MessageBuilder m(out, 'C');
  m.cstring(commandTag);
  m.finish();
}

void appendEmptyQueryResponse(std::string& out) {
  MessageBuilder m(out, 'I');
  m.finish();
}

}  // namespace rtsql::pgwire
