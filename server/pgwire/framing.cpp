#include "server/pgwire/framing.h"

#include "common/error.h"

namespace rtsql::pgwire {

void MessageBuilder::cstring(std::string_view s) {
  for (char c : s) {
    if (c != '\0') out_.push_back(c);
  }
  out_.push_back('\0');
}

void MessageBuilder::finish() {
  const auto len = static_cast<uint32_t>(out_.size() - lengthAt_);
  for (int i = 0; i < 4; ++i) {
    out_[lengthAt_ + static_cast<size_t>(i)] = static_cast<char>((len >> (8 * (3 - i))) & 0xFF);
  }
}

void MessageReader::need(size_t n) const {
  if (remaining() < n) {
    throw SqlError(sqlstate::kProtocolViolation, "invalid message format: message is too short");
  }
}

int16_t MessageReader::int16() {
  need(2);
  const auto* p = reinterpret_cast<const unsigned char*>(body_.data() + pos_);
  pos_ += 2;
  return static_cast<int16_t>((p[0] << 8) | p[1]);
}

int32_t MessageReader::int32() {
  need(4);
  const auto* p = reinterpret_cast<const unsigned char*>(body_.data() + pos_);
  pos_ += 4;
  return static_cast<int32_t>(readBigEndian32(p));
}

std::string_view MessageReader::cstring() {
  const size_t end = body_.find('\0', pos_);
  if (end == std::string_view::npos) {
    throw SqlError(sqlstate::kProtocolViolation,
                   "invalid message format: string is not NUL-terminated");
  }
  std::string_view s = body_.substr(pos_, end - pos_);
  pos_ = end + 1;
  return s;
}

std::string_view MessageReader::bytes(size_t n) {
  need(n);
  std::string_view b = body_.substr(pos_, n);
  pos_ += n;
  return b;
}

void MessageReader::expectEnd() const {
  if (!atEnd()) {
    throw SqlError(sqlstate::kProtocolViolation,
                   "invalid message format: unexpected bytes at the end of the message");
  }
}

}  // namespace rtsql::pgwire
