// The message codec (codec.h) after startup: the simple Query, query results,
// errors and notices, and the extended query protocol's messages.
#include "server/pgwire/codec.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "server/pgwire/extended.h"
#include "server/pgwire/framing.h"

namespace rtsql::pgwire {

namespace {

// The pg_type.typlen of each type we return; -1 marks a variable-length type.
int16_t typeSize(uint32_t oid) {
  switch (oid) {
    case pgtype::kBool:
      return 1;
    case pgtype::kInt4:
    case pgtype::kDate:
      return 4;
    case pgtype::kInt8:
    case pgtype::kFloat8:
    case pgtype::kTimestamp:
    case pgtype::kTimestamptz:
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


std::vector<int16_t> readFormats(MessageReader& in) {
  const int16_t n = in.int16();
  if (n < 0) throw SqlError(sqlstate::kProtocolViolation, "invalid message format: negative count");
  std::vector<int16_t> formats;
  formats.reserve(static_cast<size_t>(n));
  for (int16_t i = 0; i < n; ++i) {
    const int16_t f = in.int16();
    if (f != kTextFormat && f != kBinaryFormat) {
      throw SqlError(sqlstate::kProtocolViolation, fmt::format("unsupported format code: {}", f));
    }
    formats.push_back(f);
  }
  return formats;
}

}  // namespace

// ---- The simple query and its results ----------------------------------------------------

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

// ---- Errors and notices ----------------------------------------------------------------

size_t characterPosition(std::string_view text, size_t byteOffset) {
  const size_t end = std::min(byteOffset, text.size());
  size_t chars = 0;
  for (size_t i = 0; i < end; ++i) {
    // Continuation bytes (10xxxxxx) belong to the character before them.
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++chars;
  }
  return chars + 1;
}

size_t byteOffsetOfPosition(std::string_view text, size_t position) {
  size_t chars = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (chars == position) return i;
    ++chars;
  }
  return text.size();
}

void appendErrorResponse(std::string& out, const SqlError& err, std::string_view query,
                         Severity severity) {
  const char* sev = severity == Severity::kFatal ? "FATAL" : "ERROR";
  MessageBuilder m(out, 'E');
  m.byte('S');
  m.cstring(sev);
  m.byte('V');  // the untranslated severity, which drivers match on
  m.cstring(sev);
  m.byte('C');
  m.cstring(err.sqlstate().empty() ? sqlstate::kInternalError : err.sqlstate());
  m.byte('M');
  m.cstring(err.message());
  if (!err.detail().empty()) {
    m.byte('D');
    m.cstring(err.detail());
  }
  if (!err.hint().empty()) {
    m.byte('H');
    m.cstring(err.hint());
  }
  if (err.hasPosition()) {
    m.byte('P');
    m.cstring(std::to_string(characterPosition(query, err.position())));
  }
  m.byte('\0');
  m.finish();
}

void appendNoticeResponse(std::string& out, std::string_view message) {
  MessageBuilder m(out, 'N');
  m.byte('S');
  m.cstring("NOTICE");
  m.byte('V');
  m.cstring("NOTICE");
  m.byte('C');
  m.cstring("00000");
  m.byte('M');
  m.cstring(message);
  m.byte('\0');
  m.finish();
}

void appendWarningResponse(std::string& out, std::string_view sqlstate, std::string_view message) {
  MessageBuilder m(out, 'N');
  m.byte('S');
  m.cstring("WARNING");
  m.byte('V');
  m.cstring("WARNING");
  m.byte('C');
  m.cstring(sqlstate);
  m.byte('M');
  m.cstring(message);
  m.byte('\0');
  m.finish();
}

// ---- The extended query protocol: frontend ----------------------------------------------

ParseMessage decodeParse(std::string_view body) {
  MessageReader in(body);
  ParseMessage m;
  m.statement = std::string(in.cstring());
  m.query = std::string(in.cstring());
  const int16_t n = in.int16();
  if (n < 0) throw SqlError(sqlstate::kProtocolViolation, "invalid message format: negative count");
  for (int16_t i = 0; i < n; ++i) m.paramTypes.push_back(in.uint32());
  in.expectEnd();
  return m;
}

BindMessage decodeBind(std::string_view body) {
  MessageReader in(body);
  BindMessage m;
  m.portal = std::string(in.cstring());
  m.statement = std::string(in.cstring());
  m.paramFormats = readFormats(in);
  const int16_t n = in.int16();
  if (n < 0) throw SqlError(sqlstate::kProtocolViolation, "invalid message format: negative count");
  for (int16_t i = 0; i < n; ++i) {
    const int32_t len = in.int32();
    if (len == -1) {
      m.params.emplace_back(std::nullopt);
      continue;
    }
    if (len < 0 || static_cast<size_t>(len) > in.remaining()) {
      throw SqlError(sqlstate::kProtocolViolation,
                     fmt::format("invalid message format: parameter length {}", len));
    }
    m.params.emplace_back(std::string(in.bytes(static_cast<size_t>(len))));
  }
  m.resultFormats = readFormats(in);
  in.expectEnd();
  return m;
}

TargetMessage decodeTarget(std::string_view body) {
  MessageReader in(body);
  TargetMessage m;
  const std::string_view kind = in.bytes(1);
  m.kind = kind[0];
  if (m.kind != 'S' && m.kind != 'P') {
    throw SqlError(sqlstate::kProtocolViolation,
                   fmt::format("invalid DESCRIBE/CLOSE message subtype {}",
                               static_cast<int>(static_cast<unsigned char>(m.kind))));
  }
  m.name = std::string(in.cstring());
  in.expectEnd();
  return m;
}

ExecuteMessage decodeExecute(std::string_view body) {
  MessageReader in(body);
  ExecuteMessage m;
  m.portal = std::string(in.cstring());
  m.maxRows = in.int32();
  in.expectEnd();
  return m;
}

// ---- The extended query protocol: backend -----------------------------------------------

namespace {
void appendEmpty(std::string& out, char type) {
  MessageBuilder m(out, type);
  m.finish();
}
}  // namespace

void appendParseComplete(std::string& out) { appendEmpty(out, '1'); }
void appendBindComplete(std::string& out) { appendEmpty(out, '2'); }
void appendCloseComplete(std::string& out) { appendEmpty(out, '3'); }
void appendNoData(std::string& out) { appendEmpty(out, 'n'); }
void appendPortalSuspended(std::string& out) { appendEmpty(out, 's'); }

void appendParameterDescription(std::string& out, const std::vector<uint32_t>& types) {
  MessageBuilder m(out, 't');
  m.int16(static_cast<int16_t>(types.size()));
  for (uint32_t t : types) m.int32(static_cast<int32_t>(t));
  m.finish();
}

void appendDataRowFormatted(std::string& out,
                            const std::vector<std::optional<std::string>>& values,
                            const std::vector<ResultColumn>& columns,
                            const std::vector<int16_t>& formats) {
  const bool anyBinary =
      std::find(formats.begin(), formats.end(), kBinaryFormat) != formats.end();
  if (!anyBinary) return appendDataRow(out, values);
  // Converted before the message is started, so a failure leaves `out` as it was.
  std::vector<std::optional<std::string>> converted(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i]) continue;
    const bool binary = i < formats.size() && formats[i] == kBinaryFormat;
    converted[i] = binary && i < columns.size() ? encodeBinaryValue(*values[i], columns[i].typeOid)
                                                : *values[i];
  }
  appendDataRow(out, converted);
}

}  // namespace rtsql::pgwire
