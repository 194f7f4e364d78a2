#include "common/file_name.h"

#include <fmt/format.h>

#include <filesystem>

#include "common/digest.h"
#include "common/error.h"

namespace rtsql {

namespace {

bool keptAsIs(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// Hex digits of the first 16 bytes of the encoding's SHA-256.
constexpr size_t kHashHexDigits = 32;

}  // namespace

std::string fileNameOf(std::string_view name) {
  if (name.empty()) return "%";
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(name.size());
  // Where the prefix of an over-long encoding ends: the last byte boundary
  // that leaves room for the '~' and the hash, so that no "%XX" is cut.
  const size_t prefixMax = kMaxFileNameBytes - 1 - kHashHexDigits;
  size_t prefixEnd = 0;
  for (unsigned char c : name) {
    if (keptAsIs(c)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
    if (out.size() <= prefixMax) prefixEnd = out.size();
  }
  if (out.size() <= kMaxFileNameBytes) return out;
  const std::string digest = sha256(out);
  std::string shortened = out.substr(0, prefixEnd);
  shortened += '~';
  for (size_t i = 0; i < kHashHexDigits / 2; ++i) {
    const auto byte = static_cast<unsigned char>(digest[i]);
    shortened += kHex[byte >> 4];
    shortened += kHex[byte & 0xF];
  }
  return shortened;
}

std::string childPath(const std::string& dir, std::string_view component) {
  if (component.empty() || component == "." || component == ".." ||
      component.find('/') != std::string_view::npos || component.find('\0') != std::string_view::npos) {
    throw InternalError(fmt::format("'{}' is not a single file name", component));
  }
  return (std::filesystem::path(dir) / std::filesystem::path(std::string(component))).string();
}

}  // namespace rtsql
