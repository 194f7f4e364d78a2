// ErrorResponse and NoticeResponse: a list of (field code, string) pairs ended
// by a zero byte.
#include <algorithm>

#include "server/pgwire/messages.h"
#include "server/pgwire/protocol.h"

namespace rtsql::pgwire {

size_t characterPosition(std::string_view text, size_t byteOffset) {
  const size_t end = std::min(byteOffset, text.size());
  size_t chars = 0;
  for (size_t i = 0; i < end; ++i) {
    // Continuation bytes (10xxxxxx) belong to the character before them.
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++chars;
  }
  return chars + 1;
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

}  // namespace rtsql::pgwire
