// Hexadecimal text of bytes (see hex.h).
#include "common/hex.h"

namespace rtsql {

std::string lowerHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 0xf];
  }
  return out;
}

int hexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool decodeHex(std::string_view text, std::string& out) {
  out.clear();
  out.reserve(text.size() / 2 + 1);
  size_t i = 0;
  if (text.size() % 2 == 1) {
    const int lo = hexDigitValue(text[0]);
    if (lo < 0) return false;
    out += static_cast<char>(lo);
    i = 1;
  }
  for (; i < text.size(); i += 2) {
    const int hi = hexDigitValue(text[i]);
    const int lo = hexDigitValue(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out += static_cast<char>(hi * 16 + lo);
  }
  return true;
}

}  // namespace rtsql
