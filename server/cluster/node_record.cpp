#include "server/cluster/node_record.h"

#include <cctype>

namespace rtsql {

std::string encodeNodeRecord(const NodeRecord& record) {
  std::string out = record.node;
  if (!record.pgAddress.empty()) out += "\npg=" + record.pgAddress;
  return out;
}

std::optional<NodeRecord> decodeNodeRecord(std::string_view bytes) {
  if (bytes.empty() || bytes.size() > kMaxNodeRecordBytes) return std::nullopt;
  NodeRecord out;
  size_t eol = bytes.find('\n');
  out.node = std::string(bytes.substr(0, eol));
  if (out.node.empty()) return std::nullopt;
  while (eol != std::string_view::npos) {
    const size_t start = eol + 1;
    eol = bytes.find('\n', start);
    const std::string_view field =
        bytes.substr(start, eol == std::string_view::npos ? eol : eol - start);
    if (field.substr(0, 3) == "pg=" && validNodeAddress(field.substr(3)))
      out.pgAddress = std::string(field.substr(3));
  }
  return out;
}

bool validNodeAddress(std::string_view address) {
  if (address.empty() || address.size() > 300) return false;
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view host = address.substr(0, colon);
  const std::string_view port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5) return false;
  int value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  if (value < 1 || value > 65535) return false;
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return false;
    for (char c : host.substr(1, host.size() - 2)) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return false;
    }
    return true;
  }
  for (char c : host) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_')
      return false;
  }
  return true;
}

std::pair<std::string, std::string> splitNodeAddress(std::string_view address) {
  const size_t colon = address.rfind(':');
  std::string_view host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  return {std::string(host), std::string(address.substr(colon + 1))};
}

}  // namespace rtsql
