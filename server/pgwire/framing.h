// Framing for the PostgreSQL v3 wire protocol: the constants that identify
// messages, a builder that writes one length-prefixed backend message, and a
// bounds-checked reader for the body of a frontend message. Everything here is
// plain byte work with no sockets, so it is tested on strings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace rtsql::pgwire {

// Protocol version 3.0 as sent in a StartupMessage (major << 16 | minor).
inline constexpr uint32_t kProtocolV3 = 3u << 16;
// Request codes that take the place of a protocol version in the first packet.
inline constexpr uint32_t kCancelRequestCode = 80877102;
inline constexpr uint32_t kSslRequestCode = 80877103;
inline constexpr uint32_t kGssEncRequestCode = 80877104;
// PostgreSQL refuses startup packets above this size; so do we, before any
// session exists, so a stranger cannot make us allocate much.
inline constexpr size_t kMaxStartupPacketBytes = 10000;

// Frontend message types we recognise after startup.
namespace frontend {
inline constexpr char kQuery = 'Q';
inline constexpr char kTerminate = 'X';
inline constexpr char kParse = 'P';
inline constexpr char kBind = 'B';
inline constexpr char kDescribe = 'D';
inline constexpr char kExecute = 'E';
inline constexpr char kClose = 'C';
inline constexpr char kSync = 'S';
inline constexpr char kFlush = 'H';
inline constexpr char kFunctionCall = 'F';
inline constexpr char kCopyData = 'd';
inline constexpr char kCopyDone = 'c';
inline constexpr char kCopyFail = 'f';
inline constexpr char kPassword = 'p';
}  // namespace frontend

// Transaction status reported in ReadyForQuery before a session has any (the
// handler's transactionStatus() tells it after).
inline constexpr char kTxIdle = 'I';

// Appends one backend message to a string: a type byte, a 4-byte big-endian
// length that counts itself and the body, then the body. The length is patched
// in by finish(), so the body can be written piece by piece.
class MessageBuilder {
 public:
  MessageBuilder(std::string& out, char type) : out_(out) {
    out_.push_back(type);
    lengthAt_ = out_.size();
    out_.append(4, '\0');
  }
  MessageBuilder(const MessageBuilder&) = delete;
  MessageBuilder& operator=(const MessageBuilder&) = delete;

  void int16(int16_t v) { putBigEndian(static_cast<uint16_t>(v), 2); }
  void int32(int32_t v) { putBigEndian(static_cast<uint32_t>(v), 4); }
  void byte(char c) { out_.push_back(c); }
  void bytes(std::string_view b) { out_.append(b); }
  // A NUL-terminated string. An embedded NUL would end the string early and
  // desynchronise the client's parser, so embedded NULs are dropped.
  void cstring(std::string_view s);
  void finish();

 private:
  void putBigEndian(uint32_t v, int n) {
    for (int i = n - 1; i >= 0; --i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }

  std::string& out_;
  size_t lengthAt_;
};

// Reads fields from a frontend message body; any read past the end or a string
// without its terminating NUL throws SqlError 08P01 (protocol violation).
class MessageReader {
 public:
  explicit MessageReader(std::string_view body) : body_(body) {}

  int16_t int16();
  int32_t int32();
  uint32_t uint32() { return static_cast<uint32_t>(int32()); }
  std::string_view cstring();
  // The next `n` bytes as they are.
  std::string_view bytes(size_t n);
  bool atEnd() const { return pos_ >= body_.size(); }
  size_t remaining() const { return body_.size() - pos_; }
  // Throws unless the whole body was consumed: trailing bytes mean the client
  // and we disagree about the message layout.
  void expectEnd() const;

 private:
  void need(size_t n) const;

  std::string_view body_;
  size_t pos_ = 0;
};

// Reads a 4-byte big-endian length as it appears in message headers.
inline uint32_t readBigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace rtsql::pgwire
