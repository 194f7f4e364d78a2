// StartupMessage, SSLRequest, GSSENCRequest and CancelRequest decoding, and the
// messages the server sends while a session starts.
#include "common/error.h"
#include "server/pgwire/codec.h"
#include "server/pgwire/framing.h"

namespace rtsql::pgwire {

std::optional<std::string> StartupPacket::parameter(std::string_view name) const {
  for (const auto& [key, value] : parameters) {
    if (key == name) return value;
  }
  return std::nullopt;
}

StartupPacket decodeStartupPacket(std::string_view body) {
  MessageReader in(body);
  StartupPacket packet;
  const uint32_t code = in.uint32();
  switch (code) {
    case kSslRequestCode:
      packet.kind = StartupPacket::Kind::kSslRequest;
      in.expectEnd();
      return packet;
    case kGssEncRequestCode:
      packet.kind = StartupPacket::Kind::kGssEncRequest;
      in.expectEnd();
      return packet;
    case kCancelRequestCode:
      packet.kind = StartupPacket::Kind::kCancelRequest;
      packet.cancelPid = in.int32();
      packet.cancelSecret = in.int32();
      // Newer clients may send a longer cancel key; we only ever hand out
      // 4-byte keys, so anything longer cannot match and is ignored.
      return packet;
    default:
      break;
  }
  packet.kind = StartupPacket::Kind::kStartup;
  packet.protocolVersion = code;
  // Parameters are name/value string pairs ended by an empty name. Only version
  // 3 packets have this layout; others are rejected by the caller on the
  // version alone, so their bodies are not parsed.
  if ((code >> 16) != 3) return packet;
  for (;;) {
    std::string_view name = in.cstring();
    if (name.empty()) break;
    std::string_view value = in.cstring();
    packet.parameters.emplace_back(std::string(name), std::string(value));
  }
  in.expectEnd();
  return packet;
}

void appendAuthenticationOk(std::string& out) {
  MessageBuilder m(out, 'R');
  m.int32(0);
  m.finish();
}

void appendParameterStatus(std::string& out, std::string_view name, std::string_view value) {
  MessageBuilder m(out, 'S');
  m.cstring(name);
  m.cstring(value);
  m.finish();
}

void appendBackendKeyData(std::string& out, int32_t pid, int32_t secret) {
  MessageBuilder m(out, 'K');
  m.int32(pid);
  m.int32(secret);
  m.finish();
}

void appendNegotiateProtocolVersion(std::string& out, int32_t newestMinor,
                                    const std::vector<std::string>& unrecognizedOptions) {
  MessageBuilder m(out, 'v');
  m.int32(newestMinor);
  m.int32(static_cast<int32_t>(unrecognizedOptions.size()));
  for (const auto& option : unrecognizedOptions) m.cstring(option);
  m.finish();
}

void appendReadyForQuery(std::string& out, char transactionStatus) {
  MessageBuilder m(out, 'Z');
  m.byte(transactionStatus);
  m.finish();
}

}  // namespace rtsql::pgwire
