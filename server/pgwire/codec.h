// The codec of the PostgreSQL v3 messages rtsqld speaks, one small function
// each: decoders from a frontend message body to a struct, and encoders that
// append a complete backend message to an output string. Nothing here knows
// which message may come when: that is the state machine (state_machine.cpp,
// extended_connection.cpp). The startup-phase messages are in startup.cpp,
// the rest in codec.cpp; framing.h holds the byte-level builder and reader
// they use. A connection batches many encoded messages into one buffer and
// writes them with one system call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "server/query_handler.h"

namespace rtsql::pgwire {

// Format codes of parameter and result values.
inline constexpr int16_t kTextFormat = 0;
inline constexpr int16_t kBinaryFormat = 1;

// ---- Frontend: the first packet of a connection -----------------------------

// The first packet has no type byte: a length, then a 32-bit code that is
// either a protocol version (StartupMessage) or one of the request codes.
struct StartupPacket {
  enum class Kind { kStartup, kSslRequest, kGssEncRequest, kCancelRequest };
  Kind kind = Kind::kStartup;
  uint32_t protocolVersion = 0;                                  // kStartup
  std::vector<std::pair<std::string, std::string>> parameters;  // kStartup, in order
  int32_t cancelPid = 0;                                         // kCancelRequest
  int32_t cancelSecret = 0;                                      // kCancelRequest

  // The value of a startup parameter ("user", "database"), if sent.
  std::optional<std::string> parameter(std::string_view name) const;
};

// Decodes the packet after its 4-byte length. Throws SqlError 08P01 when the
// packet is malformed.
StartupPacket decodeStartupPacket(std::string_view body);

// ---- Frontend: after startup -------------------------------------------------

// The SQL text of a simple Query message. Throws SqlError 08P01 when the body is
// not exactly one NUL-terminated string.
std::string decodeQuery(std::string_view body);

// ---- Backend: startup --------------------------------------------------------

void appendAuthenticationOk(std::string& out);
void appendParameterStatus(std::string& out, std::string_view name, std::string_view value);
void appendBackendKeyData(std::string& out, int32_t pid, int32_t secret);
// Tells a client that asked for a newer 3.x minor version, or for protocol
// options (_pq_.*), which minor version and options we actually support.
void appendNegotiateProtocolVersion(std::string& out, int32_t newestMinor,
                                    const std::vector<std::string>& unrecognizedOptions);
void appendReadyForQuery(std::string& out, char transactionStatus);

// ---- Backend: query results --------------------------------------------------

// RowDescription. The type size comes from the OID (-1 for variable-length
// types), as clients such as JDBC read it. `formats` holds each column's format
// code (0 text, 1 binary); empty means text for every column. Throws SqlError
// 54011, leaving `out` as it was, for more columns than the message can count;
// so does appendDataRow.
void appendRowDescription(std::string& out, const std::vector<ResultColumn>& columns,
                          const std::vector<int16_t>& formats = {});
// DataRow; a missing value is SQL NULL (length -1).
void appendDataRow(std::string& out, const std::vector<std::optional<std::string>>& values);
void appendCommandComplete(std::string& out, std::string_view commandTag);
void appendEmptyQueryResponse(std::string& out);

// ---- Backend: errors and notices ---------------------------------------------

enum class Severity { kError, kFatal };

// ErrorResponse with severity, SQLSTATE, message, and where present detail,
// hint and position. `query` is the text the error's byte position refers to;
// the wire carries a 1-based character position, so the byte offset is
// converted by counting UTF-8 characters.
void appendErrorResponse(std::string& out, const SqlError& err, std::string_view query = {},
                         Severity severity = Severity::kError);
void appendNoticeResponse(std::string& out, std::string_view message);
// A NoticeResponse of severity WARNING with its SQLSTATE.
void appendWarningResponse(std::string& out, std::string_view sqlstate, std::string_view message);

// 1-based character position of `byteOffset` in UTF-8 `text` (an offset past the
// end points just after the last character).
size_t characterPosition(std::string_view text, size_t byteOffset);
// Its inverse: the byte offset in `text` of 1-based character `position`, as
// a server reports it (past the end: the text's size).
size_t byteOffsetOfPosition(std::string_view text, size_t position);

// ---- Frontend: the extended query protocol -------------------------------------
// Each decoder throws SqlError 08P01 when the body does not have the layout.

struct ParseMessage {
  std::string statement;
  std::string query;
  std::vector<uint32_t> paramTypes;  // 0 = unspecified
};
ParseMessage decodeParse(std::string_view body);

struct BindMessage {
  std::string portal;
  std::string statement;
  std::vector<int16_t> paramFormats;  // none: all text; one: applies to all
  std::vector<std::optional<std::string>> params;  // nullopt = NULL
  std::vector<int16_t> resultFormats;  // none: all text; one: applies to all
};
BindMessage decodeBind(std::string_view body);

// Describe and Close name a prepared statement ('S') or a portal ('P').
struct TargetMessage {
  char kind = 'S';
  std::string name;
};
TargetMessage decodeTarget(std::string_view body);

struct ExecuteMessage {
  std::string portal;
  int32_t maxRows = 0;  // 0: no limit
};
ExecuteMessage decodeExecute(std::string_view body);

// ---- Backend: the extended query protocol --------------------------------------

void appendParseComplete(std::string& out);
void appendBindComplete(std::string& out);
void appendCloseComplete(std::string& out);
void appendNoData(std::string& out);
void appendPortalSuspended(std::string& out);
void appendParameterDescription(std::string& out, const std::vector<uint32_t>& types);
// DataRow with each value in its column's format (see encodeBinaryValue in
// extended.h).
// Throws SqlError when a value cannot be converted.
void appendDataRowFormatted(std::string& out,
                            const std::vector<std::optional<std::string>>& values,
                            const std::vector<ResultColumn>& columns,
                            const std::vector<int16_t>& formats);

}  // namespace rtsql::pgwire
