// AWS Signature Version 4 (sigv4.h). The canonical request, per AWS's
// documentation of SigV4 for services other than S3:
//
//   METHOD \n canonical path \n canonical query \n canonical headers \n
//   signed headers \n hex(SHA-256(body))
//
// canonical path: the path with "." and ".." segments resolved and repeated
//   slashes collapsed, each byte outside the unreserved set percent-encoded;
// canonical query: each name=value percent-decoded, then encoded, sorted by
//   name and then value;
// canonical headers: lower-case names sorted, values trimmed with runs of
//   spaces made one, the values of a repeated name joined with ',' in order.
#include "connectors/aws/sigv4.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <stdexcept>

#include "common/digest.h"
#include "common/hex.h"

namespace rtsql::aws {

namespace {

bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

// %XX escapes decoded; a malformed escape is kept as it is.
std::string percentDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int hi = hexDigitValue(s[i + 1]);
      const int lo = hexDigitValue(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::string canonicalPath(std::string_view path) {
  std::vector<std::string_view> segments;
  size_t start = path.empty() || path[0] != '/' ? 0 : 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view seg = path.substr(start, end - start);
    if (seg == "..") {
      if (!segments.empty()) segments.pop_back();
    } else if (!seg.empty() && seg != ".") {
      segments.push_back(seg);
    }
    start = end + 1;
  }
  // A path ending in '/' (or in "/." or "/..") keeps its trailing slash.
  const bool trailing = !path.empty() && (path.back() == '/' || path.ends_with("/.") ||
                                          path.ends_with("/.."));
  std::string out;
  for (std::string_view seg : segments) out += "/" + uriEncode(seg, false);
  if (out.empty() || trailing) out += '/';
  return out;
}

std::string canonicalQuery(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> params;
  size_t start = 0;
  while (start < query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    std::string_view pair = query.substr(start, end - start);
    if (!pair.empty()) {
      const size_t eq = pair.find('=');
      std::string_view name = pair.substr(0, eq);
      std::string_view value = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
      params.emplace_back(uriEncode(percentDecode(name), false),
                          uriEncode(percentDecode(value), false));
    }
    start = end + 1;
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out += '&';
    out += name + "=" + value;
  }
  return out;
}

// Trimmed, with each run of whitespace (a folded line's break included) one space.
std::string canonicalValue(std::string_view value) {
  std::string out;
  bool space = false;
  for (char c : value) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool isAmzDate(std::string_view d) {
  if (d.size() != 16 || d[8] != 'T' || d[15] != 'Z') return false;
  for (size_t i = 0; i < 15; ++i) {
    if (i != 8 && (d[i] < '0' || d[i] > '9')) return false;
  }
  return true;
}

}  // namespace

std::string uriEncode(std::string_view text, bool keepSlash) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (unreserved(c) || (keepSlash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string amzDate(int64_t epochSeconds) {
  const auto t = static_cast<std::time_t>(epochSeconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[20];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

Signature sign(Request& request, const Credentials& credentials, std::string_view region,
               std::string_view service) {
  if (!credentials.sessionToken.empty()) {
    request.headers.emplace_back("X-Amz-Security-Token", credentials.sessionToken);
  }
  // Name to values in the order given; std::map sorts the names.
  std::map<std::string, std::vector<std::string>> headers;
  for (const auto& [name, value] : request.headers) {
    headers[lower(name)].push_back(canonicalValue(value));
  }
  auto date = headers.find("x-amz-date");
  if (date == headers.end() || date->second.size() != 1 || !isAmzDate(date->second[0])) {
    throw std::invalid_argument("a SigV4 request needs one X-Amz-Date header of the form "
                                "20150830T123600Z");
  }
  const std::string amz = date->second[0];
  std::string canonicalHeaders, signedHeaders;
  for (const auto& [name, values] : headers) {
    canonicalHeaders += name + ":";
    for (size_t i = 0; i < values.size(); ++i) {
      if (i) canonicalHeaders += ',';
      canonicalHeaders += values[i];
    }
    canonicalHeaders += '\n';
    if (!signedHeaders.empty()) signedHeaders += ';';
    signedHeaders += name;
  }
  Signature s;
  s.canonicalRequest = fmt::format("{}\n{}\n{}\n{}\n{}\n{}", request.method,
                                   canonicalPath(request.path), canonicalQuery(request.query),
                                   canonicalHeaders, signedHeaders,
                                   lowerHex(sha256(request.body)));
  const std::string day = amz.substr(0, 8);
  const std::string scope = fmt::format("{}/{}/{}/aws4_request", day, region, service);
  s.stringToSign = fmt::format("AWS4-HMAC-SHA256\n{}\n{}\n{}", amz, scope,
                               lowerHex(sha256(s.canonicalRequest)));
  std::string key = hmacSha256("AWS4" + credentials.secretAccessKey, day);
  key = hmacSha256(key, region);
  key = hmacSha256(key, service);
  key = hmacSha256(key, "aws4_request");
  s.authorization = fmt::format("AWS4-HMAC-SHA256 Credential={}/{}, SignedHeaders={}, Signature={}",
                                credentials.accessKeyId, scope, signedHeaders,
                                lowerHex(hmacSha256(key, s.stringToSign)));
  return s;
}

}  // namespace rtsql::aws
